"""Problem reports on items: a reviewer flags an item (blinding leak, broken figure, wrong paper, a
conflict of interest...), keeps working, and an admin resolves the report.

Accepting a report gives the slot back: the reporter's open assignment becomes "returned" (no
longer live, so the item's slot is free; the reporter can never get the item again, by the
assignment's unique constraint) and the campaign's assignment fills the gap with another
eligible reviewer. A submitted review is never undone by a report: its report can be accepted
as noted, but the slot stays where it is.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from review.assignment.services import campaign_assign
from review.models import Assignment, Campaign, ItemReport


class ReportRefused(ValueError):
    """The report cannot be filed or resolved (too many open ones, already resolved)."""


def report_problem(*, assignment: Assignment, reason: str, note: str) -> ItemReport:
    if reason not in ItemReport.Reason.values:
        raise ReportRefused(f"unknown reason {reason!r}")
    open_reports = ItemReport.objects.filter(assignment=assignment, status=ItemReport.Status.OPEN).count()
    if open_reports >= ItemReport.MAX_OPEN_PER_ASSIGNMENT:
        raise ReportRefused(
            f"you already have {open_reports} open reports on this item; the organisers will look at them"
        )
    return ItemReport.objects.create(
        campaign_id=assignment.campaign_id, assignment=assignment, reason=reason, note=note[: ItemReport.NOTE_MAX]
    )


def report_resolve(*, report: ItemReport, accept: bool, by: Any) -> bool:
    """Accept or dismiss an open report; True when accepting it gave the slot back."""
    returned = False
    with transaction.atomic():
        current = ItemReport.objects.select_for_update().select_related("assignment").get(pk=report.pk)
        if current.status != ItemReport.Status.OPEN:
            raise ReportRefused(f"report {current.pk} is already {current.status}")
        current.status = ItemReport.Status.ACCEPTED if accept else ItemReport.Status.DISMISSED
        current.resolved_by, current.resolved_at = by, timezone.now()
        current.save(update_fields=["status", "resolved_by", "resolved_at"])
        if accept:
            returned = bool(
                Assignment.objects.filter(pk=current.assignment_id, status__in=Assignment.OPEN).update(
                    status=Assignment.Status.RETURNED
                )
            )
    campaign = current.assignment.campaign
    if returned and campaign.status == Campaign.Status.OPEN:
        campaign_assign(campaign=campaign)  # the freed slot goes to another eligible reviewer
    report.refresh_from_db()
    return returned
