"""The in-app agreement page of one campaign and its report downloads (admins only; reviewers
never see judge scores or other reviews).

Settings come from GET parameters (pairing, margins, bootstrap, alpha, alt-test epsilon,
decision threshold, judged rubric version) so that a page and its downloads are addressable and
reproducible; the downloads pin the same settings as the page they are linked from. Results
are cached per (campaign state, settings) (agreement/report/selectors.py): the page and its downloads compute once.
"""

from __future__ import annotations

import re
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_GET

from accounts.roles import ADMIN, role_required
from agreement.data.selectors import CampaignDataError
from agreement.report import context as report_context
from agreement.report.exports import to_csv, to_html, to_json
from agreement.report.forms import AgreementSettingsForm
from agreement.report.selectors import Analysis, campaign_analysis, rendered, tags_export, tags_state, tags_summary
from review.models import Campaign

DOWNLOADS = {
    "html": "text/html; charset=utf-8",
    "csv": "text/csv; charset=utf-8",
    "json": "application/json",
}


def _form(request: HttpRequest, code: str) -> tuple[Campaign, AgreementSettingsForm]:
    campaign = get_object_or_404(Campaign.objects.select_related("rubric"), code=code)
    return campaign, AgreementSettingsForm.from_query(request.GET, campaign=campaign)


def _analysis(campaign: Campaign, form: AgreementSettingsForm) -> Analysis:
    s = form.settings()
    return campaign_analysis(campaign=campaign, rubric=form.rubrics[s["rubric"]], settings=s)


def prepared_analysis(
    request: HttpRequest, code: str
) -> tuple[Campaign, AgreementSettingsForm, Analysis] | HttpResponse:
    """Campaign, valid settings and their (cached) analysis, or the plain-text 400 that says
    what is wrong: the downloads' and the workbench's common first steps."""
    campaign, form = _form(request, code)
    if not form.is_valid():
        return text_response(form.errors.as_text(), 400)
    try:
        return campaign, form, _analysis(campaign, form)
    except CampaignDataError as exc:
        return text_response(str(exc), 400)


def query_string(request: HttpRequest) -> str:
    q = request.GET.urlencode()
    return f"?{q}" if q else ""


def text_response(message: str, status: int) -> HttpResponse:
    return HttpResponse(message, status=status, content_type="text/plain; charset=utf-8")


@require_GET
@role_required(ADMIN)
def agreement_campaign(request: HttpRequest, code: str) -> HttpResponse:
    campaign, form = _form(request, code)
    context: dict[str, Any] = {"campaign": campaign, "form": form}
    if not form.is_valid():
        return render(request, "agreement/report/campaign.html", context, status=400)
    try:
        analysis = _analysis(campaign, form)
    except CampaignDataError as exc:
        context["error"] = str(exc)
        return render(request, "agreement/report/campaign.html", context, status=400)
    result = analysis.result
    tags = tags_summary(campaign=campaign)
    query = query_string(request)
    # The summary only: each criterion's evidence and charts come from agreement_criterion when
    # opened (the full page was 806 KB and 54,000 px tall; the downloadable file keeps everything).
    report = report_context.report(result, progress=analysis.progress, tags_summary=tags, evidence=False)
    for c in report["body"]["criteria"]:
        c["url"] = reverse("agreement:criterion", args=[campaign.code, c["index"]]) + query
    context.update(
        report=report,
        sizes=result["sizes"],
        downloads={fmt: reverse("agreement:download", args=[campaign.code, fmt]) + query for fmt in DOWNLOADS},
        workbench=reverse("agreement:disagreements", args=[campaign.code]) + query,
    )
    response = render(request, "agreement/report/campaign.html", context)
    response["X-Agreement-Cache"] = "hit" if analysis.hit else "miss"
    return response


@require_GET
@role_required(ADMIN)
def agreement_criterion(request: HttpRequest, code: str, index: int) -> HttpResponse:
    """One criterion's evidence and charts under the page's settings: the bare fragment the page's
    script asks for (header X-Fragment), else a page of its own for readers without JavaScript."""
    prepared = prepared_analysis(request, code)
    if isinstance(prepared, HttpResponse):
        return prepared
    campaign, _, analysis = prepared
    if index >= len(analysis.result["criteria"]):
        raise Http404("no such criterion")
    prefix = f"agreement-chart-{index}-"
    context = {
        "campaign": campaign,
        "c": report_context.criterion(analysis.result, index),
        "charts": [x for x in analysis.charts if x["id"].startswith(prefix)],
        "charts_id": f"agreement-charts-{index}",
        "page": reverse("agreement:campaign", args=[campaign.code]) + query_string(request),
    }
    fragment = request.headers.get("X-Fragment") == "1"
    template = "agreement/report/_criterion_fragment.html" if fragment else "agreement/report/criterion.html"
    response = render(request, template, context)
    patch_vary_headers(response, ["X-Fragment"])  # one URL, two bodies: caches must tell them apart
    response["X-Agreement-Cache"] = "hit" if analysis.hit else "miss"
    return response


@require_GET
@role_required(ADMIN)
def agreement_download(request: HttpRequest, code: str, fmt: str) -> HttpResponse:
    if fmt not in DOWNLOADS:
        raise Http404("unknown report format")
    prepared = prepared_analysis(request, code)
    if isinstance(prepared, HttpResponse):
        return prepared
    campaign, form, analysis = prepared

    def render_body() -> str:
        export = tags_export(campaign=campaign)
        summary = tags_summary(campaign=campaign, export=export)
        if fmt == "html":
            return to_html(analysis.result, analysis.charts, tags=summary)
        if fmt == "csv":
            return to_csv(analysis.result)
        return to_json({**analysis.result, "disagreement_tags": {"summary": summary, "tags": export}})

    body, hit = rendered(analysis, fmt, tags_state(campaign=campaign), render_body)
    response = HttpResponse(body, content_type=DOWNLOADS[fmt])
    slug = re.sub(r"[^a-z0-9]+", "-", campaign.name.lower()).strip("-") or "campaign"
    response["Content-Disposition"] = f'attachment; filename="agreement-{slug}-{form.settings()["pairing"]}.{fmt}"'
    response["X-Agreement-Cache"] = "hit" if (hit and analysis.hit) else "miss"
    return response
