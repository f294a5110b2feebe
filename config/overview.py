"""The admin overview's numbers: what is going on now, read from the database and the job queues.

Every number is counted when asked (nothing cached or made up); the page shows them on load and
static/js/overview.js refreshes them from /overview.json while the page is open.
"""

from __future__ import annotations

from datetime import datetime, time
from typing import Any

from django.db.models import Count
from django.urls import reverse
from django.utils import timezone

from benchmark.models import ResearchRun, Run

QUEUES = ("runs", "judge", "default")
RECENT = 8


def _queued_jobs() -> dict[str, int | None]:
    """Jobs waiting per RQ queue; None for a queue Redis could not be asked about (shown as unknown)."""
    import django_rq

    counts: dict[str, int | None] = {}
    for name in QUEUES:
        try:
            counts[name] = django_rq.get_queue(name).count
        except Exception:  # Redis down: the page still serves and says the count is unknown
            counts[name] = None
    return counts


def overview_numbers() -> dict[str, Any]:
    today = timezone.make_aware(datetime.combine(timezone.localdate(), time.min))
    runs = Run.objects.all()
    finished_today = dict(runs.filter(finished_at__gte=today).values_list("status").annotate(n=Count("id")).order_by())
    recent = (
        runs.filter(finished_at__isnull=False, source=Run.Source.REFEREE)
        .select_related("task", "agent")
        .order_by("-finished_at")[:RECENT]
    )
    return {
        "runs_running": runs.filter(status=Run.Status.RUNNING).count(),
        "runs_queued": runs.filter(status=Run.Status.QUEUED).count(),
        "research_running": ResearchRun.objects.filter(status=ResearchRun.Status.RUNNING).count(),
        "research_queued": ResearchRun.objects.filter(status=ResearchRun.Status.QUEUED).count(),
        "finished_today": {status: finished_today.get(status, 0) for status in ("finished", "failed", "cancelled")},
        "queued_jobs": _queued_jobs(),
        "recent": [
            {
                "url": reverse("benchmark:run_detail", args=[run.code]),
                "task": run.task.slug,
                "method": run.method or run.agent.name,
                "status": run.status,
                "exit_status": run.exit_status,
                "best_attempt": run.best_attempt,
                "finished_at": run.finished_at.isoformat(),
            }
            for run in recent
        ],
    }
