"""Putting runs on the `runs` queue (`gpu` for GPU tasks), and finding queued runs whose job is gone.

A queue whose executor is Slurm (settings.RUN_EXECUTORS) gets an `sbatch` job per run instead
(benchmark.runs.slurm); a refusal fails the run with Slurm's words, as a lost enqueue does.

Every enqueue gets a job id of its own, kept in run.params["job_id"] before the commit, so the
run reaper can ask RQ whether the job of a queued run still exists. A launch checks the queue
first and fails with a plain QueueDown (nothing created) when Redis does not answer; an enqueue
that fails after the commit marks its run failed ("not queued") with the reason, so no run stays
`queued` forever. The reaper re-enqueues a queued run whose job is missing once, after a grace
period, and says so on the run page; a second loss marks it failed.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from django.db import transaction
from django.utils import timezone

from benchmark.models import Run
from benchmark.runs import gpus, slurm
from benchmark.runs.queue_state import ORPHAN_GRACE, queued_since, run_not_queued

log = logging.getLogger(__name__)

# The job, by its dotted path: benchmark.runs.jobs imports the services, not the other way round.
EXECUTE_JOB = "benchmark.runs.jobs.execute_run"
JOB_TIMEOUT = 6 * 3600
# RQ job states in which the job will still claim the run.
PENDING_STATES = {"queued", "started", "deferred", "scheduled"}


class QueueDown(Exception):
    """The job queue (Redis) does not answer: nothing was queued."""


def _queue(name: str = "runs") -> Any:
    import django_rq

    return django_rq.get_queue(name)


def queue_check() -> None:
    """QueueDown unless the `runs` queue's Redis answers a PING."""
    try:
        _queue().connection.ping()
    except Exception as exc:
        log.warning("the runs queue does not answer: %s", exc)
        raise QueueDown(
            "The job queue (Redis) does not answer, so nothing was launched. "
            "Try again in a moment; an administrator can check /healthz."
        ) from exc


def job_assign(run: Run, **marks: Any) -> str:
    """A new job id for `run`, saved in its params (with `marks`) inside the caller's transaction."""
    job_id = f"run-{run.code}-{uuid.uuid4().hex[:8]}"
    run.params = {**run.params, **marks, "job_id": job_id, "queued_at": timezone.now().isoformat()}
    Run.objects.filter(pk=run.pk).update(params=run.params)
    return job_id


def job_enqueue(run_id: int, job_id: str, *, timeout: int = JOB_TIMEOUT, queue: str = "runs") -> None:
    """On `runs`, or on `gpu` for a task that needs GPUs (benchmark.runs.gpus.queue_name)."""
    _queue(queue).enqueue(EXECUTE_JOB, run_id, job_id=job_id, job_timeout=timeout)


def enqueue_after_commit(
    runs: Sequence[Run],
    *,
    failed: list[Run],
    timeout: int = JOB_TIMEOUT,
    on_failure: Callable[[Run, str], Any] | None = None,
) -> None:
    """After the commit, enqueue each run's assigned job. A run whose enqueue fails goes to
    `on_failure(run, reason)` (default: marked failed, not queued) and into `failed`, so that the
    caller can say so."""
    jobs = []
    for run in runs:
        queue = gpus.queue_name(run.task)
        run.executor = slurm.executor_for(queue)  # the queue's executor now, also for a resume
        Run.objects.filter(pk=run.pk).update(executor=run.executor, slurm_job_id="")
        jobs.append((run, job_assign(run), queue))
    on_failure = on_failure or (lambda run, reason: run_not_queued(run, reason=reason))

    def enqueue() -> None:
        for run, job_id, queue in jobs:
            if run.executor == Run.Executor.SLURM:
                try:
                    slurm.job_submit(run)
                except slurm.SlurmError as exc:  # nothing queued; the run says why in Slurm's words
                    log.warning("run %s not submitted to Slurm: %s", run.code, exc)
                    on_failure(run, f"Slurm did not take its job: {exc}")
                    failed.append(run)
                continue
            try:
                job_enqueue(run.pk, job_id, timeout=timeout, queue=queue)
            except Exception as exc:
                log.warning("run %s not queued: %s", run.code, exc)
                on_failure(run, f"the job queue (Redis) did not take its job ({type(exc).__name__})")
                failed.append(run)

    transaction.on_commit(enqueue)


def _job_pending(job_id: str | None, connection: Any) -> bool:
    from rq.exceptions import NoSuchJobError
    from rq.job import Job

    if not job_id:
        return False
    try:
        status = Job.fetch(job_id, connection=connection).get_status(refresh=False)
    except NoSuchJobError:
        return False
    return str(getattr(status, "value", status)) in PENDING_STATES


def orphans_sweep() -> list[tuple[Run, str]]:
    """Queued runs past the grace period whose job is gone: re-enqueue once, fail the second time.
    Returns (run, what was done)."""
    queue = _queue()
    cutoff = timezone.now() - ORPHAN_GRACE
    done = []
    # A Slurm run's job is Slurm's to keep: benchmark.runs.slurm.slurm_reap looks after it.
    for run in Run.objects.filter(status=Run.Status.QUEUED, source=Run.Source.REFEREE, executor=Run.Executor.RQ):
        if queued_since(run) > cutoff or _job_pending(run.params.get("job_id"), queue.connection):
            continue
        if run.params.get("requeued"):
            if run_not_queued(run, reason="its job was lost from the queue again after being re-queued once"):
                done.append((run, "failed"))
            continue
        lost = run.params.get("job_id") or "(none recorded)"
        with transaction.atomic():
            # Re-read under the transaction: a cancel or a claim since the scan keeps its say.
            if not Run.objects.filter(pk=run.pk, status=Run.Status.QUEUED).exists():
                continue
            mark = {"at": timezone.now().isoformat(), "lost_job": lost}
            job_id = job_assign(run, requeued=mark)
        job_enqueue(run.pk, job_id, queue=gpus.queue_name(run.task))
        done.append((run, "re-queued"))
    return done
