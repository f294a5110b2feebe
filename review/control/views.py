"""Control-room actions of a campaign (review.control.services): open (gated by its check for
systematic tells, review.blinding.tells), close, reopen, remind reviewers, resolve problem reports.
Admins only, POST only; each redirects back to the campaign page with what it did, except reminders
without a mail server: their answer is the uncached page of what would have been sent."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.cache import add_never_cache_headers
from django.views.decorators.http import require_POST

from accounts.roles import ADMIN, role_required
from judge.forms import JudgeModelsForm
from review.control.notices import report_reminders
from review.control.reports import ReportRefused, report_resolve
from review.control.services import (
    REMIND_EVERY,
    ControlRefused,
    campaign_close,
    campaign_open,
    campaign_reopen,
    open_reports,
    open_work,
    reminders_send,
    status_history,
)
from review.models import Campaign, ItemReport
from review.trajectory.judging import campaign_judgment_summary


def control_context(campaign: Campaign, user: Any) -> dict[str, Any]:
    """What the campaign page's control partial shows: open work and reminders, reports, the status
    log; for a trajectory campaign the judge's work on its runs and the form that asks for more."""
    return {
        "remind_rows": open_work(campaign),
        "remind_hours": int(REMIND_EVERY.total_seconds() // 3600),
        "open_reports": open_reports(campaign),
        "status_history": status_history(campaign),
        "judging": campaign_judgment_summary(campaign),
        "judge_form": JudgeModelsForm(user=user) if campaign.is_trajectory else None,
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
    back = reverse("review:campaign_detail", args=[campaign.code])
    try:
        result = reminders_send(campaign=campaign, by=request.user)
    except ControlRefused as exc:
        messages.error(request, f"No reminders sent: {exc}.")
        return redirect(back)
    report_reminders(request, result)
    if result.mailed or not (result.unsent or result.reinvited):
        return redirect(back)
    # No mail server: what would have gone, shown this once (new invitation links are only stored hashed).
    page = render(request, "review/reminders_unsent.html", {"result": result, "campaign": campaign, "back": back})
    add_never_cache_headers(page)
    return page


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
        # Named by the item's code, as the problem-report table names it (the assignment's code is the reviewer's).
        if decision == "dismiss":
            messages.success(request, f"Report on item {report.assignment.item.code} dismissed.")
        elif returned:
            messages.success(
                request, f"Report on item {report.assignment.item.code} accepted: its slot was given back."
            )
        else:
            messages.success(
                request,
                f"Report on item {report.assignment.item.code} accepted (the review was submitted: the slot stays).",
            )
    return redirect("review:campaign_detail", campaign.code)


@require_POST
@role_required(ADMIN)
def campaign_open_view(request: HttpRequest, code: str) -> HttpResponse:
    """Open the draft campaign; refused while tells remain that cannot be hidden, unless accepted."""
    campaign = get_object_or_404(Campaign, code=code)
    accept = request.POST.get("accept_tells") == "1"
    try:
        campaign_open(campaign=campaign, by=request.user, accept_tells=accept)
    except ControlRefused as exc:
        messages.error(request, f"Not opened: {exc}.")
        return redirect(f"{reverse('review:campaign_detail', args=[campaign.code])}#tells")
    messages.success(request, "Campaign opened: its reviewers see their assigned items.")
    return redirect("review:campaign_detail", campaign.code)
