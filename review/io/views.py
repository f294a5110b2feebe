"""A campaign's reviews as a download (admins only): CSV or JSON, drafts on request."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.views.decorators.http import require_GET

from accounts.roles import ADMIN, role_required
from review.io import exports
from review.models import Campaign


@require_GET
@role_required(ADMIN)
def campaign_export(request: HttpRequest, code: str, fmt: str) -> HttpResponse:
    if fmt not in ("csv", "json"):
        raise Http404("Export formats: csv, json.")
    campaign = get_object_or_404(Campaign.objects.select_related("rubric"), code=code)
    include_drafts = request.GET.get("drafts") == "1"
    if fmt == "csv":
        body, content_type = exports.reviews_csv(campaign, include_drafts=include_drafts), "text/csv; charset=utf-8"
    else:
        body, content_type = exports.reviews_json(campaign, include_drafts=include_drafts), "application/json"
    response = HttpResponse(body, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="reviews-{campaign.code}.{fmt}"'
    return response
