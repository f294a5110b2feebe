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


@pytest.fixture(params=["docker", "bwrap"])
def backend(request: pytest.FixtureRequest, settings) -> str:
    """Each isolation test runs against Docker and against bubblewrap where they work."""
    settings.SANDBOX_TMP_MB = 64
    if request.param == "docker":
        request.applymarker(pytest.mark.docker)
        request.getfixturevalue("sandbox_image")
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
