"""Who may see and request judgments. Reviewers never see judge output (blinding), whatever else they are."""

from __future__ import annotations

from typing import Any

from accounts.roles import is_admin, is_researcher, is_reviewer
from benchmark.models import Artifact, ResearchRun


def may_see_judgments(user: Any, artifact: Artifact) -> bool:
    """Admins; the run's owner; any researcher for the released (ownerless) MLR-Bench runs."""
    if is_admin(user):
        return True
    if not is_researcher(user) or is_reviewer(user):
        return False
    run = artifact.research_run
    if run.owner_id is not None:
        return run.owner_id == user.pk
    return run.source in ResearchRun.RELEASED


def may_request_judgments(user: Any, artifact: Artifact) -> bool:
    """Judging costs money: the run's owner and admins only (released runs: admins)."""
    if is_admin(user):
        return True
    return may_see_judgments(user, artifact) and artifact.research_run.owner_id == user.pk


def may_see_released_judgments(user: Any) -> bool:
    """The judge-side pages of released data (stepwise leaderboard): admins and researchers, never reviewers.

    They show model identity next to judge scores, the two things blinding hides from reviewers.
    """
    if is_admin(user):
        return True
    return is_researcher(user) and not is_reviewer(user)
