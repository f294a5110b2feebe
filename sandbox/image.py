"""Build the sandbox image without a registry: debootstrap + wheels + ``docker import``.

The image is tagged ``referee-sandbox:<hash of its inputs>`` (this recipe, the Debian package
list and the pinned requirements), so it is built once per change and reused afterwards.
The debootstrap rootfs and the downloaded wheels are cached under ``var/sandbox-image``.
``sandbox/images/Dockerfile`` builds the same content for users who have a registry.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from sandbox import conf

IMAGES_DIR = Path(__file__).resolve().parent / "images"
REQUIREMENTS = IMAGES_DIR / "requirements.txt"
# What is removed from the image (bundled datasets the hidden splits come from) and why; the
# same prune.py runs in both builders and writes the image's manifest to MANIFEST_PATH.
PRUNE_SPEC = IMAGES_DIR / "manifest.json"
PRUNE_SCRIPT = IMAGES_DIR / "prune.py"
MANIFEST_PATH = "/etc/referee-sandbox/manifest.json"
REPOSITORY = "referee-sandbox"
SUITE = "bookworm"
MIRROR = os.environ.get("SANDBOX_DEBIAN_MIRROR", "http://deb.debian.org/debian")
# Debian packages beyond minbase: the interpreter (3.11 on bookworm), venv for pip, and procps
# so that agents (and our tests) can see their processes.
DEBIAN_PACKAGES = ("python3", "python3-venv", "procps")
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64", "any")
USER_UID = 1000
# Bump when the steps below change what ends up in the image.
RECIPE_VERSION = "4"
PATH_ENV = "/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
CHANGES = (
    f"ENV PATH={PATH_ENV}",
    "ENV LANG=C.UTF-8",
    "ENV HOME=/workspace",
    f"USER {USER_UID}:{USER_UID}",
    "WORKDIR /workspace",
    'CMD ["/bin/bash"]',
)

Log = Callable[[str], None]


class ImageBuildError(RuntimeError):
    pass


def inputs_hash() -> str:
    digest = hashlib.sha256()
    for part in (RECIPE_VERSION, SUITE, " ".join(DEBIAN_PACKAGES), " ".join(CHANGES)):
        digest.update(part.encode() + b"\0")
    for path in (REQUIREMENTS, PRUNE_SPEC, PRUNE_SCRIPT):
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:12]


def default_tag() -> str:
    return f"{REPOSITORY}:{inputs_hash()}"


def requirement_lines() -> list[str]:
    lines = []
    for raw in REQUIREMENTS.read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            lines.append(line)
    return lines


def _run(cmd: list[str], log: Log, **kwargs: object) -> None:
    log("$ " + " ".join(cmd))
    result = subprocess.run(cmd, capture_output=True, text=True, **kwargs)  # type: ignore[call-overload]
    if result.returncode != 0:
        tail = (result.stdout + result.stderr)[-3000:]
        raise ImageBuildError(f"{cmd[0]} failed with exit code {result.returncode}:\n{tail}")


def download_wheels(wheels: Path, log: Log) -> None:
    """Fetch the pinned wheels on the host (pip in the chroot has no certificates/config)."""
    wheels.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
    cmd += ["--python-version", "3.11", "--implementation", "cp", "--abi", "cp311"]
    for platform in PLATFORMS:
        cmd += ["--platform", platform]
    cmd += ["-d", str(wheels), "-r", str(REQUIREMENTS)]
    _run(cmd, log)


def debootstrap(rootfs: Path, log: Log) -> None:
    if rootfs.exists():
        shutil.rmtree(rootfs)
    cmd = ["debootstrap", "--variant=minbase", "--include=" + ",".join(DEBIAN_PACKAGES)]
    _run([*cmd, SUITE, str(rootfs), MIRROR], log)


def _chroot_env() -> dict[str, str]:
    # A clean environment: the host's PIP_* and certificate settings mean nothing inside.
    return {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root", "LANG": "C.UTF-8"}


def install_packages(rootfs: Path, wheels: Path, log: Log) -> None:
    staged = rootfs / "tmp" / "wheels"
    shutil.rmtree(staged, ignore_errors=True)
    staged.mkdir(parents=True)
    names = set()
    for line in requirement_lines():
        name, _, version = line.partition("==")
        names.add((name.lower().replace("-", "_"), version))
    for wheel in wheels.glob("*.whl"):
        dist, version = wheel.name.split("-")[:2]
        if (dist.lower().replace("-", "_"), version) in names:
            shutil.copy2(wheel, staged / wheel.name)
    shutil.copy2(REQUIREMENTS, staged / "requirements.txt")
    env = _chroot_env()
    _run(["chroot", str(rootfs), "python3", "-m", "venv", "/opt/venv"], log, env=env)
    pip = ["chroot", str(rootfs), "/opt/venv/bin/pip", "install", "--no-index", "--no-deps"]
    pip += ["--disable-pip-version-check", "--find-links", "/tmp/wheels"]
    _run([*pip, "-r", "/tmp/wheels/requirements.txt"], log, env=env)
    shutil.rmtree(staged)


def prune(rootfs: Path, log: Log) -> None:
    """Remove the bundled datasets (images/manifest.json) and write the image's manifest."""
    staged = rootfs / "tmp" / "prune"
    shutil.rmtree(staged, ignore_errors=True)
    staged.mkdir(parents=True)
    shutil.copy2(PRUNE_SCRIPT, staged / "prune.py")
    shutil.copy2(PRUNE_SPEC, staged / "manifest.json")
    command = ["/opt/venv/bin/python", "/tmp/prune/prune.py", "/tmp/prune/manifest.json", MANIFEST_PATH]
    _run(["chroot", str(rootfs), *command], log, env=_chroot_env())
    shutil.rmtree(staged)


def finish_rootfs(rootfs: Path, log: Log) -> None:
    """Add the unprivileged user, the workspace, and drop caches to keep the import small."""
    log("adding user sandbox, /workspace; removing apt caches and docs")
    entries = {
        "etc/passwd": f"sandbox:x:{USER_UID}:{USER_UID}:sandbox:/workspace:/bin/bash\n",
        "etc/group": f"sandbox:x:{USER_UID}:\n",
    }
    for name, line in entries.items():
        path = rootfs / name
        if line not in path.read_text():  # a resumed build must not add the user twice
            with path.open("a") as fh:
                fh.write(line)
    workspace = rootfs / "workspace"
    workspace.mkdir(exist_ok=True)
    os.chown(workspace, USER_UID, USER_UID)
    for junk in ("var/cache/apt/archives", "var/lib/apt/lists", "usr/share/doc", "usr/share/man"):
        path = rootfs / junk
        if path.is_dir():
            for child in path.iterdir():
                if child.is_dir() and not child.is_symlink():
                    shutil.rmtree(child, ignore_errors=True)
                elif child.name != "lock":
                    child.unlink(missing_ok=True)


def build_rootfs(workdir: Path, log: Log) -> Path:
    """Stages with markers, so an interrupted build resumes where it stopped."""
    rootfs = workdir / "rootfs"
    wheels = conf.cache_dir() / "wheels"
    stages: list[tuple[str, Callable[[], None]]] = [
        ("debootstrap", lambda: debootstrap(rootfs, log)),
        ("wheels", lambda: download_wheels(wheels, log)),
        ("packages", lambda: install_packages(rootfs, wheels, log)),
        ("prune", lambda: prune(rootfs, log)),
        ("finish", lambda: finish_rootfs(rootfs, log)),
    ]
    for name, step in stages:
        marker = workdir / f".done-{name}"
        if marker.exists():
            log(f"stage {name}: cached")
            continue
        started = time.monotonic()
        step()
        marker.touch()
        log(f"stage {name}: {time.monotonic() - started:.1f}s")
    return rootfs


def cached_rootfs() -> Path | None:
    """The finished debootstrap rootfs of the current image, if this machine built it: what
    SANDBOX_BWRAP_ROOTFS can point at for bwrap sandboxes with the image's packages."""
    workdir = conf.cache_dir() / inputs_hash()
    return workdir / "rootfs" if (workdir / ".done-finish").exists() else None


def build_image(*, force: bool = False, log: Log = print) -> str:
    """Return the tag of the sandbox image, building and importing it if it is missing."""
    from sandbox import docker as sandbox_docker

    tag = default_tag()
    if not force and sandbox_docker.image_exists(tag):
        log(f"image {tag} exists, reused")
        return tag
    if os.geteuid() != 0:
        raise ImageBuildError("build_sandbox_image needs root (debootstrap and chroot)")
    workdir = conf.cache_dir() / inputs_hash()
    workdir.mkdir(parents=True, exist_ok=True)
    with (conf.cache_dir() / ".lock").open("w") as lock:
        # One build at a time (tests, bench and a worker may all ask); the rest then reuse it.
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not force and sandbox_docker.image_exists(tag):
            log(f"image {tag} exists, reused")
            return tag
        return _build_locked(workdir, tag, force=force, log=log)


def _build_locked(workdir: Path, tag: str, *, force: bool, log: Log) -> str:
    from sandbox import docker as sandbox_docker

    if force:
        for marker in workdir.glob(".done-*"):
            marker.unlink()
    rootfs = build_rootfs(workdir, log)
    tarball = workdir / "rootfs.tar"
    started = time.monotonic()
    _run(["tar", "--numeric-owner", "-C", str(rootfs), "-cf", str(tarball), "."], log)
    log(f"tar: {time.monotonic() - started:.1f}s")
    started = time.monotonic()
    sandbox_docker.import_image(tarball, tag, changes=list(CHANGES), inputs=inputs_hash())
    log(f"docker import {tag}: {time.monotonic() - started:.1f}s")
    tarball.unlink()
    return tag
