"""Opening a draft campaign, gated by its check for systematic tells (review.tells). Admins only, POST only."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from accounts.roles import ADMIN, role_required
from review.control import ControlRefused, campaign_open
from review.models import Campaign


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
