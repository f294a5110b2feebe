"""A reviewer's writes: draft saves (compare-and-set on the revision) and the final submission."""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Exists
from django.utils import timezone

from review.models import Assignment, Campaign, Review


class ReviewLocked(Exception):
    """The review is submitted (or the campaign closed): nothing more can be saved."""


class CampaignClosed(ReviewLocked):
    """The campaign is closed (review.control.services): the reviewer's unsaved work may count again if it reopens."""


class StaleRevision(Exception):
    """A draft save older than the stored one; carries the stored revision so the client can catch up."""

    def __init__(self, current: int) -> None:
        super().__init__(f"stale draft: the stored revision is {current}")
        self.current = current


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


def review_save_draft(
    *, assignment: Assignment, scores: dict, confidence: int | None, revision: int, step_tags: list | None = None
) -> DraftSaved:
    """Store a draft if `revision` is newer than the stored one (autosaves may arrive out of order).

    Compare-and-set in one UPDATE: no row lock is held across the request, and a late, older save
    can never overwrite a newer one. The first save of an assignment creates the row instead.
    `step_tags` (trajectory items, validated by review.trajectory.steps) is stored when given.
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
        # The compare-and-set: one UPDATE whose WHERE holds the revision and, again, the campaign's
        # status: a save in flight when the campaign closes (the check above passed) is refused, not stored.
        campaign_open = Campaign.objects.filter(pk=assignment.campaign_id, status=Campaign.Status.OPEN)
        updated = Review.objects.filter(
            Exists(campaign_open), assignment_id=assignment.pk, status=Review.Status.DRAFT, revision__lt=revision
        ).update(scores=scores, confidence=confidence, revision=revision, updated_at=now, **extra)
        if not updated:
            if not campaign_open.exists():
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
        # Under the campaign's row lock: a close (review.control.services) waits for this submit or refuses it.
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
