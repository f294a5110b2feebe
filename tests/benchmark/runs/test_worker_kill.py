"""kill -9 of a real `rqworker runs` and its work horse mid-run: the run reaper, a real process too,
marks the run interrupted once its heartbeat lapses, while RQ still lists the dead worker (its key
would expire only minutes later), and the committed step stays."""

from __future__ import annotations

import os
import signal
import time

import pytest

from benchmark.runs.heartbeat import heartbeat_key
from tests.processes import MANAGE, mounts_under, process_database, sweep_disks

pytestmark = [pytest.mark.slow, pytest.mark.docker, pytest.mark.django_db(transaction=True)]

# A replay of a stored trajectory: step 1 commits at once, step 2 sleeps until the worker is killed.
SEED = """
from accounts.roles import RESEARCHER
from accounts.services import user_create
from benchmark.models import AgentConfig, Run
from benchmark.runs import progress
from benchmark.runs.services import run_launch
from tests.benchmark.runs_support import builtin_task
owner = user_create(username="rita", email="rita@example.org", role=RESEARCHER, password="pw-rita-1")
task = builtin_task("prisoners_dilemma")
original = Run.objects.create(task=task, agent=AgentConfig.objects.create(name="x"), owner=owner, status="finished")
progress.step_append(run=original, thought="t", action="echo first", observation="first", publish=False)
progress.step_append(run=original, thought="t", action="sleep 300", observation="", publish=False)
replayer = AgentConfig.objects.create(name="replay", kind=AgentConfig.Kind.REPLAY, max_steps=3)
(run,) = run_launch(owner=owner, tasks=[task], agent=replayer, replay_of=original)
print(run.pk, run.code)
"""

FAST = {"RUN_HEARTBEAT_EVERY": "0.5", "RUN_HEARTBEAT_TTL": "3"}


def wait_for(condition, *, timeout: float, what: str):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def test_it_interrupts_a_run_whose_worker_was_killed_hard_before_rq_notices(tmp_path, redis_client):
    from rq import Worker

    from sandbox import docker as docker_backend

    db = process_database(tmp_path)
    pk, code = db.shell(SEED).split()
    worker = db.popen([*MANAGE, "rqworker", "runs", "--name", f"kill-test-{code[:8]}"], **FAST)
    reaper = db.popen([*MANAGE, "reap_runs", "--loop", "--interval", "0.5"], **FAST)  # sweeping from the start
    started = time.monotonic()
    try:
        wait_for(
            lambda: db.rows("select step_count from benchmark_run where id = ?", (int(pk),)) == [(1,)],
            timeout=180,
            what="the run's first step",
        )
        horse = int(redis_client.get(heartbeat_key(code)).decode().rpartition(":")[2])
        os.kill(horse, signal.SIGKILL)  # the work horse and the worker at once, as an OOM kill or a lost host
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait(timeout=10)
        killed = time.monotonic()
        row = wait_for(
            lambda: [
                r
                for r in db.rows("select status, error from benchmark_run where id = ?", (int(pk),))
                if r[0] != "running"
            ],
            timeout=60,
            what="the reaper to mark the run",
        )
        noticed = time.monotonic() - killed
        registered = {w.name for w in Worker.all(connection=redis_client)}
        assert row == [("interrupted", row[0][1])] and "Every committed step is kept" in row[0][1]
        assert f"kill-test-{code[:8]}" in registered  # RQ alone would still take this worker for alive
        assert db.rows('select "index" from benchmark_step where run_id = ?', (int(pk),)) == [(1,)]
        print(
            f"first step after {killed - started:.1f} s; the hard-killed worker noticed {noticed:.1f} s after"
            " the kill (heartbeat TTL 3 s, reaper every 0.5 s)"
        )
    finally:
        for proc in (worker, reaper):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                proc.communicate(timeout=30)
        for container in docker_backend.sandbox_containers():
            if container["labels"].get("referee.run") == code:
                docker_backend.remove_container(container["id"])
        dead = Worker.find_by_key(f"rq:worker:kill-test-{code[:8]}", connection=redis_client)
        if dead is not None:
            dead.register_death()  # not left for /healthz and other tests to count
        sweep_disks(tmp_path)
    assert mounts_under(tmp_path) == []  # the killed worker's sandbox disks, unmounted by the sweep
