"""Campaign flows that span models: assignment, reassignment, reclaim, draft saves and submission.

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
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.db import IntegrityError, OperationalError, transaction
from django.db.models import Count, Q
from django.utils import timezone

from accounts.models import Profile
from benchmark.models import Artifact, Run
from config.db import update_rows
from judge.models import Rubric
from review import blinding, tells
from review.eligibility import campaign_agent_run_ids, campaign_run_ids, identifying_members, identifying_reason
from review.models import Assignment, Campaign, CampaignItem, CampaignReviewer, Conflict, Review

log = logging.getLogger(__name__)

ASSIGN_ATTEMPTS = 12


class ReviewLocked(Exception):
    """The review is submitted (or the campaign closed): nothing more can be saved."""


class CampaignClosed(ReviewLocked):
    """The campaign is closed (review.control): the reviewer's unsaved work may count again if it reopens."""


class StaleRevision(Exception):
    """A draft save older than the stored one; carries the stored revision so the client can catch up."""

    def __init__(self, current: int) -> None:
        super().__init__(f"stale draft: the stored revision is {current}")
        self.current = current


class AssignmentError(ValueError):
    """An admin action that would break a rule (conflict, duplicate, not a member)."""


@dataclass
class AssignResult:
    created: int = 0
    shortfall: dict[str, int] = field(default_factory=dict)  # item code -> slots nobody eligible could fill
    attempts: int = 1
    refused: dict[str, str] = field(default_factory=dict)  # username -> why they get nothing (review.eligibility)
    members: int = -1  # active members the plan could draw on (-1: not counted)
    closed: bool = False  # the campaign is closed: nothing was planned


def _tags(values: Any) -> set[str]:
    return {str(v).strip().lower() for v in (values or []) if str(v).strip()}


# ---------------------------------------------------------------- campaign set-up


def campaign_create(
    *,
    name: str,
    rubric: Rubric,
    artifacts: list[Artifact],
    runs: list[Run] = (),
    reviewers: list[Any] = (),
    reviewers_per_item: int = 2,
    stage: str = Artifact.Stage.PAPER,
    deadline: Any = None,
    show_supplementary: bool = False,
    reclaim_after_hours: int = 72,
    status: str = Campaign.Status.OPEN,
    created_by: Any = None,
) -> Campaign:
    with transaction.atomic():
        campaign = Campaign.objects.create(
            name=name,
            rubric=rubric,
            stage=stage,
            reviewers_per_item=reviewers_per_item,
            deadline=deadline,
            show_supplementary=show_supplementary,
            reclaim_after_hours=reclaim_after_hours,
            status=status,
            created_by=created_by,
        )
        campaign_add_items(campaign=campaign, artifacts=artifacts)
        if runs:
            campaign_add_runs(campaign=campaign, runs=list(runs))
        campaign_add_reviewers(campaign=campaign, reviewers=list(reviewers))
    return campaign


UNBLINDABLE = Q(data__has_key="pdf") & ~Q(data__pdf="") & Q(content="")  # the same rule, for querysets


def cannot_blind(artifact: Artifact) -> bool:
    """A paper that came as a PDF and yielded no text: reviewers would have only the original to read."""
    data = artifact.data or {}
    return bool(data.get("pdf")) and not (artifact.content or "").strip()


def campaign_add_items(*, campaign: Campaign, artifacts: list[Artifact]) -> int:
    """Add artifacts (skipping ones already in); item tags come from the task's category and slug words."""
    have = set(campaign.items.values_list("artifact_id", flat=True))
    unblindable = [f"{a.research_run.task.slug} ({a.stage})" for a in artifacts if a.pk not in have and cannot_blind(a)]
    if unblindable:
        raise ValueError(
            f"these items cannot be blinded, so no reviewer may see them: {', '.join(unblindable)} (a PDF paper "
            "without a text layer: reviewers read the extracted, scrubbed text, and there is none)"
        )
    new = []
    for artifact in artifacts:
        if artifact.pk in have:
            continue
        task = artifact.research_run.task
        tags = _tags([task.category, *task.slug.replace("-", "_").split("_")])
        new.append(CampaignItem(campaign=campaign, artifact=artifact, tags=sorted(tags)))
        have.add(artifact.pk)
    CampaignItem.objects.bulk_create(new)
    _refresh_names(campaign)
    return len(new)


def campaign_add_runs(*, campaign: Campaign, runs: list[Run]) -> int:
    """Add finished agent runs as trajectory items (skipping ones already in); tags as for artifacts."""
    if not campaign.is_trajectory:
        raise ValueError(f"campaign {campaign.name!r} reviews {campaign.stage} items, not trajectories")
    unfinished = [str(r.code) for r in runs if r.status != Run.Status.FINISHED]
    if unfinished:
        raise ValueError(f"only finished runs can be reviewed (not: {', '.join(unfinished)})")
    have = set(campaign.items.values_list("run_id", flat=True))
    new = []
    for run in runs:
        if run.pk in have:
            continue
        task = run.task
        tags = _tags([task.category, *task.slug.replace("-", "_").split("_")])
        new.append(CampaignItem(campaign=campaign, run=run, tags=sorted(tags)))
        have.add(run.pk)
    CampaignItem.objects.bulk_create(new)
    _refresh_names(campaign)
    return len(new)


def _refresh_names(campaign: Campaign) -> None:
    """Every system name of the campaign's items (scrubbed from each), then the stored paper renders."""
    items = list(
        campaign.items.select_related(
            "artifact__research_run__task", "artifact__experiment_run__agent", "run__agent__endpoint"
        )
    )
    labels = [
        label
        for item in items
        for label in (blinding.run_labels(item.run) if item.run_id else blinding.artifact_labels(item.artifact))
    ]
    names = blinding.system_names(*labels)
    if names != campaign.blind_names:
        campaign.blind_names = names
        campaign.save(update_fields=["blind_names"])
    # Tells before the renders: a fixed line one system's papers carry is cut from their render.
    tells.campaign_check_tells(campaign=campaign)
    for item in items:  # new items, and all of them when a new system joined the campaign
        item.campaign = campaign
        if item.artifact_id:  # trajectories are blinded when shown (review.trajectory), not stored
            item_prerender(item=item)


def item_prerender(*, item: CampaignItem, force: bool = False) -> None:
    """Store the item's blinded render (see CampaignItem.rendered_html) and the list of every change
    it makes to the item's texts (CampaignItem.blinding_changes, shown to the admin)."""
    artifact = item.artifact
    names = blinding.item_system_names(item)
    text = blinding.reviewer_text(item, names)
    key = blinding.render_key(text, list(artifact.files or []), names)
    if item.rendered_key == key and not force:
        return
    html, used = blinding.render_blinded(text, tuple(artifact.files or []), tuple(names))
    item.rendered_html, item.rendered_figures = html, list(used)
    item.rendered_key = key
    item.blinding_changes = blinding.item_changes(item, names)
    item.save(update_fields=["rendered_html", "rendered_figures", "rendered_key", "blinding_changes"])


def campaign_add_reviewers(
    *, campaign: Campaign, reviewers: list[Any], invitations: dict[int, Any] | None = None
) -> int:
    """Add members; refuses (AssignmentError, nothing added) an account that could identify the systems.

    `invitations` ({user id: Invitation}) ties members invited from the campaign to their invitation.
    """
    invitations = invitations or {}
    refused = identifying_members(
        [user.pk for user in reviewers], campaign_run_ids(campaign), campaign_agent_run_ids(campaign)
    )
    if refused:
        raise AssignmentError("; ".join(refused.values()))
    added = 0
    for user in reviewers:
        profile = Profile.objects.filter(user=user).first()
        invitation = invitations.get(user.pk)
        expertise = (profile.expertise if profile else []) or (invitation.expertise if invitation else [])
        member, created = CampaignReviewer.objects.get_or_create(
            campaign=campaign,
            reviewer=user,
            defaults={"expertise": sorted(_tags(expertise)), "invitation": invitation},
        )
        if not created and invitation is not None:  # invited again from the campaign: the new link counts
            member.invitation = invitation
            member.expertise = member.expertise or sorted(_tags(invitation.expertise))
            member.save(update_fields=["invitation", "expertise"])
        added += created
    return added


# ---------------------------------------------------------------- assignment


def _plan(campaign: Campaign) -> tuple[list[Assignment], dict[str, int], dict[str, str]]:
    """Greedy balanced plan: most-constrained items first; per slot the least-loaded eligible reviewer,
    expertise overlap breaking ties (so expertise is matched where it costs no balance). Members who
    could identify the systems (review.eligibility) get nothing, and are returned with the reason."""
    k = campaign.reviewers_per_item
    items = list(campaign.items.select_related("artifact__research_run", "run__agent"))
    members = list(campaign.members.filter(active=True).select_related("reviewer__profile", "invitation"))
    blocked = identifying_members(
        [m.reviewer_id for m in members],
        {i.artifact.research_run_id for i in items if i.artifact_id},
        {i.run_id for i in items if i.run_id},
    )
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

    expertise = {m.reviewer_id: _tags(m.tags) for m in members}
    order = sorted(items, key=lambda it: (sum(eligible(m, it) for m in members), it.pk))
    plan: list[Assignment] = []
    shortfall: dict[str, int] = {}
    for item in order:
        free = [s for s in range(1, k + 1) if s not in live_slots[item.pk]]
        item_tags = _tags(item.tags)
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
        if not campaign.members.filter(reviewer=to_reviewer, active=True).exists():
            raise AssignmentError(f"{to_reviewer} is not an active member of {campaign}")
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


# ---------------------------------------------------------------- progress


def campaign_progress(*, campaign: Campaign) -> dict[str, Any]:
    k = campaign.reviewers_per_item
    S = Assignment.Status
    items = (
        campaign.items.select_related("artifact__research_run__task", "run__task", "run__agent")
        .annotate(
            live=Count("assignments", filter=Q(assignments__status__in=Assignment.LIVE)),
            done=Count("assignments", filter=Q(assignments__status=S.SUBMITTED)),
        )
        .order_by("id")
    )
    reviewers = (
        campaign.members.select_related("reviewer__profile", "invitation")
        .annotate(
            assigned=Count(
                "reviewer__review_assignments",
                filter=Q(
                    reviewer__review_assignments__campaign=campaign,
                    reviewer__review_assignments__status__in=Assignment.LIVE,
                ),
            ),
            submitted=Count(
                "reviewer__review_assignments",
                filter=Q(
                    reviewer__review_assignments__campaign=campaign,
                    reviewer__review_assignments__status=S.SUBMITTED,
                ),
            ),
        )
        .order_by("reviewer__username")
    )
    overdue = []
    if campaign.is_overdue:
        overdue = list(
            campaign.assignments.filter(status__in=Assignment.OPEN).select_related("reviewer", "item").order_by("id")
        )
    cutoff = campaign.reclaim_cutoff()
    reclaimable = (
        campaign.assignments.filter(status__in=Assignment.OPEN, last_activity__lt=cutoff).count() if cutoff else 0
    )
    item_rows = list(items)
    members = list(reviewers)
    refused = identifying_members(
        [m.reviewer_id for m in members], campaign_run_ids(campaign), campaign_agent_run_ids(campaign)
    )
    for member in members:
        member.refused = refused.get(member.reviewer_id, "")
    return {
        "k": k,
        "items": item_rows,
        "reviewers": members,
        "overdue": overdue,
        "reclaimable": reclaimable,
        "totals": {
            "items": len(item_rows),
            "fully_assigned": sum(1 for i in item_rows if i.live >= k),
            "fully_reviewed": sum(1 for i in item_rows if i.done >= k),
            "reviews_needed": k * len(item_rows),
            "reviews_submitted": sum(i.done for i in item_rows),
        },
    }


# ---------------------------------------------------------------- reviews


CLOSED_MESSAGE = "the campaign is closed: nothing more can be saved"
ACTIVITY_GRANULARITY = timedelta(minutes=1)


def _writable(assignment: Assignment) -> None:
    if assignment.campaign.status != Campaign.Status.OPEN:
        if assignment.campaign.status == Campaign.Status.CLOSED:
            raise CampaignClosed(CLOSED_MESSAGE)
        raise ReviewLocked("the campaign is not open")
    if assignment.status not in Assignment.OPEN:
        raise ReviewLocked(f"the assignment is {assignment.status}")


@dataclass(frozen=True)
class DraftSaved:
    revision: int
    saved_at: Any


# The draft's compare-and-set, with the SQL built once (config.db.update_rows; issue 16).
_NEWER_DRAFT = (
    "assignment_id = %s AND status = %s AND revision < %s"
    f" AND EXISTS (SELECT 1 FROM {Campaign._meta.db_table} c WHERE c.id = %s AND c.status = %s)"
)


def review_save_draft(
    *, assignment: Assignment, scores: dict, confidence: int | None, revision: int, step_tags: list | None = None
) -> DraftSaved:
    """Store a draft if `revision` is newer than the stored one (autosaves may arrive out of order).

    Compare-and-set in one UPDATE: no row lock is held across the request, and a late, older save
    can never overwrite a newer one. The first save of an assignment creates the row instead.
    `step_tags` (trajectory items, validated by review.trajectory) is stored when given.
    """
    _writable(assignment)
    now = timezone.now()
    extra = {} if step_tags is None else {"step_tags": step_tags}
    # The assignment's activity is what reclaims and reminders measure, in hours: an autosave every
    # few seconds touches it at most once a minute, so most saves are one UPDATE and no transaction.
    touch = (
        assignment.status != Assignment.Status.STARTED
        or assignment.last_activity is None
        or now - assignment.last_activity >= ACTIVITY_GRANULARITY
    )
    with transaction.atomic() if touch else nullcontext():
        # The campaign's status is checked again in the same statement: a save in flight when the
        # campaign closes (the check above passed) is refused, not stored.
        updated = update_rows(
            Review,
            _NEWER_DRAFT,
            [assignment.pk, str(Review.Status.DRAFT), revision, assignment.campaign_id, str(Campaign.Status.OPEN)],
            set={"scores": scores, "confidence": confidence, "revision": revision, "updated_at": now, **extra},
        )
        if not updated:
            if not Campaign.objects.filter(pk=assignment.campaign_id, status=Campaign.Status.OPEN).exists():
                raise CampaignClosed(CLOSED_MESSAGE)
            current = Review.objects.filter(assignment=assignment).values_list("status", "revision").first()
            if current is None:
                try:
                    with transaction.atomic():
                        Review.objects.create(
                            assignment=assignment, scores=scores, confidence=confidence, revision=revision, **extra
                        )
                except IntegrityError:  # a concurrent first save won; the caller retries with its revision
                    raise StaleRevision(0) from None
            elif current[0] != Review.Status.DRAFT:
                raise ReviewLocked("the review is submitted")
            else:
                raise StaleRevision(current[1])
        if touch:
            Assignment.objects.filter(pk=assignment.pk, status__in=Assignment.OPEN).update(
                status=Assignment.Status.STARTED, last_activity=now
            )
    return DraftSaved(revision=revision, saved_at=now)


def review_submit(*, assignment: Assignment, scores: dict, confidence: int, step_tags: list | None = None) -> Review:
    """Store the validated final review and lock it (the form validated completeness)."""
    _writable(assignment)
    now = timezone.now()
    with transaction.atomic():
        # Under the campaign's row lock: a close (review.control) waits for this submit or refuses it.
        status = Campaign.objects.select_for_update().filter(pk=assignment.campaign_id).values_list("status", flat=True)
        if status.first() != Campaign.Status.OPEN:
            raise CampaignClosed(CLOSED_MESSAGE)
        review, _ = Review.objects.get_or_create(assignment=assignment)
        review = Review.objects.select_for_update().get(pk=review.pk)
        if review.status != Review.Status.DRAFT:
            raise ReviewLocked("the review is already submitted")
        review.scores = scores
        review.confidence = confidence
        if step_tags is not None:
            review.step_tags = step_tags
        review.status = Review.Status.SUBMITTED
        review.submitted_at = now
        review.revision += 1
        review.save()
        moved = Assignment.objects.filter(pk=assignment.pk, status__in=Assignment.OPEN).update(
            status=Assignment.Status.SUBMITTED, last_activity=now
        )
        if not moved:  # reclaimed or reassigned between the check and here
            raise ReviewLocked("the assignment is no longer yours")
    return review


def conflict_add(
    *, campaign: Campaign, reviewer: Any, item: CampaignItem | None = None, system: str = "", reason: str = ""
) -> Conflict:
    return Conflict.objects.create(
        campaign=campaign, reviewer=reviewer, item=item, system="" if item else system.strip(), reason=reason
    )
