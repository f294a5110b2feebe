"""Assignment: who reviews which item. The plan (balanced load, expertise first, conflicts and
identifying accounts out), applying it race-free, reassigning one assignment, reclaiming stale ones.

Race-freedom rests on the database, not on the Python code: `assignment_reviewer_once_per_item`
and `assignment_one_live_per_slot` refuse a double assignment whatever two workers compute, and
the campaign row is locked (select_for_update on PostgreSQL; SQLite's IMMEDIATE transactions
take the write lock at BEGIN) so that concurrent assigners normally queue rather than collide.
A collision that still happens rolls that worker's batch back and it plans again from fresh state.
"""

from __future__ import annotations

import logging
import random
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from django.db import IntegrityError, OperationalError, transaction
from django.db.models import Q
from django.utils import timezone

from review.assignment.eligibility import (
    campaign_agent_run_ids,
    campaign_run_ids,
    identifying_members,
    identifying_reason,
)
from review.models import Assignment, Campaign, CampaignItem, CampaignReviewer

log = logging.getLogger(__name__)

ASSIGN_ATTEMPTS = 12


class AssignmentError(ValueError):
    """An admin action that would break a rule (conflict, duplicate, not a member)."""


@dataclass
class AssignResult:
    created: int = 0
    shortfall: dict[str, int] = field(default_factory=dict)  # item code -> slots nobody eligible could fill
    attempts: int = 1
    refused: dict[str, str] = field(
        default_factory=dict
    )  # username -> why they get nothing (review.assignment.eligibility)
    members: int = -1  # active members the plan could draw on (-1: not counted)
    closed: bool = False  # the campaign is closed: nothing was planned


def tag_set(values: Any) -> set[str]:
    """Tags compared case-blind: an item's (task category, slug words) against a member's expertise."""
    return {str(v).strip().lower() for v in (values or []) if str(v).strip()}


REVOKED_REASON = "their invitation was revoked before they accepted it"


def _invitation_revoked(member: CampaignReviewer) -> bool:
    """Invited from this campaign and revoked before use (accounts' invitation_revoke)."""
    invitation = member.invitation if member.invitation_id else None
    return invitation is not None and invitation.revoked_at is not None and invitation.used_at is None


def _plan(campaign: Campaign) -> tuple[list[Assignment], dict[str, int], dict[str, str]]:
    """Greedy balanced plan: most-constrained items first; per slot the least-loaded eligible reviewer,
    expertise overlap breaking ties (so expertise is matched where it costs no balance). Members who
    could identify the systems (review.assignment.eligibility) get nothing, and are returned with the reason."""
    k = campaign.reviewers_per_item
    items = list(campaign.items.select_related("artifact__research_run", "run__agent"))
    members = list(campaign.members.filter(active=True).select_related("reviewer__profile", "invitation"))
    blocked = identifying_members(
        [m.reviewer_id for m in members],
        {i.artifact.research_run_id for i in items if i.artifact_id},
        {i.run_id for i in items if i.run_id},
    )
    # An invitee whose invitation was revoked before use will never sign in to review: no new items.
    blocked.update({m.reviewer_id: REVOKED_REASON for m in members if _invitation_revoked(m)})
    refused = {m.reviewer.get_username(): blocked[m.reviewer_id] for m in members if m.reviewer_id in blocked}
    members = [m for m in members if m.reviewer_id not in blocked]
    taken: set[tuple[int, int]] = set()
    live_slots: dict[int, set[int]] = defaultdict(set)
    load: dict[int, int] = defaultdict(int)
    for item_id, reviewer_id, slot, status in Assignment.objects.filter(campaign=campaign).values_list(
        "item_id", "reviewer_id", "slot", "status"
    ):
        taken.add((item_id, reviewer_id))
        if status in Assignment.LIVE:
            live_slots[item_id].add(slot)
            load[reviewer_id] += 1
    item_conflicts: set[tuple[int, int]] = set()
    system_conflicts: set[tuple[int, str]] = set()
    for reviewer_id, item_id, system in campaign.conflicts.values_list("reviewer_id", "item_id", "system"):
        if item_id:
            item_conflicts.add((reviewer_id, item_id))
        else:
            system_conflicts.add((reviewer_id, system.strip().lower()))

    def eligible(member: CampaignReviewer, item: CampaignItem) -> bool:
        rid = member.reviewer_id
        return (
            (item.pk, rid) not in taken
            and (rid, item.pk) not in item_conflicts
            and (rid, item.system.strip().lower()) not in system_conflicts
        )

    expertise = {m.reviewer_id: tag_set(m.tags) for m in members}
    order = sorted(items, key=lambda it: (sum(eligible(m, it) for m in members), it.pk))
    plan: list[Assignment] = []
    shortfall: dict[str, int] = {}
    for item in order:
        free = [s for s in range(1, k + 1) if s not in live_slots[item.pk]]
        item_tags = tag_set(item.tags)
        for n, slot in enumerate(free):
            candidates = [
                m for m in members if eligible(m, item) and (m.max_load is None or load[m.reviewer_id] < m.max_load)
            ]
            if not candidates:
                shortfall[item.code] = len(free) - n
                break
            best = min(
                candidates,
                key=lambda m: (load[m.reviewer_id], -len(expertise[m.reviewer_id] & item_tags), m.reviewer_id),
            )
            plan.append(Assignment(campaign=campaign, item=item, reviewer_id=best.reviewer_id, slot=slot))
            taken.add((item.pk, best.reviewer_id))
            load[best.reviewer_id] += 1
    return plan, shortfall, refused


def campaign_assign(*, campaign: Campaign) -> AssignResult:
    """Fill every item's free slots; safe to run from several workers at once (see module doc)."""
    for attempt in range(1, ASSIGN_ATTEMPTS + 1):
        try:
            with transaction.atomic():
                locked = Campaign.objects.select_for_update().get(pk=campaign.pk)
                if locked.status == Campaign.Status.CLOSED:  # a closed campaign's slots stay as they are
                    return AssignResult(attempts=attempt, closed=True)
                plan, shortfall, refused = _plan(locked)
                # One INSERT per row on purpose: bulk_create would hide which row collided, and
                # the unique constraints must see each one.
                for assignment in plan:
                    assignment.save(force_insert=True)
            members = locked.members.filter(active=True).count()
            return AssignResult(
                created=len(plan), shortfall=shortfall, attempts=attempt, refused=refused, members=members
            )
        except IntegrityError:
            log.info("campaign %s: assignment collided with another worker; planning again", campaign.pk)
        except OperationalError as exc:  # SQLite: the other writer held the lock past busy_timeout
            if "locked" not in str(exc):
                raise
            log.info("campaign %s: database busy; planning again", campaign.pk)
        # Jittered exponential back-off so the racers stop colliding in lock-step.
        time.sleep(min(1.0, 0.02 * 2**attempt) * random.uniform(0.5, 1.0))
    raise AssignmentError(f"could not assign after {ASSIGN_ATTEMPTS} attempts (constant contention)")


def assignment_reassign(*, assignment: Assignment, to_reviewer: Any) -> Assignment:
    """Move an open assignment to another member; the new one takes the same slot."""
    with transaction.atomic():
        Campaign.objects.select_for_update().get(pk=assignment.campaign_id)
        current = Assignment.objects.select_related("item__artifact__research_run").get(pk=assignment.pk)
        if current.status not in Assignment.OPEN:
            raise AssignmentError(f"assignment {current.code} is {current.status}: only open ones move")
        campaign = current.campaign
        target = campaign.members.filter(reviewer=to_reviewer, active=True).select_related("invitation").first()
        if target is None:
            raise AssignmentError(f"{to_reviewer} is not an active member of {campaign}")
        if _invitation_revoked(target):
            raise AssignmentError(f"{to_reviewer}: {REVOKED_REASON}")
        reason = identifying_reason(to_reviewer, campaign_run_ids(campaign), campaign_agent_run_ids(campaign))
        if reason:
            raise AssignmentError(reason)
        if Assignment.objects.filter(item=current.item, reviewer=to_reviewer).exists():
            raise AssignmentError(f"{to_reviewer} already has (or had) this item")
        conflicted = campaign.conflicts.filter(reviewer=to_reviewer).filter(
            Q(item=current.item) | Q(system__iexact=current.item.system)
        )
        if conflicted.exists():
            raise AssignmentError(f"{to_reviewer} has a conflict with this item")
        current.status = Assignment.Status.REASSIGNED
        current.save(update_fields=["status"])
        try:
            return Assignment.objects.create(
                campaign=campaign, item=current.item, reviewer=to_reviewer, slot=current.slot
            )
        except IntegrityError as exc:
            raise AssignmentError(f"reassignment collided with a concurrent change: {exc}") from exc


def campaign_reclaim(*, campaign: Campaign, now: Any = None) -> list[str]:
    """Mark open assignments untouched since the cutoff as reclaimed; return their codes."""
    if not campaign.reclaim_after_hours:
        return []
    cutoff = (now or timezone.now()) - timezone.timedelta(hours=campaign.reclaim_after_hours)
    with transaction.atomic():
        stale = Assignment.objects.select_for_update().filter(
            campaign=campaign, status__in=Assignment.OPEN, last_activity__lt=cutoff
        )
        codes = list(stale.values_list("code", flat=True))
        Assignment.objects.filter(code__in=codes).update(status=Assignment.Status.RECLAIMED)
    return codes
