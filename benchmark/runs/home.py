"""A researcher's home: their work at a glance (their runs by state, what they cost, the latest
ones, runs shared with them, their research runs), counted when asked."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, Sum

from benchmark.models import ResearchRun, Run, RunShare

LATEST = 5


def researcher_overview(user: Any) -> dict[str, Any]:
    mine = Run.objects.filter(owner=user, source=Run.Source.REFEREE)
    by_status = dict(mine.values_list("status").annotate(n=Count("id")).order_by())
    return {
        "active": sum(by_status.get(s, 0) for s in Run.ACTIVE),
        "finished": by_status.get(Run.Status.FINISHED, 0),
        "failed": by_status.get(Run.Status.FAILED, 0),
        "interrupted": by_status.get(Run.Status.INTERRUPTED, 0),
        "cancelled": by_status.get(Run.Status.CANCELLED, 0),
        "total": sum(by_status.values()),
        "cost": mine.aggregate(total=Sum("cost"))["total"] or 0.0,
        "latest": list(mine.select_related("task", "agent__endpoint", "group").order_by("-created_at")[:LATEST]),
        "shared": RunShare.objects.filter(user=user, revoked_at__isnull=True).count(),
        "research": list(
            ResearchRun.objects.filter(owner=user).select_related("task").order_by("-created_at")[:LATEST]
        ),
    }
