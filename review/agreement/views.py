"""The in-app agreement page of one campaign, and its report downloads (admins only).

Settings come from GET parameters (pairing, TOST margin, bootstrap resamples and seed, alpha,
judged rubric version) so that a page and its downloads are addressable and reproducible; the
downloads pin the same settings as the page they are linked from.
"""

from __future__ import annotations

import re
from typing import Any

from django import forms
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_GET

from accounts.roles import ADMIN, role_required
from review.models import Campaign

from .campaign import CampaignDataError, campaign_agreement_data, rubric_choices
from .pairing import POLICIES, pair
from .report import CSS, body_html, chart_payload, clean_json, to_csv, to_html, to_json
from .suite import DEFAULT_MARGIN, analyse

MAX_BOOTSTRAP = 5000  # a page request, not a batch job: bounds the work one GET can ask for
DOWNLOADS = {
    "html": "text/html; charset=utf-8",
    "csv": "text/csv; charset=utf-8",
    "json": "application/json",
}


class AgreementSettingsForm(forms.Form):
    pairing = forms.ChoiceField(choices=[(p, p) for p in POLICIES], initial="strict", required=False)
    margin = forms.FloatField(
        min_value=0.01, max_value=10, initial=DEFAULT_MARGIN, required=False, label="TOST margin (points)"
    )
    bootstrap = forms.IntegerField(
        min_value=0, max_value=MAX_BOOTSTRAP, initial=1000, required=False, label="bootstrap resamples"
    )
    seed = forms.IntegerField(min_value=0, max_value=2**32 - 1, initial=0, required=False)
    alpha = forms.FloatField(min_value=0.001, max_value=0.49, initial=0.05, required=False)
    rubric = forms.ChoiceField(required=False, label="judged under rubric")

    def __init__(self, *args: Any, campaign: Campaign, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.rubrics = {str(r.code): r for r in rubric_choices(campaign=campaign)}
        self.fields["rubric"].choices = [(code, str(r)) for code, r in self.rubrics.items()]
        self.fields["rubric"].initial = str(campaign.rubric.code)

    def settings(self) -> dict[str, Any]:
        """Cleaned values with the initial value for every field left blank."""
        return {
            name: (self.cleaned_data.get(name) if self.cleaned_data.get(name) not in (None, "") else field.initial)
            for name, field in self.fields.items()
        }


def _run(campaign: Campaign, s: dict[str, Any], rubrics: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    data = campaign_agreement_data(campaign=campaign, rubric=rubrics[s["rubric"]])
    paired = pair(data, s["pairing"])
    result = analyse(paired, n_boot=s["bootstrap"], seed=s["seed"], margin=s["margin"], alpha=s["alpha"])
    return result, paired


def _form(request: HttpRequest, code: str) -> tuple[Campaign, AgreementSettingsForm]:
    campaign = get_object_or_404(Campaign.objects.select_related("rubric"), code=code)
    return campaign, AgreementSettingsForm(request.GET, campaign=campaign)


@require_GET
@role_required(ADMIN)
def agreement_campaign(request: HttpRequest, code: str) -> HttpResponse:
    campaign, form = _form(request, code)
    context: dict[str, Any] = {"campaign": campaign, "form": form, "report_css": CSS}
    if not form.is_valid():
        return render(request, "review/agreement.html", context, status=400)
    s = form.settings()
    try:
        result, paired = _run(campaign, s, form.rubrics)
    except CampaignDataError as exc:
        context["error"] = str(exc)
        return render(request, "review/agreement.html", context, status=400)
    query = request.GET.urlencode()
    context.update(
        body=body_html(result),
        charts=clean_json(chart_payload(result, paired)),
        sizes=result["sizes"],
        downloads={
            fmt: reverse("review:agreement:download", args=[campaign.code, fmt]) + (f"?{query}" if query else "")
            for fmt in DOWNLOADS
        },
    )
    return render(request, "review/agreement.html", context)


@require_GET
@role_required(ADMIN)
def agreement_download(request: HttpRequest, code: str, fmt: str) -> HttpResponse:
    if fmt not in DOWNLOADS:
        raise Http404("unknown report format")
    campaign, form = _form(request, code)
    if not form.is_valid():
        return HttpResponse(form.errors.as_text(), status=400, content_type="text/plain; charset=utf-8")
    s = form.settings()
    try:
        result, paired = _run(campaign, s, form.rubrics)
    except CampaignDataError as exc:
        return HttpResponse(str(exc), status=400, content_type="text/plain; charset=utf-8")
    body = {"html": lambda: to_html(result, paired), "csv": lambda: to_csv(result), "json": lambda: to_json(result)}
    response = HttpResponse(body[fmt](), content_type=DOWNLOADS[fmt])
    slug = re.sub(r"[^a-z0-9]+", "-", campaign.name.lower()).strip("-") or "campaign"
    response["Content-Disposition"] = f'attachment; filename="agreement-{slug}-{s["pairing"]}.{fmt}"'
    return response
