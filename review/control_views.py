"""Control-room actions of a campaign (review.control): close, reopen, remind reviewers, resolve
problem reports. Admins only, POST only; each redirects back to the campaign page with what it did."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_POST

from accounts.roles import ADMIN, role_required
from review.control import (
    REMIND_EVERY,
    ControlRefused,
    campaign_close,
    campaign_reopen,
    open_reports,
    open_work,
    reminders_send,
    status_history,
)
from review.models import Campaign, ItemReport
from review.reports import ReportRefused, report_resolve


def control_context(campaign: Campaign) -> dict[str, Any]:
    """What the campaign page's control partial shows: open work and reminders, reports, the status log."""
    return {
        "remind_rows": open_work(campaign),
        "remind_hours": int(REMIND_EVERY.total_seconds() // 3600),
        "open_reports": open_reports(campaign),
        "status_history": status_history(campaign),
    }


@require_POST
@role_required(ADMIN)
def campaign_close_view(request: HttpRequest, code: str) -> HttpResponse:
    campaign = get_object_or_404(Campaign, code=code)
    try:
        campaign_close(campaign=campaign, by=request.user)
    except ControlRefused as exc:
        messages.error(request, f"Not closed: {exc}.")
    else:
        messages.success(request, "Campaign closed: reviewers see it read-only; nothing more can be saved or assigned.")
    return redirect("review:campaign_detail", campaign.code)


@require_POST
@role_required(ADMIN)
def campaign_reopen_view(request: HttpRequest, code: str) -> HttpResponse:
    campaign = get_object_or_404(Campaign, code=code)
    try:
        created = campaign_reopen(campaign=campaign, by=request.user)
    except ControlRefused as exc:
        messages.error(request, f"Not reopened: {exc}.")
    else:
        messages.success(request, f"Campaign reopened; {created} new assignment(s) made for free slots.")
    return redirect("review:campaign_detail", campaign.code)


@require_POST
@role_required(ADMIN)
def campaign_remind_view(request: HttpRequest, code: str) -> HttpResponse:
    campaign = get_object_or_404(Campaign, code=code)
    try:
        result = reminders_send(campaign=campaign, by=request.user)
    except ControlRefused as exc:
        messages.error(request, f"No reminders sent: {exc}.")
        return redirect("review:campaign_detail", campaign.code)
    if result.sent:
        messages.success(request, f"Reminder mailed to {len(result.sent)} reviewer(s): {', '.join(result.sent)}.")
    if result.recent:
        hours = int(REMIND_EVERY.total_seconds() // 3600)
        messages.info(request, f"Not reminded again (reminded in the last {hours} h): {', '.join(result.recent)}.")
    if result.no_email:
        messages.warning(request, f"No email address, not reminded: {', '.join(result.no_email)}.")
    for username, error in sorted(result.failed.items()):
        messages.error(request, f"Reminder to {username} failed: {error}")
    if not (result.sent or result.recent or result.no_email or result.failed):
        messages.info(request, "Nobody has open work in this campaign: no reminder sent.")
    return redirect("review:campaign_detail", campaign.code)


@require_POST
@role_required(ADMIN)
def report_resolve_view(request: HttpRequest, code: str, report_id: int) -> HttpResponse:
    campaign = get_object_or_404(Campaign, code=code)
    report = get_object_or_404(ItemReport, campaign=campaign, pk=report_id)
    decision = request.POST.get("decision")
    if decision not in ("accept", "dismiss"):
        messages.error(request, "Choose accept or dismiss.")
        return redirect("review:campaign_detail", campaign.code)
    try:
        returned = report_resolve(report=report, accept=decision == "accept", by=request.user)
    except ReportRefused as exc:
        messages.error(request, f"Not changed: {exc}.")
    else:
        if decision == "dismiss":
            messages.success(request, f"Report on {report.assignment.code} dismissed.")
        elif returned:
            messages.success(request, f"Report on {report.assignment.code} accepted: its slot was given back.")
        else:
            messages.success(
                request, f"Report on {report.assignment.code} accepted (the review was submitted: the slot stays)."
            )
    return redirect("review:campaign_detail", campaign.code)
