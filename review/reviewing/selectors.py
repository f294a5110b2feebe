"""A reviewer's reads: their live assignment by its code (the item page and the autosave), its review,
and their queue. Through the ORM as shipped: select_related for what each page shows, defer() for
the large columns a request never reads."""

from __future__ import annotations

from typing import Any

from django.db.models import F, QuerySet
from django.db.models.functions import Substr

from review.blinding.blinded import TITLE_PREFIX
from review.models import Assignment, Campaign, Review

VISIBLE = (Campaign.Status.OPEN, Campaign.Status.CLOSED)  # a draft campaign's items are nobody's yet
# The item page shows the paper (or the run's steps) under the campaign's rubric.
PAGE_RELATED = ("campaign__rubric", "item__artifact__research_run", "item__run__agent", "item__run__task")
# The autosave reads the assignment, its campaign's status and rubric, the item's keys: not the
# paper, its stored render nor the run (half the cost of the request at 100 reviewers, issue 16).
SAVE_RELATED = ("campaign__rubric", "item")
SAVE_DEFERRED = (
    *(f"item__{f}" for f in ("tags", "rendered_html", "rendered_figures", "rendered_key", "blinding_changes")),
    "campaign__import_faults",
    "campaign__blind_names",
    "campaign__tells",
)


def _live(reviewer: Any) -> QuerySet[Assignment]:
    return Assignment.objects.filter(reviewer=reviewer, status__in=Assignment.LIVE, campaign__status__in=VISIBLE)


def reviewer_assignment(*, reviewer: Any, code: str, page: bool = True) -> Assignment | None:
    """`reviewer`'s live assignment `code` in a campaign reviewers may see, else None (another
    reviewer's code, a reclaimed one, one of a draft campaign: all alike). `page=False` loads only
    what a draft save reads."""
    rows = _live(reviewer).filter(code=code)
    if page:
        rows = rows.select_related(*PAGE_RELATED)
    else:
        rows = rows.select_related(*SAVE_RELATED).defer(*SAVE_DEFERRED)
    # get(), not first(): first() adds ORDER BY id, and with its LIMIT 1 PostgreSQL may walk the
    # primary key instead of looking the code up (4x the wall time at 100 reviewers).
    try:
        assignment = rows.get()
    except Assignment.DoesNotExist:
        return None
    assignment.item.campaign = assignment.campaign  # already loaded; the render needs the campaign's names
    return assignment


def assignment_review(*, assignment: Assignment) -> Review | None:
    try:
        return Review.objects.get(assignment=assignment)  # one per assignment (its unique key); see above
    except Review.DoesNotExist:
        return None


def reviewer_queue(*, reviewer: Any) -> list[Assignment]:
    """Every live assignment of `reviewer`, each with the head of its item's text (its title) or its
    task's title, in the order the reviewer meets them."""
    return list(
        _live(reviewer)
        .select_related("campaign", "item")
        # Only the head of each text (its title), not the papers nor their stored renders.
        .defer("item__rendered_html", "item__blinding_changes", "campaign__import_faults", "campaign__tells")
        .annotate(text_head=Substr("item__artifact__content", 1, TITLE_PREFIX), task_title=F("item__run__task__title"))
        # Within a campaign, the reviewer's keyed shuffle (review.queue_order), never the creation
        # order: that one follows the admin's pick list (task, then system) and groups systems.
        .order_by("campaign__deadline", "campaign_id", "queue_key", "id")
    )
