"""A sandbox whose process dies before it reads its shell server fails with SandboxError and its
own words (a baseline or a run records that), never with a bare BrokenPipeError that crashes the
caller (it stopped `make up`'s seed_demo when bwrap exited at start)."""

from __future__ import annotations

import pytest

from sandbox.base import SandboxError, SandboxSpec, Session


class DeadChannel:
    def send(self, data: bytes) -> None:
        raise BrokenPipeError(32, "Broken pipe")

    def recv(self, timeout: float) -> bytes:
        return b""

    def close(self) -> None:
        pass


class DiesAtStart(Session):
    backend = "test"

    def _start(self) -> DeadChannel:
        return DeadChannel()

    def _diagnostics(self) -> str:
        return "bwrap: Can't mount proc on /newroot/proc: Operation not permitted\n"

    def _destroy(self) -> None:
        pass


def test_a_sandbox_that_dies_at_start_says_why_as_a_sandbox_error():
    with pytest.raises(SandboxError, match="exited as it started .*Can't mount proc"):
        DiesAtStart(SandboxSpec()).start()
