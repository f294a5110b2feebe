"""Sandbox fixtures: backends (the image and world-readable dirs are in tests/conftest.py)."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from sandbox import SandboxSpec, Session, open_session


def _bwrap_problem() -> str | None:
    from sandbox.bwrap import probe

    return probe()


PODMAN_USER = "referee-podman"
PODMAN_SUBIDS = "1200000-1265535"  # subordinate uids/gids of the account, apart from the root mode's range


@pytest.fixture(scope="session")
def podman_user() -> str:
    """An unprivileged account with subordinate uid/gid ranges, for rootless podman: made here when
    the test session is root and it is missing (CI makes it too, .ci/run); "" where it cannot be."""
    import pwd
    import subprocess

    if os.geteuid() != 0:
        return ""  # the worker itself is the unprivileged account
    try:
        pwd.getpwnam(PODMAN_USER)
    except KeyError:
        subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash", PODMAN_USER], check=True)
    for table, option in (("/etc/subuid", "--add-subuids"), ("/etc/subgid", "--add-subgids")):
        entries = Path(table).read_text().splitlines() if Path(table).exists() else []
        if not any(line.startswith(f"{PODMAN_USER}:") for line in entries):
            subprocess.run(["usermod", option, PODMAN_SUBIDS, PODMAN_USER], check=True)
    return PODMAN_USER


@pytest.fixture
def podman_ready(settings, podman_user: str, sandbox_image: str) -> str:
    """Podman set up as a worker would be: rootless as `referee-podman` where that holds the limits,
    else root podman with a user namespace (sandbox/podman.py says why); skipped where podman cannot run."""
    from sandbox import podman

    settings.SANDBOX_PODMAN_USER = podman_user
    for probe in (podman.mode, podman.probe):
        probe.cache_clear()
    problem = podman.probe()
    if problem:
        pytest.skip(f"podman unusable here: {problem}")
    podman.ensure_image(sandbox_image)
    yield sandbox_image
    for probe in (podman.mode, podman.probe):
        probe.cache_clear()


@pytest.fixture(params=["docker", "podman", "bwrap"])
def backend(request: pytest.FixtureRequest, settings) -> str:
    """Each isolation test runs against Docker, Podman and bubblewrap where they work."""
    settings.SANDBOX_TMP_MB = 64
    if request.param == "docker":
        request.applymarker(pytest.mark.docker)
        request.getfixturevalue("sandbox_image")
    elif request.param == "podman":
        request.applymarker(pytest.mark.podman)
        request.getfixturevalue("podman_ready")
    else:
        request.applymarker(pytest.mark.bwrap)
        problem = _bwrap_problem()
        if problem:
            pytest.skip(f"bubblewrap unusable here: {problem}")
    return request.param


@pytest.fixture
def sandbox(backend: str) -> Iterator[Callable[..., Session]]:
    """sandbox(**spec fields) -> an open session on the backend, closed after the test."""
    opened: list[Session] = []

    def make(**fields: object) -> Session:
        fields.setdefault("disk_mb", 64)
        fields.setdefault("memory_mb", 512)
        session = open_session(SandboxSpec(**fields), backend=backend)  # type: ignore[arg-type]
        opened.append(session)
        return session

    yield make
    for session in opened:
        session.close()


def make_public(path: Path) -> None:
    for root, dirs, files in os.walk(path):
        for name in dirs:
            (Path(root) / name).chmod(0o755)
        for name in files:
            file = Path(root) / name
            file.chmod(file.stat().st_mode | stat.S_IROTH | stat.S_IRGRP)
