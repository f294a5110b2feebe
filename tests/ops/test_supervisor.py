"""config/supervisor.py with real child processes: restarts with backoff, logging, state, stop."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from config.supervisor import MAX_BACKOFF, Supervisor, backoff
from tests.ops.platform import running


def _spawn(*args: str) -> Callable[[], subprocess.Popen]:
    return lambda: subprocess.Popen(list(args), start_new_session=True)


_alive = running


def _poll_until(supervisor: Supervisor, condition: Callable[[], bool], timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not reached"
        supervisor.poll()
        time.sleep(0.05)


@pytest.fixture
def supervised(tmp_path: Path):
    lines: list[str] = []
    supervisor = Supervisor(state_path=tmp_path / "up" / "state.json", log=lines.append)
    yield supervisor, lines
    supervisor.stop()


def test_it_restarts_a_killed_child_says_so_and_records_it(supervised) -> None:
    supervisor, lines = supervised
    child = supervisor.add("worker runs #1", "workers", _spawn("sleep", "600"))
    first = child.proc.pid
    os.kill(first, signal.SIGKILL)
    _poll_until(supervisor, lambda: child.restarts == 1)
    assert child.proc.pid != first and _alive(child.proc.pid)
    assert any(line.startswith("worker runs #1 exited with code -9 after") for line in lines), lines
    assert f"worker runs #1 restarted (pid {child.proc.pid}, restart #1)" in lines
    state = json.loads(supervisor.state_path.read_text())["children"]["worker runs #1"]
    assert state["state"] == "starting" and state["restarts"] == 1 and state["last_exit"] == -9
    assert state["pid"] == child.proc.pid


def test_it_shows_a_child_as_restarting_until_it_is_started_again(supervised) -> None:
    supervisor, _ = supervised
    child = supervisor.add("redis", "redis", _spawn("sleep", "600"))
    os.kill(child.proc.pid, signal.SIGKILL)
    _poll_until(supervisor, lambda: child.restart_at is not None)
    state = json.loads(supervisor.state_path.read_text())["children"]["redis"]
    assert state["state"] == "restarting" and state["pid"] is None and 0 < state["restart_in"] <= 1


def test_it_doubles_the_wait_for_a_child_that_keeps_crashing(supervised) -> None:
    supervisor, lines = supervised
    child = supervisor.add("housekeeping", "housekeeping", _spawn(sys.executable, "-c", "raise SystemExit(3)"))
    _poll_until(supervisor, lambda: sum("restarting in" in line for line in lines) >= 3, timeout=30)
    waits = [line.rsplit("restarting in ", 1)[1] for line in lines if "restarting in" in line]
    assert waits[:3] == ["1 s", "2 s", "4 s"], lines
    assert child.last_exit == 3
    assert [backoff(n) for n in (1, 2, 3, 5, 6, 20)] == [1, 2, 4, 16, MAX_BACKOFF, MAX_BACKOFF]


def test_it_keeps_trying_a_child_that_cannot_start(supervised) -> None:
    supervisor, lines = supervised
    attempts: list[int] = []

    def start() -> subprocess.Popen:
        attempts.append(1)
        if len(attempts) in (2, 3):  # the first restarts fail (e.g. a port not free yet)
            raise RuntimeError("redis-server did not accept connections")
        return subprocess.Popen(["sleep", "600"], start_new_session=True)

    child = supervisor.add("redis", "redis", start)
    os.kill(child.proc.pid, signal.SIGKILL)
    _poll_until(supervisor, lambda: child.restarts == 1, timeout=30)
    assert len(attempts) == 4
    failures = [line for line in lines if "could not be started" in line]
    assert failures == [
        "redis could not be started (RuntimeError: redis-server did not accept connections); next try in 2 s",
        "redis could not be started (RuntimeError: redis-server did not accept connections); next try in 4 s",
    ]


def test_it_stops_every_child_and_their_children_and_removes_its_state(supervised, tmp_path: Path) -> None:
    supervisor, lines = supervised
    # A child that starts a grandchild: the whole process group goes.
    script = "import subprocess, time; subprocess.Popen(['sleep', '600']); time.sleep(600)"
    parent = supervisor.add("web", "web", _spawn(sys.executable, "-c", script))
    plain = supervisor.add("worker default", "workers", _spawn("sleep", "600"))
    time.sleep(0.5)
    group = [int(pid) for pid in subprocess.check_output(["pgrep", "-g", str(parent.proc.pid)], text=True).split()]
    assert len(group) == 2
    supervisor.stop()
    assert not any(_alive(pid) for pid in [*group, plain.proc.pid])
    assert not supervisor.state_path.exists()
    assert lines[-1] == "all stopped"
    supervisor.poll()  # after stop nothing is restarted
    assert plain.proc.poll() is not None and plain.restarts == 0
