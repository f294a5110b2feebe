"""Control-room actions of a campaign (review.control): close, reopen, remind reviewers, resolve
problem reports, ask the judge to judge a trajectory campaign's runs. Admins only, POST only; each
redirects back to the campaign page with what it did, except reminders without a mail server: their
answer is the uncached page of what would have been sent."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.cache import add_never_cache_headers
from django.views.decorators.http import require_POST

from accounts.roles import ADMIN, role_required
from judge.forms import JudgeModelsForm
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
from review.notices import report_reminders
from review.reports import ReportRefused, report_resolve
from review.trajectory_judging import campaign_judge_trajectories, campaign_judgment_summary


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
        if decision == "dismiss":
            messages.success(request, f"Report on {report.assignment.code} dismissed.")
        elif returned:
            messages.success(request, f"Report on {report.assignment.code} accepted: its slot was given back.")
        else:
            messages.success(
                request, f"Report on {report.assignment.code} accepted (the review was submitted: the slot stays)."
            )
    return redirect("review:campaign_detail", campaign.code)


@require_POST
@role_required(ADMIN)
def campaign_judge_view(request: HttpRequest, code: str) -> HttpResponse:
    """Queue the judge's judgments of the campaign's runs (review.trajectory_judging) with the chosen models."""
    campaign = get_object_or_404(Campaign.objects.select_related("rubric"), code=code)
    back = redirect(f"{reverse('review:campaign_detail', args=[campaign.code])}#judging")
    if not campaign.is_trajectory:
        messages.error(
            request, f"Nothing queued: {campaign} reviews {campaign.get_stage_display()} items, not trajectories."
        )
        return back
    form = JudgeModelsForm(request.POST, user=request.user)
    if not form.has_judges:
        messages.error(
            request,
            "Nothing queued: no model endpoint is configured for you; an admin registers one on the Endpoints page.",
        )
        return back
    if not form.is_valid():
        problems = [
            f"{form.fields[f].label}: {' '.join(e)}" if f in form.fields else " ".join(e)
            for f, e in form.errors.items()
        ]
        messages.error(request, "Nothing queued: " + "; ".join(problems))
        return back
    try:
        result = campaign_judge_trajectories(
            campaign=campaign, judge_models=form.cleaned_data["models"], requested_by=request.user
        )
    except ValidationError as exc:
        messages.error(request, f"Nothing queued: {' '.join(exc.messages)}.")
        return back
    judges = ", ".join(f"{name} on {endpoint.name}" for endpoint, name in form.cleaned_data["models"])
    retried = f", {result.retried} of them after an earlier failure" if result.retried else ""
    messages.success(
        request, f"{len(result.queued)} judgment(s) queued for {result.runs} run(s) with {judges}{retried}."
    )
    if result.judged or result.pending:
        messages.info(
            request, f"Not asked again: {result.judged} already judged, {result.pending} still queued or running."
        )
    for item_code, why in result.refused:
        messages.error(request, f"Item {item_code} not queued: {why}")
    return back
