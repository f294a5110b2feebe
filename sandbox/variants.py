"""Image variants: the sandbox image plus a task's own Python requirements (MLGym's lists).

A variant is named by the hash of its inputs, `referee-sandbox-variant:<hash>`, over the base
image's tag and the requirement lines (normalised: stripped, comments and blanks dropped, sorted),
so tasks with the same needs share one image and a change of either builds a new one. It is built
the way the base image is, from the package registry and nothing else: the wheels are resolved and
downloaded on the host (`pip download`, binary wheels for the sandbox's Python and platform, with
their dependencies), then a build of a two-line Dockerfile FROM the local base image installs them
with `pip --no-index` (no network inside the build, no registry of images needed). The lines and the
resolved wheels are kept in the image's labels, which the task page shows.

The build runs on the engine the sandbox backend uses: `docker build`, or on the podman backend (a
Slurm node without a Docker daemon) `podman build --pull=never` in the same mode as its sessions,
FROM the base image in podman's store. The tag does not depend on the engine, so a Docker node and a
Podman node agree on names, and a podman node whose Docker engine already holds the variant loads it.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from types import ModuleType

from sandbox import conf
from sandbox.base import LABEL, SandboxError, SandboxUnavailable
from sandbox.recipe import PLATFORMS, USER_UID

REPOSITORY = "referee-sandbox-variant"
REQUIREMENTS_LABEL = f"{LABEL}.requirements"
WHEELS_LABEL = f"{LABEL}.wheels"
BASE_LABEL = f"{LABEL}.base"
DOWNLOAD_TIMEOUT = 1800

DOCKERFILE = f"""FROM {{base}}
USER root
COPY wheels /tmp/wheels
RUN /opt/venv/bin/pip install --no-cache-dir --no-index --disable-pip-version-check \\
      --find-links /tmp/wheels -r /tmp/wheels/requirements.txt \\
 && rm -rf /tmp/wheels
USER {USER_UID}:{USER_UID}
"""

Log = Callable[[str], None]


class VariantBuildError(SandboxError):
    pass


def requirement_lines(lines: Iterable[str]) -> list[str]:
    """The lines that name packages: no comments, blanks or duplicates; sorted."""
    kept = set()
    for raw in lines:
        line = raw.split("#", 1)[0].strip()
        if line:
            kept.add(line)
    return sorted(kept)


def variant_tag(requirements: Iterable[str], *, base: str | None = None) -> str:
    """The tag of the base image plus these requirements; the base image itself for none."""
    base = base or conf.image()
    lines = requirement_lines(requirements)
    if not lines:
        return base
    digest = hashlib.sha256("\0".join([base, *lines]).encode()).hexdigest()[:12]
    return f"{REPOSITORY}:{digest}"


def _download(lines: list[str], wheels: Path, log: Log) -> None:
    (wheels / "requirements.txt").write_text("\n".join(lines) + "\n")
    cmd = [sys.executable, "-m", "pip", "download", "--only-binary=:all:", "--disable-pip-version-check"]
    cmd += ["--python-version", "3.11", "--implementation", "cp", "--abi", "cp311"]
    for platform in PLATFORMS:
        cmd += ["--platform", platform]
    cmd += ["-d", str(wheels), "-r", str(wheels / "requirements.txt")]
    log("$ " + " ".join(cmd))
    try:
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=DOWNLOAD_TIMEOUT)
    except subprocess.TimeoutExpired as exc:
        raise VariantBuildError(f"pip download of {', '.join(lines)} took over {DOWNLOAD_TIMEOUT} s") from exc
    if result.returncode != 0:
        tail = (result.stdout + result.stderr).strip()[-2000:]
        raise VariantBuildError(f"pip could not get the task's requirements ({', '.join(lines)}):\n{tail}")


def engine(backend: str | None = None) -> ModuleType:
    """The module that speaks to the image store of the backend: sandbox.podman or sandbox.docker;
    refused on a backend that runs no images (bwrap runs the host's own files)."""
    name = backend or conf.backend_name()
    if name not in ("docker", "podman"):
        raise SandboxUnavailable(f"the {name} backend runs no images, so it has no image variants")
    if name == "podman":
        from sandbox import podman

        return podman
    from sandbox import docker

    return docker


def _base_ready(store: ModuleType, base: str, log: Log) -> None:
    """The base image in the engine's store: podman loads it from this node's Docker engine, else
    says which command puts it there; Docker has it or names build_sandbox_image."""
    if store.__name__ == "sandbox.podman":
        store.ensure_image(base, log=log)  # its error names `build_sandbox_image --engine podman`
    elif not store.image_exists(base):
        raise VariantBuildError(f"the base image {base} is missing: run manage.py build_sandbox_image first")


def _loaded(store: ModuleType, tag: str, log: Log) -> bool:
    """The variant already in the store, or loaded there from this node's Docker engine (podman)."""
    if store.image_exists(tag):
        return True
    return store.__name__ == "sandbox.podman" and store.load_from_docker(tag, log)


def variant_build(
    requirements: Iterable[str], *, log: Log = print, base: str | None = None, backend: str | None = None
) -> str:
    """The variant's tag, built if it is missing (one build at a time per machine; others wait and
    reuse), in the image store of ``backend`` (the configured sandbox backend by default)."""
    store = engine(backend)
    base = base or conf.image()
    lines = requirement_lines(requirements)
    tag = variant_tag(lines, base=base)
    if tag == base or store.image_exists(tag):
        return tag
    conf.cache_dir().mkdir(parents=True, exist_ok=True)
    with (conf.cache_dir() / ".variant-lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _loaded(store, tag, log):
            log(f"image {tag} exists, reused")
            return tag
        _base_ready(store, base, log)
        started = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="variant-", dir=conf.cache_dir()) as scratch:
            context = Path(scratch)
            # Public wheels only: readable by a rootless podman that runs as another account.
            context.chmod(0o755)
            wheels = context / "wheels"
            wheels.mkdir(mode=0o755)
            _download(lines, wheels, log)
            (context / "Dockerfile").write_text(DOCKERFILE.format(base=base))
            for path in context.rglob("*"):
                path.chmod(path.stat().st_mode | 0o444)
            resolved = sorted(path.name for path in wheels.glob("*.whl"))
            labels = {
                REQUIREMENTS_LABEL: json.dumps(lines),
                WHEELS_LABEL: json.dumps(resolved),
                BASE_LABEL: base,
            }
            log(f"building {tag}: {base} + {', '.join(lines)} ({len(resolved)} wheels, {store.__name__})")
            store.build_from_dockerfile(context, tag, labels=labels, log=log, offline=True)
            shutil.rmtree(wheels, ignore_errors=True)
        log(f"image {tag} built in {time.monotonic() - started:.1f}s")
        return tag


def variant_state(requirements: Iterable[str], *, backend: str | None = None) -> dict[str, object]:
    """What the task page says of a task's image: its tag, whether it is built (in the store of the
    engine the backend uses), and what it holds."""
    lines = requirement_lines(requirements)
    tag = variant_tag(lines)
    name = backend or conf.backend_name()
    try:
        store = engine(name)
    except SandboxUnavailable as exc:
        return {
            "tag": tag,
            "requirements": lines,
            "built": None,
            "detail": f"{exc}: tasks with requirements do not run here",
        }
    try:
        built = store.image_exists(tag)
        labels = store.image_labels(tag) if built else {}
    except Exception as exc:  # no engine here: say so, do not fail the page
        what = "podman" if name == "podman" else "the Docker engine"
        return {"tag": tag, "requirements": lines, "built": None, "detail": f"{what} does not answer: {exc}"}
    return {
        "tag": tag,
        "requirements": lines,
        "built": built,
        "wheels": json.loads(labels.get(WHEELS_LABEL, "[]")),
        "variant": tag != conf.image(),
    }
