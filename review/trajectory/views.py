"""Pages of trajectory campaigns: ask the judge to judge the campaign's runs with the chosen models."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from accounts.roles import ADMIN, role_required
from judge.forms import JudgeModelsForm
from review.models import Campaign
from review.trajectory.judging import campaign_judge_trajectories


@require_POST
@role_required(ADMIN)
def campaign_judge_view(request: HttpRequest, code: str) -> HttpResponse:
    """Queue the judge's judgments of the campaign's runs (review.trajectory.judging) with the chosen models."""
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
