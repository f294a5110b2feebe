"""Build the sandbox image: ``docker build`` of sandbox/images/Dockerfile where a registry answers
(no root needed), else offline with debootstrap + wheels + ``docker import`` (root).

The image is tagged ``referee-sandbox:<hash of its inputs>`` (this recipe, the Debian package
list and the pinned requirements), so it is built once per change and reused afterwards.
The debootstrap rootfs and the downloaded wheels are cached under ``var/sandbox-image``.
Either way the image ends with its manifest in the label ``referee.sandbox.manifest`` (Python
version, Python packages, commands), read from the finished image itself, so the two builds can
be compared: they must hold the same package set.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sandbox import conf
from sandbox.base import LABEL, SandboxError
from sandbox.recipe import (
    CHANGES,
    DEBIAN_PACKAGES,
    IMAGES_DIR,
    MANIFEST_PATH,
    MIRROR,
    PLATFORMS,
    PRUNE_SCRIPT,
    PRUNE_SPEC,
    REQUIREMENTS,
    SUITE,
    USER_UID,
    default_tag,
    inputs_hash,
    requirement_lines,
)

Log = Callable[[str], None]


class ImageBuildError(RuntimeError):
    pass


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


DOCKERFILE, DEBOOTSTRAP = "dockerfile", "debootstrap"
MANIFEST_LABEL = "referee.sandbox.manifest"
BUILT_BY_LABEL = "referee.sandbox.built-by"  # dockerfile or debootstrap
# Run with the image's own Python: what is installed, said the same way for both builds. pip,
# setuptools and wheel are the venv's tooling (each Python brings its own), not the package set.
MANIFEST_SCRIPT = """
import importlib.metadata, json, re, shutil, sys
tooling = {"pip", "setuptools", "wheel"}
names = {re.sub(r"[-_.]+", "-", d.metadata["Name"]).lower(): d.version for d in importlib.metadata.distributions()}
print(json.dumps({
    "python": "%d.%d" % sys.version_info[:2],
    "python_packages": sorted(f"{n}=={v}" for n, v in names.items() if n not in tooling),
    "commands": sorted(c for c in ("bash", "ps", "python3") if shutil.which(c)),
}, sort_keys=True))
"""


def build_method() -> str:
    """The Dockerfile where a registry answers (no root needed), else debootstrap (root)."""
    from sandbox.provision import registry_answers

    if registry_answers():
        return DOCKERFILE
    if os.geteuid() != 0:
        raise ImageBuildError(
            "no container registry answers for `docker build` of sandbox/images/Dockerfile, and the offline "
            "build (debootstrap and chroot) needs root: run `sudo .venv/bin/python manage.py build_sandbox_image`"
        )
    return DEBOOTSTRAP


def _engine(name: str = "docker") -> Any:
    """The module that speaks to the engine holding the image: sandbox.docker or sandbox.podman."""
    import importlib

    return importlib.import_module(f"sandbox.{name}")


def image_manifest(tag: str, *, engine: str = "docker") -> dict | None:
    """The manifest the image carries in its label, None if it has none."""
    raw = _engine(engine).image_labels(tag).get(MANIFEST_LABEL)
    return json.loads(raw) if raw else None


def measure_manifest(tag: str, *, engine: str = "docker") -> dict:
    """The manifest read from inside the image, now."""
    return json.loads(_engine(engine).run_in_image(tag, ["/opt/venv/bin/python", "-I", "-c", MANIFEST_SCRIPT]))


def label_manifest(tag: str, log: Log, *, built_by: str, engine: str = "docker") -> dict:
    manifest = measure_manifest(tag, engine=engine)
    labels = {MANIFEST_LABEL: json.dumps(manifest, sort_keys=True), BUILT_BY_LABEL: built_by}
    _engine(engine).add_labels(tag, labels)
    log(f"manifest: Python {manifest['python']}, {len(manifest['python_packages'])} packages (label {MANIFEST_LABEL})")
    return manifest


def build_with_dockerfile(tag: str, log: Log) -> str:
    from sandbox import docker as sandbox_docker

    started = time.monotonic()
    labels = {f"{LABEL}.inputs": inputs_hash()}
    sandbox_docker.build_from_dockerfile(IMAGES_DIR, tag, labels=labels, log=log)
    log(f"docker build {tag}: {time.monotonic() - started:.1f}s")
    label_manifest(tag, log, built_by=DOCKERFILE)
    return tag


def build_image(*, force: bool = False, log: Log = print, method: str | None = None) -> str:
    """Return the tag of the sandbox image, building it if it is missing (``method``: dockerfile or
    debootstrap; by default the Dockerfile where a registry answers, else debootstrap as root)."""
    from sandbox import docker as sandbox_docker

    tag = default_tag()
    if not force and sandbox_docker.image_exists(tag):
        log(f"image {tag} exists, reused")
        return tag
    method = method or build_method()
    if method == DEBOOTSTRAP and os.geteuid() != 0:
        raise ImageBuildError("the debootstrap build of the sandbox image needs root (debootstrap and chroot)")
    workdir = conf.cache_dir() / inputs_hash()
    workdir.mkdir(parents=True, exist_ok=True)
    with (conf.cache_dir() / ".lock").open("w") as lock:
        # One build at a time (tests, bench and a worker may all ask); the rest then reuse it.
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not force and sandbox_docker.image_exists(tag):
            log(f"image {tag} exists, reused")
            return tag
        if method == DOCKERFILE:
            log(f"building {tag} from {IMAGES_DIR / 'Dockerfile'} (a registry answers)")
            return build_with_dockerfile(tag, log)
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
    label_manifest(tag, log, built_by=DEBOOTSTRAP)
    return tag


def podman_image_ensure(tag: str, *, log: Log = print) -> str:
    """The image in podman's store (``manage.py build_sandbox_image --engine podman``): loaded from
    this node's Docker engine where it has it, else, for the default image, imported."""
    from sandbox import podman

    if podman.image_exists(tag) or podman.load_from_docker(tag, log):
        return tag
    if tag != default_tag():  # a task's variant or an image of the admin's: only a load can bring it
        raise SandboxError(f"no Docker engine on this node holds {tag}, and podman builds only {default_tag()}")
    podman_import(tag, log=log)
    if not podman.image_exists(tag):
        raise SandboxError(f"loading {tag} into podman did not produce the image")
    return tag


def podman_import(tag: str, *, log: Log = print) -> str:
    """Put the image into podman's store without a Docker engine: from the debootstrap rootfs of the
    same hash when this node has built it, else `podman build` of the Dockerfile where a registry
    answers, else the debootstrap build here (root). Same content and labels as the Docker image."""
    from sandbox import podman

    workdir = conf.cache_dir() / inputs_hash()
    method = DEBOOTSTRAP if cached_rootfs() is not None else build_method()
    if method == DOCKERFILE:
        log(f"building {tag} with podman from {IMAGES_DIR / 'Dockerfile'} (a registry answers)")
        podman.build_from_dockerfile(IMAGES_DIR, tag, labels={f"{LABEL}.inputs": inputs_hash()}, log=log)
        label_manifest(tag, log, built_by=DOCKERFILE, engine="podman")
        return tag
    workdir.mkdir(parents=True, exist_ok=True)
    with (conf.cache_dir() / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        rootfs = build_rootfs(workdir, log)
        tarball = workdir / "rootfs-podman.tar"
        _run(["tar", "--numeric-owner", "-C", str(rootfs), "-cf", str(tarball), "."], log)
        try:
            started = time.monotonic()
            podman.import_rootfs(tarball, tag, changes=list(CHANGES), inputs=inputs_hash())
            log(f"podman import {tag}: {time.monotonic() - started:.1f}s")
        finally:
            tarball.unlink(missing_ok=True)
    label_manifest(tag, log, built_by=DEBOOTSTRAP, engine="podman")
    return tag
