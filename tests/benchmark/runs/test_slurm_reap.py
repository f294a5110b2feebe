"""The reaper and Slurm's words when a job ends by Slurm's hand: preempted by a job of a higher
partition, refused a requeue (runs are submitted --no-requeue), or forgotten by the controller with
no accounting to ask (sacct says so, and the run says it). Real single-node cluster."""

from __future__ import annotations

import subprocess

import pytest

from benchmark.models import Run
from benchmark.runs import heartbeat, slurm
from tests.benchmark.runs.test_slurm import process_gone, reaper, run_row, seed, squeue, stop, wait_for
from tests.benchmark.runs_support import agent, builtin_task
from tests.processes import mounts_under, process_database
from tests.slurm_cluster import PARTITION, URGENT

pytestmark = [pytest.mark.slurm, pytest.mark.django_db(transaction=True)]

NEVER_KNOWN = "4000000"  # far above any id this session's cluster hands out


@pytest.mark.slow
@pytest.mark.docker
def test_it_interrupts_a_run_whose_job_slurm_preempted_and_refuses_to_requeue_it(slurm_node, tmp_path):
    db = process_database(tmp_path)
    ((pk, _, _, job_id),) = seed(db, ["echo first", "sleep 300"])
    sweeper = reaper(db)
    urgent = ""
    try:
        wait_for(lambda: run_row(db, pk)[3] == 1, timeout=180, what="the run's first step")
        requeue = subprocess.run(["scontrol", "requeue", job_id], capture_output=True, text=True)
        assert requeue.returncode != 0 and "disabled" in requeue.stderr  # --no-requeue: Slurm says no
        assert squeue(job_id) == "RUNNING|None" and run_row(db, pk)[0] == "running"
        urgent = subprocess.run(
            [
                "sbatch",
                "--parsable",
                f"--partition={URGENT}",
                "--exclusive",
                "--output=/dev/null",
                "--wrap",
                "sleep 60",
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        status, exit_status, error, steps = wait_for(
            lambda: [r for r in [run_row(db, pk)] if r[0] != "running"], timeout=120, what="the preemption"
        )[0]
    finally:
        stop(sweeper)
        if urgent:
            subprocess.run(["scancel", urgent], check=False)
    assert (status, exit_status, steps) == ("interrupted", "interrupted", 1)
    assert f"Slurm ended job {job_id} on referee-node1: PREEMPTED: a job of a higher-priority partition" in error
    assert "Every committed step is kept" in error
    process_gone(db, pk)
    assert mounts_under(tmp_path) == []  # the job's SIGTERM closed the sandbox


@pytest.fixture
def on_slurm(settings, slurm_cluster):  # type: ignore[no-untyped-def]
    settings.RUN_EXECUTORS = {"runs": "slurm", "gpu": "slurm"}
    settings.SLURM_PARTITION = {"runs": PARTITION, "gpu": PARTITION}
    return slurm_cluster


def slurm_run(owner, job_id: str, status: str) -> Run:  # type: ignore[no-untyped-def]
    return Run.objects.create(
        task=builtin_task("prisoners_dilemma"),
        agent=agent(),
        owner=owner,
        executor="slurm",
        slurm_job_id=job_id,
        status=status,
    )


def test_it_ends_a_run_whose_job_neither_squeue_nor_sacct_knows_saying_so(researcher, on_slurm, redis_client):
    running = slurm_run(researcher, NEVER_KNOWN, "running")
    queued = slurm_run(researcher, str(int(NEVER_KNOWN) + 1), "queued")
    assert sorted(what for _, what in slurm.slurm_reap()) == ["failed", "interrupted"]
    running.refresh_from_db()
    queued.refresh_from_db()
    words = (
        "cannot say how it ended (squeue: not in the controller's records; sacct: Slurm accounting storage is disabled)"
    )
    assert running.status == "interrupted" and f"Slurm no longer knows job {NEVER_KNOWN} and {words}" in running.error
    assert queued.status == "failed" and words in queued.error


def test_it_leaves_a_run_alone_whose_forgotten_job_still_beats(researcher, on_slurm, redis_client):
    run = slurm_run(researcher, NEVER_KNOWN, "running")
    slurm.progress_connection().set(heartbeat.heartbeat_key(run.code), "alive", ex=30)
    assert slurm.slurm_reap() == []
    run.refresh_from_db()
    assert run.status == "running"
