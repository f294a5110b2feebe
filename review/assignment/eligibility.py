"""Who may not review a campaign at all: accounts that can see which system wrote its items.

A reviewer who can open the runs or judgments behind a campaign's items (backbone names, costs,
judge scores) could identify each item's system, and blinding would mean nothing. Admins see
every run; a researcher sees their own runs and the released ones. Such an account may hold the
reviewer role (an admin confirmed it), but it is refused, with the reason, wherever it would
meet the items: the campaign form, membership, assignment, reassignment and the review pages.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import Q

from accounts.roles import ADMIN, RESEARCHER, is_admin, is_researcher
from benchmark.models import Artifact, Run
from benchmark.research.permissions import visible_research
from benchmark.runs.permissions import visible_runs


def identifying_reason(user: Any, research_run_ids: Iterable[int], agent_run_ids: Iterable[int] = ()) -> str | None:
    """Why `user` could identify the systems of the items made by these research runs, or of these
    agent runs (trajectory items), or None."""
    if not is_researcher(user):  # true for admins too
        return None
    name = user.get_username()
    if is_admin(user):
        return f"{name} is an admin and sees every run and judgment, so could identify each item's system"
    ids = set(research_run_ids)
    # The research run itself, or its experiment's agent run (which may be shared with them).
    seen = set(visible_research(user).filter(pk__in=ids).values_list("pk", flat=True))
    seen |= set(
        visible_runs(user)
        .filter(artifacts__research_run_id__in=ids)
        .values_list("artifacts__research_run_id", flat=True)
    )
    seen = len(seen & ids)
    runs = set(agent_run_ids)
    if runs:
        seen += visible_runs(user).filter(pk__in=runs).count()
    if not seen:
        return None
    return (
        f"{name} is a researcher who can see the runs and judgments behind {seen} of the items "
        "(model names, costs, judge scores), so could identify their systems"
    )


def campaign_run_ids(campaign: Any) -> list[int]:
    return list(
        Artifact.objects.filter(campaign_items__campaign=campaign).values_list("research_run_id", flat=True).distinct()
    )


def campaign_agent_run_ids(campaign: Any) -> list[int]:
    """The agent runs of a campaign's trajectory items."""
    return list(Run.objects.filter(campaign_items__campaign=campaign).values_list("pk", flat=True).distinct())


def identifying_members(
    user_ids: Iterable[int], research_run_ids: Iterable[int], agent_run_ids: Iterable[int] = ()
) -> dict[int, str]:
    """{user id: reason} for the accounts among `user_ids` that could identify the items' systems.

    One query when nobody holds a run-seeing role (the usual case: reviewers are only reviewers).
    """
    ids = set(user_ids)
    if not ids:
        return {}
    seeing = (
        get_user_model()
        .objects.filter(pk__in=ids)
        .filter(Q(is_superuser=True) | Q(groups__name__in=[ADMIN, RESEARCHER]))
        .distinct()
    )
    run_ids, agent_ids = list(research_run_ids), list(agent_run_ids)
    reasons = {}
    for user in seeing:
        reason = identifying_reason(user, run_ids, agent_ids)
        if reason:
            reasons[user.pk] = reason
    return reasons
