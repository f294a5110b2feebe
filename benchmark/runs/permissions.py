"""Who may see and act on a run. Reviewers never see runs (model identity, costs, scores)."""

from __future__ import annotations

from typing import Any

from django.db.models import Q, QuerySet

from accounts.roles import is_admin, is_researcher
from benchmark.models import Run, RunShare


def visible_runs(user: Any) -> QuerySet[Run]:
    """Admins see every run; a researcher sees their own runs, those shared with them, and the
    imported MLGym runs (released public data, owned by nobody, compared against on leaderboards)."""
    runs = Run.objects.select_related("task", "agent")
    if is_admin(user):
        return runs
    if not is_researcher(user):
        return runs.none()
    # A subquery, not a join on shares: no DISTINCT over whole run rows, which the paged and
    # filtered runs list would pay on every count and page.
    live_shares = RunShare.objects.filter(user=user, revoked_at__isnull=True).values("run_id")
    return runs.filter(Q(owner=user) | Q(pk__in=live_shares) | Q(source=Run.Source.MLGYM))


def can_view_run(user: Any, run: Run) -> bool:
    if is_admin(user):
        return True
    if not is_researcher(user):
        return False
    if run.source == Run.Source.MLGYM:
        return True
    return run.owner_id == user.pk or RunShare.objects.filter(run=run, user=user, revoked_at__isnull=True).exists()


def had_access(user: Any, run: Run) -> bool:
    """A share of this run to `user` existed and was revoked: they know the run, so say it is withdrawn."""
    return bool(getattr(user, "is_authenticated", False)) and RunShare.objects.filter(run=run, user=user).exists()


def can_manage_run(user: Any, run: Run) -> bool:
    """Cancel and share: the owner and admins, not the researchers it is shared with."""
    return is_admin(user) or (is_researcher(user) and run.owner_id == user.pk)
