"""The reaper's second source, for real: a cluster with accounting (slurmdbd on a private MariaDB,
tests/slurm_cluster.py) whose controller forgets ended jobs after MinJobAge=2 (the least Slurm's
documentation recommends), so that only sacct can say how a job ended. Its own cluster, for this
module only: the session's cluster (no accounting) stays as it is for the other Slurm tests."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest

from benchmark.runs import slurm
from tests.benchmark.runs.test_slurm import wait_for
from tests.benchmark.runs.test_slurm_reap import NEVER_KNOWN, slurm_run
from tests.slurm_cluster import NODE, PARTITION, URGENT, SlurmCluster, missing_binaries, start

# Every test of the module a transactional db test, so that pytest-django's ordering (db tests first,
# then transactional ones, then the rest) keeps them together: the module's cluster starts once.
pytestmark = [pytest.mark.slurm, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def accounting_cluster() -> Iterator[SlurmCluster]:
    missing = missing_binaries(accounting=True)
    if missing:
        pytest.skip(
            f"Slurm accounting is not installed here ({', '.join(missing)} not found): "
            "apt-get install slurm-wlm munge slurmdbd mariadb-server"
        )
    cluster = start(accounting=True, extra="MinJobAge=2\n")
    yield cluster
    cluster.stop()


def sbatch(*args: str) -> str:
    out = subprocess.run(
        ["sbatch", "--parsable", "--output=/dev/null", *args], capture_output=True, text=True, check=True
    )
    return out.stdout.strip()


def controller_says(job_ids: list[str]) -> str:
    """squeue's rows for these jobs; "" once the controller has forgotten them all."""
    args = ["squeue", "-h", "-t", "all", "-j", ",".join(job_ids), "-o", "%i|%T"]
    return subprocess.run(args, capture_output=True, text=True, check=False).stdout.strip()


def running(job_id: str) -> None:
    wait_for(lambda: controller_says([job_id]) == f"{job_id}|RUNNING", timeout=60, what=f"job {job_id} to run")


@pytest.fixture(scope="module")
def ended(accounting_cluster: SlurmCluster) -> dict[str, str]:
    """Jobs that ended each their own way (by name), once the controller no longer knows any."""
    jobs = {"completed": sbatch("--wrap", "true"), "failed": sbatch("--wrap", "exit 3")}
    jobs["cancelled"] = sbatch("--wrap", "sleep 300")
    running(jobs["cancelled"])
    subprocess.run(["scancel", jobs["cancelled"]], check=True)  # by an administrator, while it ran
    jobs["never_started"] = sbatch("--hold", "--wrap", "true")
    subprocess.run(["scancel", jobs["never_started"]], check=True)
    jobs["preempted"] = sbatch(f"--partition={PARTITION}", "--exclusive", "--wrap", "sleep 300")
    running(jobs["preempted"])
    urgent = sbatch(f"--partition={URGENT}", "--exclusive", "--wrap", "true")
    ids = [*jobs.values(), urgent]
    wait_for(lambda: controller_says(ids) == "", timeout=90, what="the controller to forget the ended jobs")
    return jobs


def test_it_reads_how_a_job_ended_from_accounting_once_the_controller_forgot_it(ended):
    states = slurm.job_states([*ended.values(), NEVER_KNOWN])
    # One answer per job: sacct's rows of the jobs' steps (N.batch, N.extern) are not jobs.
    assert sorted(states) == sorted([*ended.values(), NEVER_KNOWN])
    seen = {name: (states[job].state, states[job].nodes, states[job].forgotten) for name, job in ended.items()}
    assert seen == {
        "completed": ("COMPLETED", NODE, False),
        "failed": ("FAILED", NODE, False),
        "cancelled": ("CANCELLED", NODE, False),  # sacct: "CANCELLED by 0"
        "never_started": ("CANCELLED", "", False),  # sacct: nodes "None assigned"
        "preempted": ("PREEMPTED", NODE, False),
    }
    assert not any(state.live for state in states.values())
    never = states[NEVER_KNOWN]
    assert never.forgotten and never.reason == "it has no record of the job"
    assert "(squeue: not in the controller's records; sacct: it has no record of the job)" in never.ended_words()


@pytest.fixture
def on_accounting(settings, accounting_cluster):  # type: ignore[no-untyped-def]
    settings.RUN_EXECUTORS = {"runs": "slurm", "gpu": "slurm"}
    settings.SLURM_PARTITION = {"runs": PARTITION, "gpu": PARTITION}
    return accounting_cluster


def test_it_ends_runs_whose_forgotten_jobs_slurm_ended_with_the_words_of_accounting(
    researcher, on_accounting, ended, redis_client
):
    # The runs' own processes are gone (no heartbeat): only the jobs' ends decide.
    preempted = slurm_run(researcher, ended["preempted"], "running")
    cancelled = slurm_run(researcher, ended["cancelled"], "running")
    never_started = slurm_run(researcher, ended["never_started"], "queued")
    unknown = slurm_run(researcher, NEVER_KNOWN, "running")
    assert sorted(what for _, what in slurm.slurm_reap()) == ["failed", "interrupted", "interrupted", "interrupted"]
    for run in (preempted, cancelled, never_started, unknown):
        run.refresh_from_db()
    assert preempted.status == "interrupted" and preempted.error.startswith(
        f"Slurm ended job {ended['preempted']} on {NODE}: PREEMPTED: a job of a higher-priority partition"
    )
    assert cancelled.status == "interrupted" and cancelled.error.startswith(
        f"Slurm ended job {ended['cancelled']} on {NODE}: CANCELLED while it ran this run."
    )
    assert never_started.status == "failed" and never_started.error.startswith(
        f"Not started: Slurm ended job {ended['never_started']}: CANCELLED before it started the run"
    )
    assert unknown.status == "interrupted" and unknown.error.startswith(
        f"Slurm no longer knows job {NEVER_KNOWN} and cannot say how it ended "
        "(squeue: not in the controller's records; sacct: it has no record of the job)"
    )
