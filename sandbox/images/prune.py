"""Remove what must not be in the sandbox image and write the image's manifest (stdlib only).

Run by both builders with the image's own Python, after the packages are installed:
``/opt/venv/bin/python prune.py manifest.json /etc/referee-sandbox/manifest.json``
(``sandbox/image.py`` in the debootstrap chroot, ``images/Dockerfile`` in a RUN step), so that
both images lack the same files. A listed path that is missing fails the build: a package that
moved its data must not silently bring it back.
"""

import importlib.metadata
import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path


def package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)  # finds, does not import
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"prune: package {name} is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


def prune(entry: dict) -> list[str]:
    base = package_dir(entry["package"]) / entry["path"]
    if not base.is_dir():
        raise SystemExit(f"prune: {base} does not exist (did {entry['package']} move its data?)")
    removed = []
    for child in sorted(base.iterdir()):
        if child.name in entry.get("keep", []):
            continue
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()
        removed.append(str(child))
    return removed


def debian_packages() -> list[str]:
    try:
        listing = subprocess.run(
            ["dpkg-query", "-W", "-f", "${Package}=${Version}\\n"], capture_output=True, text=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return []
    return sorted(line for line in listing.splitlines() if line)


def main() -> None:
    spec = json.loads(Path(sys.argv[1]).read_text())
    removed = [{**entry, "removed": prune(entry)} for entry in spec["removed"]]
    manifest = {
        "python": sys.version.split()[0],
        "python_packages": sorted(
            f"{dist.metadata['Name']}=={dist.version}" for dist in importlib.metadata.distributions()
        ),
        "debian_packages": debian_packages(),
        "removed": removed,
    }
    target = Path(sys.argv[2])
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"prune: removed {sum(len(e['removed']) for e in removed)} paths; manifest at {target}")


if __name__ == "__main__":
    main()
