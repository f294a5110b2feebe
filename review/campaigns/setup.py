"""Setting a campaign up and growing it from the admin pages: invitations in bulk (tied to the
campaign where given), adding reviewers and items to a running campaign, and the assignment plan
previewed before it is applied."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import transaction

from accounts.roles import REVIEWER
from accounts.services import (
    InvitationIssued,
    InvitationRefused,
    invitation_create,
    mail_configured,
)
from benchmark.models import Artifact
from review.assignment.services import AssignmentError, AssignResult, _plan, campaign_assign
from review.campaigns.services import campaign_add_items, campaign_add_reviewers, campaign_add_runs
from review.models import Campaign

MAX_INVITES = 200  # one paste; more is a mistake or belongs in a script
_SPLIT = re.compile(r"[,;\s]+")


@dataclass
class InviteLine:
    email: str
    tags: list[str]


def parse_invite_lines(text: str) -> tuple[list[InviteLine], list[str]]:
    """One reviewer a line: an email, then optional expertise tags (`ana@uni.edu nlp, rl`).

    Returns the valid lines and, for the others, an error naming the line; valid lines are kept.
    """
    lines: list[InviteLine] = []
    errors: list[str] = []
    seen: set[str] = set()
    for number, raw in enumerate(text.splitlines(), start=1):
        words = [w for w in _SPLIT.split(raw.strip()) if w]
        if not words:
            continue
        email, tags = words[0].strip("<>").lower(), words[1:]
        try:
            validate_email(email)
        except ValidationError:
            errors.append(f"line {number}: {words[0]!r} is not an email address")
            continue
        if email in seen:
            errors.append(f"line {number}: {email} is given twice")
            continue
        seen.add(email)
        lines.append(InviteLine(email=email, tags=tags))
    if len(lines) > MAX_INVITES:
        errors.append(f"{len(lines)} emails: at most {MAX_INVITES} at once")
        lines = []
    return lines, errors


@dataclass
class InviteOutcome:
    issued: list[InvitationIssued] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # "email: why"
    mailed: bool = True  # False: no mail server, the admin passes the links on


def reviewers_invite(
    *,
    lines: list[InviteLine],
    expertise: list[str] = (),
    campaign: Campaign | None = None,
    by: Any = None,
    ttl_days: int | None = None,
) -> InviteOutcome:
    """Invite each line as a reviewer (the shared `expertise` plus the line's tags); with a campaign,
    make each invited account a member of it, tied to its invitation. One line's refusal (an
    existing account whose roles an invitation may not change, an account that could identify the
    campaign's systems) is reported and leaves the other lines done."""
    outcome = InviteOutcome(mailed=mail_configured())
    for line in lines:
        try:
            with transaction.atomic():
                issued = invitation_create(
                    email=line.email,
                    roles=[REVIEWER],
                    expertise=[*expertise, *line.tags],
                    created_by=by,
                    send=outcome.mailed,
                    ttl_days=ttl_days,
                )
                if campaign is not None:
                    user = issued.invitation.user
                    campaign_add_reviewers(
                        campaign=campaign, reviewers=[user], invitations={user.pk: issued.invitation}
                    )
        except (InvitationRefused, AssignmentError) as exc:
            outcome.refused.append(f"{line.email}: {exc}")
            continue
        outcome.issued.append(issued)
    return outcome


def campaign_grow(
    *, campaign: Campaign, reviewers: list[Any] = (), artifacts: list[Artifact] = (), runs: list[Any] = ()
) -> tuple[int, int, AssignResult | None]:
    """Add reviewers and items; in a campaign whose assignment has begun, fill the new slots now.

    Returns (members added, items added, the assignment's result or None when it had not begun).
    """
    with transaction.atomic():
        items = campaign_add_items(campaign=campaign, artifacts=list(artifacts)) if artifacts else 0
        items += campaign_add_runs(campaign=campaign, runs=list(runs)) if runs else 0
        members = campaign_add_reviewers(campaign=campaign, reviewers=list(reviewers)) if reviewers else 0
    result = None
    if (members or items) and campaign.status == Campaign.Status.OPEN and campaign.assignments.exists():
        result = campaign_assign(campaign=campaign)
    return members, items, result


@dataclass
class PlanPreview:
    rows: list[dict]  # {"item": code, "reviewer": username, "slot": n}
    per_reviewer: list[tuple[str, int]]
    shortfall: dict[str, int]
    refused: dict[str, str]
    members: int


def campaign_plan_preview(*, campaign: Campaign) -> PlanPreview:
    """What `campaign_assign` would do now, computed the same way and written nowhere."""
    plan, shortfall, refused = _plan(campaign)
    names = dict(campaign.members.values_list("reviewer_id", "reviewer__username"))
    rows = [{"item": a.item.code, "reviewer": names.get(a.reviewer_id, "?"), "slot": a.slot} for a in plan]
    per = Counter(row["reviewer"] for row in rows)
    return PlanPreview(
        rows=sorted(rows, key=lambda r: (r["item"], r["slot"])),
        per_reviewer=sorted(per.items()),
        shortfall=shortfall,
        refused=refused,
        members=campaign.members.filter(active=True).count(),
    )
