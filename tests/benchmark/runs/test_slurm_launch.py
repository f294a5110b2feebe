"""Launching onto Slurm where Slurm says no, the run page's word on a Slurm job, and /healthz's
report of the controller: against the session's real single-node cluster (tests/slurm_plugin.py)
and, for an unreachable controller, a slurm.conf whose controller port nobody listens on."""

from __future__ import annotations

import subprocess
import time

import pytest

from benchmark.models import Run
from benchmark.runs import slurm
from benchmark.runs.services import LaunchError, run_cancel, run_launch
from config.health import check_slurm, check_workers
from tests.benchmark.runs_support import agent, builtin_task
from tests.slurm_cluster import PARTITION

pytestmark = [pytest.mark.slurm, pytest.mark.django_db(transaction=True)]

ON_SLURM = {"runs": "slurm", "gpu": "slurm"}


@pytest.fixture
def on_slurm(settings, slurm_cluster):  # type: ignore[no-untyped-def]
    settings.RUN_EXECUTORS = ON_SLURM
    settings.SLURM_PARTITION = {"runs": PARTITION, "gpu": PARTITION}
    return slurm_cluster


def jobs_named(code: str) -> str:
    out = subprocess.run(["squeue", "-h", "-t", "all", "-o", "%j"], capture_output=True, text=True, check=True)
    return "\n".join(line for line in out.stdout.splitlines() if line == f"referee-run-{code[:8]}")


def test_it_fails_a_launch_that_sbatch_refuses_in_slurms_own_words(researcher, on_slurm, settings):
    settings.SLURM_PARTITION = {"runs": "no-such-partition", "gpu": "no-such-partition"}
    with pytest.raises(LaunchError, match="Invalid partition name specified") as raised:
        run_launch(owner=researcher, tasks=[builtin_task("prisoners_dilemma")], agent=agent())
    assert "1 of 1 run(s) could not be queued: Slurm did not take its job: sbatch: error:" in str(raised.value)
    (run,) = Run.objects.all()
    assert (run.status, run.exit_status, run.executor, run.slurm_job_id) == ("failed", "not_queued", "slurm", "")
    assert "invalid partition specified: no-such-partition" in run.error
    assert jobs_named(str(run.code)) == ""  # nothing left queued on Slurm
    import django_rq

    # nor on RQ (earlier tests of the session may have left jobs of their own runs there)
    assert all(job.args[:1] != (run.pk,) for job in django_rq.get_queue("runs").jobs)


def test_it_fails_a_launch_when_the_controller_cannot_be_reached(researcher, on_slurm, tmp_path, monkeypatch):
    dead = tmp_path / "slurm.conf"
    dead.write_text(
        "ClusterName=dead\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort=1\nAuthType=auth/none\n"
        "CredType=cred/none\nNodeName=n1 CPUs=1 State=UNKNOWN\nPartitionName=p Nodes=ALL Default=YES State=UP\n"
    )
    monkeypatch.setenv("SLURM_CONF", str(dead))
    with pytest.raises(LaunchError, match="Unable to contact slurm controller"):
        run_launch(owner=researcher, tasks=[builtin_task("prisoners_dilemma")], agent=agent())
    assert Run.objects.get().status == "failed"
    health = check_slurm()
    assert health is not None and health["ok"] is False and "is DOWN" in health["error"]


def test_it_shows_the_executor_job_and_slurms_queue_reason_on_the_run_page(researcher, client_for, on_slurm):
    held = subprocess.run(
        [
            "sbatch",
            "--parsable",
            "--hold",
            f"--partition={PARTITION}",
            "--mem=10M",
            "--output=/dev/null",
            "--wrap",
            "true",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    try:
        run = Run.objects.create(
            task=builtin_task("prisoners_dilemma"), agent=agent(), owner=researcher, executor="slurm", slurm_job_id=held
        )
        page = client_for(researcher).get(f"/runs/{run.code}/").content.decode()
        assert f"Slurm · job {held}" in page
        assert f"queued on Slurm (job {held}, reason: JobHeldUser)" in page
        Run.objects.filter(pk=run.pk).update(status="finished")
        page = client_for(researcher).get(f"/runs/{run.code}/").content.decode()
        assert f"Slurm · job {held}" in page and "queued on Slurm" not in page
    finally:
        slurm.job_cancel(held)


def test_it_asks_slurm_for_a_gpu_tasks_gres_and_the_runs_time_and_memory(researcher, on_slurm, settings):
    settings.SLURM_ACCOUNT = "lab-a"
    settings.SLURM_TIME_LIMIT_MAX = 3600
    task = builtin_task("prisoners_dilemma")
    task.config = {**task.config, "sandbox": {"gpus": 2, "cpus": 3, "memory_mb": 4096}}
    run = Run.objects.create(task=task, agent=agent(max_steps=2), owner=researcher, params={"command_timeout": 60})
    args = slurm.sbatch_args(run)
    assert {"--gres=gpu:2", "--cpus-per-task=3", "--mem=5120M", f"--partition={PARTITION}", "--account=lab-a"} <= set(
        args
    )
    assert "--time=11" in args  # 300 s setup + 2 steps x (60 s command + 120 s model call) = 660 s
    settings.SLURM_TIME_LIMIT_MAX = 120
    assert "--time=2" in slurm.sbatch_args(run)  # capped


def test_it_reports_the_controller_on_healthz_only_where_slurm_executes_runs(on_slurm, settings):
    health = check_slurm()
    assert health is not None and health["ok"] is True
    assert "is UP" in health["controller"] and PARTITION in health["partitions"]
    assert health["partitions"] == {PARTITION: {"available": "up", "nodes": {"idle": 1}}}
    assert "runs" not in check_workers().get("error", "")  # Slurm runs the run queues: no RQ worker needed
    settings.SLURM_PARTITION = {"runs": "gone", "gpu": PARTITION}
    health = check_slurm()
    assert health["ok"] is False and "partition 'gone' (queue runs) is not known to Slurm" in health["error"]
    settings.RUN_EXECUTORS = {"runs": "rq", "gpu": "rq"}
    assert check_slurm() is None


def sbatch(*args: str) -> str:
    return subprocess.run(
        ["sbatch", "--parsable", f"--partition={PARTITION}", "--mem=10M", "--output=/dev/null", *args],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def wait_state(job_id: str, prefix: str) -> None:
    deadline = time.monotonic() + 60
    while not slurm.job_states([job_id])[job_id].state.startswith(prefix):
        assert time.monotonic() < deadline, f"job {job_id} never {prefix}"
        time.sleep(0.2)


def test_it_lets_slurm_say_no_to_a_gpu_task_on_a_cluster_without_gpus(researcher, on_slurm):
    task = builtin_task("prisoners_dilemma")
    task.config = {**task.config, "sandbox": {**task.config.get("sandbox", {}), "gpus": 1}}
    task.save(update_fields=["config"])
    # No GPU worker is live, and Referee does not refuse: the cluster's own answer is the one shown.
    with pytest.raises(LaunchError, match="Invalid generic resource \\(gres\\) specification"):
        run_launch(owner=researcher, tasks=[task], agent=agent())
    assert Run.objects.get().status == "failed"


def test_it_fails_a_queued_run_whose_job_ended_before_it_claimed_the_run(researcher, on_slurm):
    job_id = sbatch("--wrap", "exit 3")  # as a node without the checkout would end it
    wait_state(job_id, "FAILED")
    run = Run.objects.create(
        task=builtin_task("prisoners_dilemma"), agent=agent(), owner=researcher, executor="slurm", slurm_job_id=job_id
    )
    assert slurm.slurm_reap() == [(run, "failed")]
    run.refresh_from_db()
    assert (run.status, run.exit_status) == ("failed", "not_queued")
    assert f"Not started: Slurm ended job {job_id} on referee-node1: FAILED (reason: NonZeroExitCode)" in run.error


def test_it_scancels_a_cancelled_runs_job_that_outlives_its_grace(researcher, on_slurm, settings, redis_client):
    settings.SLURM_CANCEL_GRACE = 0
    job_id = sbatch("--wrap", "sleep 300")  # a job whose run does not stop itself
    wait_state(job_id, "RUNNING")
    run = Run.objects.create(
        task=builtin_task("prisoners_dilemma"),
        agent=agent(),
        owner=researcher,
        executor="slurm",
        slurm_job_id=job_id,
        status="running",
    )
    assert run_cancel(run=run) and run.status == "cancelling"
    assert slurm.slurm_reap() == [(run, "scancelled")]
    wait_state(job_id, "CANCELLED")
    assert slurm.slurm_reap() == [(run, "cancelled")]
    run.refresh_from_db()
    assert (run.status, run.exit_status) == ("cancelled", "exit_cancelled")


def test_it_leaves_a_cancelled_runs_job_alone_within_its_grace(researcher, on_slurm, settings, redis_client):
    settings.SLURM_CANCEL_GRACE = 600
    job_id = sbatch("--wrap", "sleep 300")
    try:
        wait_state(job_id, "RUNNING")
        run = Run.objects.create(
            task=builtin_task("prisoners_dilemma"),
            agent=agent(),
            owner=researcher,
            executor="slurm",
            slurm_job_id=job_id,
            status="running",
        )
        run_cancel(run=run)
        assert slurm.slurm_reap() == []
        assert slurm.job_states([job_id])[job_id].state == "RUNNING"
    finally:
        slurm.job_cancel(job_id)


def test_it_fails_a_queued_slurm_run_that_never_got_a_job(researcher, on_slurm):
    from datetime import timedelta

    from django.utils import timezone

    run = Run.objects.create(
        task=builtin_task("prisoners_dilemma"), agent=agent(), owner=researcher, executor="slurm", slurm_job_id=""
    )
    assert slurm.slurm_reap() == []  # within the grace: its sbatch may still be answering
    Run.objects.filter(pk=run.pk).update(created_at=timezone.now() - timedelta(minutes=5))  # no queued_at
    assert slurm.slurm_reap() == [(run, "failed")]
    run.refresh_from_db()
    assert run.status == "failed" and "before sbatch gave it a Slurm job" in run.error
