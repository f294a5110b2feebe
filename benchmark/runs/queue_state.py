"""When a queued run was queued, and failing one whose job is not on its queue.

Below benchmark.runs.queueing (RQ's runs) and benchmark.runs.slurm (Slurm's), whose reapers both
use them.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.utils import timezone

from benchmark.models import Run
from benchmark.runs import progress

NOT_QUEUED = "not_queued"  # exit status of a run whose job could not be put on the queue
# A queued run's job is looked for only after this long: the enqueue follows the commit.
ORPHAN_GRACE = timedelta(seconds=60)


def run_not_queued(run: Run, *, reason: str) -> bool:
    """Mark a queued run failed because its job is not on the queue; its page says why."""
    updated = Run.objects.filter(pk=run.pk, status=Run.Status.QUEUED).update(
        status=Run.Status.FAILED,
        exit_status=NOT_QUEUED,
        error=f"Not started: {reason}. Launch it again.",
        finished_at=timezone.now(),
    )
    if updated:
        run.refresh_from_db()
        progress.run_status_send(run)
    return bool(updated)


def queued_since(run: Run) -> datetime:
    try:
        return datetime.fromisoformat(run.params["queued_at"])
    except (KeyError, TypeError, ValueError):
        return run.created_at
