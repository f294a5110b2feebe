"""Runs executed by Slurm, for real: the session's single-node cluster (tests/slurm_plugin.py) runs
each run's `sbatch` job (`manage.py execute_run`) against a database and Redis shared with the
launching process, in the Docker sandbox. The agent replays a stored trajectory: no model is called."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time

import pytest

from tests.processes import MANAGE, mounts_under, process_database
from tests.slurm_cluster import PARTITION

pytestmark = [pytest.mark.slow, pytest.mark.docker, pytest.mark.slurm, pytest.mark.django_db(transaction=True)]

FAST = {"RUN_HEARTBEAT_EVERY": "0.5", "RUN_HEARTBEAT_TTL": "3"}
SLURM = {**FAST, "RUN_EXECUTOR": "slurm", "SLURM_PARTITION": PARTITION}

# A replay of a stored trajectory whose actions are ACTIONS; launched n times, printed as JSON.
SEED = """
import json
from accounts.roles import RESEARCHER
from accounts.services import user_create
from benchmark.models import AgentConfig, Run
from benchmark.runs import progress
from benchmark.runs.services import Limits, run_launch
from tests.benchmark.runs_support import builtin_task
owner = user_create(username="sol", email="sol@example.org", role=RESEARCHER, password="pw-sol-1")
task = builtin_task("prisoners_dilemma")
original = Run.objects.create(task=task, agent=AgentConfig.objects.create(name="x"), owner=owner, status="finished")
for action in ACTIONS:
    progress.step_append(run=original, thought="t", action=action, observation="", publish=False)
replayer = AgentConfig.objects.create(name="replay", kind=AgentConfig.Kind.REPLAY, max_steps=len(ACTIONS))
runs = run_launch(owner=owner, tasks=[task], agent=replayer, replay_of=original, n_runs=N,
                  limits=Limits(command_timeout=400))
print(json.dumps([[r.pk, str(r.code), r.executor, r.slurm_job_id] for r in runs]))
"""


def seed(db, actions: list[str], n: int = 1, **env: str) -> list[tuple[int, str, str, str]]:  # type: ignore[no-untyped-def]
    code = SEED.replace("ACTIONS", json.dumps(actions)).replace("N,", f"{n},")
    return [tuple(row) for row in json.loads(db.shell(code, **{**SLURM, **env}).strip().splitlines()[-1])]


def wait_for(condition, *, timeout: float, what: str):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


def run_row(db, pk: int) -> tuple:  # type: ignore[no-untyped-def]
    return db.rows("select status, exit_status, error, step_count from benchmark_run where id = ?", (pk,))[0]


def squeue(job_id: str) -> str:
    out = subprocess.run(
        ["squeue", "-h", "-t", "all", "-j", job_id, "-o", "%T|%r"], capture_output=True, text=True, check=True
    )
    return out.stdout.strip()


def partition(state: str, cluster) -> None:  # type: ignore[no-untyped-def]
    cluster.scontrol("update", f"PartitionName={PARTITION}", f"State={state}")


def reaper(db):  # type: ignore[no-untyped-def]
    return db.popen([*MANAGE, "reap_runs", "--loop", "--interval", "0.5"], **SLURM)


def process_gone(db, pk: int) -> None:  # type: ignore[no-untyped-def]
    """Wait until the run's own process (host:pid, on this one-node cluster) has exited."""
    pid = int(db.rows("select worker_name from benchmark_run where id = ?", (pk,))[0][0].rpartition(":")[2])

    def gone() -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False

    wait_for(gone, timeout=90, what=f"the run's process {pid} to exit")


def stop(*procs) -> None:  # type: ignore[no-untyped-def]
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
            proc.communicate(timeout=30)


async def _collect(code: str, ready, until: float) -> list[dict]:  # type: ignore[no-untyped-def]
    from channels.layers import get_channel_layer

    from benchmark.runs.progress import run_group

    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add(run_group(code), channel)
    ready()
    messages = []
    while time.monotonic() < until:
        try:
            message = await asyncio.wait_for(layer.receive(channel), timeout=2)
        except TimeoutError:
            continue
        messages.append(message)
        if message["type"] == "run.status" and message["run"]["status"] in ("finished", "failed", "interrupted"):
            break
    return messages


def test_it_runs_a_launch_as_a_slurm_job_that_streams_its_steps_and_finishes(slurm_node, tmp_path):
    db = process_database(tmp_path)
    partition("DOWN", slurm_node)  # held in the queue until the test listens to the run's stream
    try:
        ((pk, code, executor, job_id),) = seed(db, ["echo one", "echo two"])
        assert executor == "slurm" and job_id.isdigit()
        note = db.shell(
            f"from benchmark.models import Run; from benchmark.runs.slurm import queued_note; "
            f"print(queued_note(Run.objects.get(pk={pk})))",
            **SLURM,
        )
        assert f"queued on Slurm (job {job_id}, reason: PartitionDown)" in note
        messages = asyncio.run(_collect(code, lambda: partition("UP", slurm_node), time.monotonic() + 240))
    finally:
        partition("UP", slurm_node)
    status, exit_status, error, steps = run_row(db, pk)
    assert status == "finished", (status, exit_status, error)
    observations = db.rows('select observation from benchmark_step where run_id = ? order by "index"', (pk,))
    assert [o.strip() for (o,) in observations[:2]] == ["one", "two"]
    streamed = [m["index"] for m in messages if m["type"] == "run.step"]
    assert streamed[:2] == [1, 2]  # each step reached the live stream from the node
    assert messages[-1]["run"]["status"] == "finished"
    wait_for(lambda: squeue(job_id) == "COMPLETED|None", timeout=60, what="the job to end")  # it exits after
    worker = db.rows("select worker_name from benchmark_run where id = ?", (pk,))[0][0]
    assert worker.rpartition(":")[2].isdigit()  # host:pid of the job's own process, no RQ worker


def test_it_cancels_a_running_slurm_run_and_its_job_ends(slurm_node, tmp_path):
    db = process_database(tmp_path)
    ((pk, code, _, job_id),) = seed(db, ["echo first", "sleep 300"])
    wait_for(lambda: run_row(db, pk)[3] == 1, timeout=180, what="the run's first step")
    assert squeue(job_id) == "RUNNING|None"
    db.shell(
        f"from benchmark.models import Run; from benchmark.runs.services import run_cancel; "
        f"print(run_cancel(run=Run.objects.get(pk={pk})))",
        **SLURM,
    )
    wait_for(lambda: run_row(db, pk)[0] == "cancelled", timeout=60, what="the run to stop itself")
    wait_for(lambda: squeue(job_id).startswith("COMPLETED"), timeout=60, what="the job to end")
    assert run_row(db, pk)[3] == 1  # the committed step stays


def test_it_scancels_the_job_of_a_run_cancelled_while_queued(slurm_node, tmp_path):
    db = process_database(tmp_path)
    partition("DOWN", slurm_node)
    try:
        ((pk, _, _, job_id),) = seed(db, ["echo never"])
        assert squeue(job_id) == "PENDING|PartitionDown"
        db.shell(
            f"from benchmark.models import Run; from benchmark.runs.services import run_cancel; "
            f"print(run_cancel(run=Run.objects.get(pk={pk})))",
            **SLURM,
        )
        assert run_row(db, pk)[:2] == ("cancelled", "exit_cancelled")
        assert squeue(job_id).startswith("CANCELLED")  # scancel: the job never starts
    finally:
        partition("UP", slurm_node)


def test_it_interrupts_a_run_whose_job_slurm_killed_at_its_time_limit(slurm_node, tmp_path):
    db = process_database(tmp_path)
    ((pk, _, _, job_id),) = seed(db, ["echo first", "sleep 300"], SLURM_TIME_LIMIT_MAX="60")
    sweeper = reaper(db)
    try:
        wait_for(lambda: run_row(db, pk)[3] == 1, timeout=180, what="the run's first step")
        status, exit_status, error, steps = wait_for(
            lambda: [r for r in [run_row(db, pk)] if r[0] != "running"], timeout=240, what="the time limit"
        )[0]
    finally:
        stop(sweeper)
    assert (status, exit_status, steps) == ("interrupted", "interrupted", 1)
    assert f"Slurm ended job {job_id} on referee-node1: TIMEOUT (reason: TimeLimit)" in error
    assert "Every committed step is kept" in error
    assert squeue(job_id) == "TIMEOUT|TimeLimit"
    process_gone(db, pk)
    assert mounts_under(tmp_path) == []  # SIGTERM closed the sandbox before Slurm's SIGKILL


def test_it_interrupts_a_run_whose_node_slurmd_was_killed_and_resumes_it_on_a_new_job(slurm_node, tmp_path):
    db = process_database(tmp_path)
    ((pk, _, _, job_id),) = seed(db, ["echo first", "sleep 300"])
    sweeper = reaper(db)
    try:
        wait_for(lambda: run_row(db, pk)[3] == 1, timeout=180, what="the run's first step")
        slurm_node.slurmd_kill()
        status, exit_status, error, steps = wait_for(
            lambda: [r for r in [run_row(db, pk)] if r[0] != "running"], timeout=120, what="the node's failure"
        )[0]
    finally:
        stop(sweeper)
    assert (status, exit_status, steps) == ("interrupted", "interrupted", 1)
    assert f"Slurm ended job {job_id} on referee-node1: NODE_FAIL" in error, error
    assert squeue(job_id).startswith("NODE_FAIL")
    # The job's process outlived its slurmd (as slurmstepd does): it sees the run interrupted, stops
    # its command and closes its sandbox by itself.
    process_gone(db, pk)
    assert mounts_under(tmp_path) == []
    # The node is back: Resume submits a new job, which replays the committed step and goes on.
    slurm_node.slurmd_start()
    db.shell(
        f"from benchmark.models import Run; from benchmark.runs.services import run_resume; "
        f"assert run_resume(run=Run.objects.get(pk={pk}))",
        **SLURM,
    )
    resumed = db.rows("select slurm_job_id, executor from benchmark_run where id = ?", (pk,))[0]
    assert resumed[0] not in ("", job_id) and resumed[1] == "slurm"

    def replayed() -> bool:
        params = json.loads(db.rows("select params from benchmark_run where id = ?", (pk,))[0][0])
        return params["resumes"][-1].get("replayed") == 1

    wait_for(replayed, timeout=180, what="the resumed run to replay its step")
    assert run_row(db, pk)[0] == "running" and squeue(resumed[0]) == "RUNNING|None"
    db.shell(
        f"from benchmark.models import Run; from benchmark.runs.services import run_cancel; "
        f"assert run_cancel(run=Run.objects.get(pk={pk}))",
        **SLURM,
    )
    wait_for(lambda: run_row(db, pk)[0] == "cancelled", timeout=60, what="the resumed run to stop")
    process_gone(db, pk)


def test_it_runs_two_slurm_runs_at_once(slurm_node, tmp_path):
    db = process_database(tmp_path)
    launched = seed(db, ["echo a", "sleep 4", "echo b"], n=2)
    assert len({job_id for *_, job_id in launched}) == 2
    for pk, *_ in launched:
        wait_for(lambda pk=pk: run_row(db, pk)[0] in ("finished", "failed"), timeout=300, what="both runs")
    spans = db.rows(
        "select started_at, finished_at, status from benchmark_run where id in (?, ?) order by id",
        tuple(pk for pk, *_ in launched),
    )
    assert [status for *_, status in spans] == ["finished", "finished"]
    (start_a, end_a, _), (start_b, end_b, _) = spans
    assert start_a < end_b and start_b < end_a  # their times overlap: two jobs on the node at once
