"""`scripts/up.py` for real: kill -9 a worker, Redis, gunicorn (a worker and the master) and a daphne;
each comes back (gunicorn's workers by gunicorn, the rest by the supervisor), /healthz says degraded
and then ok, and only SIGTERM stops it."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from tests.ops.platform import Platform, running

pytestmark = [pytest.mark.slow, pytest.mark.bwrap]


def _bwrap_problem() -> str | None:
    from sandbox.bwrap import probe

    return probe()


@pytest.fixture
def platform(tmp_path: Path):
    problem = _bwrap_problem()
    if problem:  # the platform runs its sandboxes on bwrap here (quick baselines, no image needed)
        pytest.skip(f"bubblewrap unusable here: {problem}")
    running = Platform(tmp_path / "var", SANDBOX_BACKEND="bwrap", WEB_PROCESSES="2", WS_PROCESSES="2").start()
    yield running
    running.stop()


FIND_PLATFORM = """
import django_rq
from django.conf import settings
from rq import Worker
print(settings.REDIS_URL)
print(len(Worker.all(connection=django_rq.get_connection("runs"))))
"""


def test_it_restarts_what_dies_and_stops_only_on_sigterm(platform: Platform) -> None:
    assert platform.wait_health("ok")["supervisor"]["ok"] is True

    # A management command run by hand (no REDIS_URL) finds the Redis that make up started.
    found = platform.manage("shell", "--no-imports", "-c", FIND_PLATFORM)
    url, workers = found.stdout.split()[-2:]
    assert url == (platform.var_dir / "redis_url").read_text().strip()
    assert int(workers) >= 4, found.stdout + found.stderr

    worker = platform.child_pid("worker runs #1")
    os.kill(worker, signal.SIGKILL)
    report = platform.wait_health("degraded", timeout=10)
    assert report["supervisor"]["error"] == "restarting: worker runs #1"
    platform.wait_health("ok", timeout=30)
    assert "worker runs #1 exited with code -9" in platform.log
    assert "worker runs #1 restarted" in platform.log
    assert platform.child_pid("worker runs #1") != worker

    os.kill(platform.child_pid("redis"), signal.SIGKILL)
    report = platform.wait_health("degraded", timeout=10)
    assert "redis" in report["supervisor"]["error"]
    platform.wait_health("ok", timeout=30)
    assert "redis restarted" in platform.log

    # HTTP is gunicorn's: a worker killed is replaced by gunicorn's master while the other serves;
    # the master killed, the supervisor starts it again on the same socket.
    master = platform.child_pid("web")
    workers = [int(pid) for pid in Path(f"/proc/{master}/task/{master}/children").read_text().split()]
    assert len(workers) == 2, workers
    os.kill(workers[0], signal.SIGKILL)
    for _ in range(5):
        assert platform.health(timeout=10)[1]["status"] == "ok"
    os.kill(master, signal.SIGKILL)
    platform.wait_for("web restarted", timeout=30)  # its workers serve on until they see it gone
    platform.wait_health("ok", timeout=60)
    assert "web exited with code -9" in platform.log
    assert platform.child_pid("web") != master
    # Websockets are daphne's, on their own port: one killed is restarted, the other goes on.
    first, second = platform.child_pid("websockets #1"), platform.child_pid("websockets #2")
    os.kill(first, signal.SIGKILL)
    report = platform.wait_health("degraded", timeout=10)
    assert report["supervisor"]["error"] == "restarting: websockets #1"
    platform.wait_health("ok", timeout=30)
    assert platform.child_pid("websockets #1") != first and platform.child_pid("websockets #2") == second
    assert "housekeeping: reap_runs every 30 s" in platform.log  # the sweeps run, in one process

    children = [child["pid"] for child in platform.state()["children"].values()]
    assert platform.proc is not None and platform.proc.poll() is None  # none of it stopped the platform
    assert platform.stop() == 0
    assert "all stopped" in platform.log
    assert not any(running(pid) for pid in children)
    assert not (platform.var_dir / "redis_url").exists() and not (platform.var_dir / "up" / "state.json").exists()
