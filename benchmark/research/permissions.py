"""Who may see and act on a research run.

Released MLR-Bench runs have no owner and are public data for researchers; a run made on
Referee is its owner's (and admins'). Reviewers never see runs: model identity and costs are
what blinding hides from them.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Q, QuerySet

from accounts.roles import is_admin, is_researcher
from benchmark.models import ResearchRun


def visible_research(user: Any) -> QuerySet[ResearchRun]:
    runs = ResearchRun.objects.select_related("task", "owner")
    if is_admin(user):
        return runs
    if not is_researcher(user):
        return runs.none()
    return runs.filter(Q(owner=user) | Q(source__in=ResearchRun.RELEASED))


def can_view_research(user: Any, run: ResearchRun) -> bool:
    if is_admin(user):
        return True
    if not is_researcher(user):
        return False
    return run.owner_id == user.pk or run.source in ResearchRun.RELEASED


def can_manage_research(user: Any, run: ResearchRun) -> bool:
    """Resume or re-run: the owner and admins; imported runs are read-only."""
    if run.source != ResearchRun.Source.REFEREE:
        return False
    return is_admin(user) or (is_researcher(user) and run.owner_id == user.pk)
