"""The in-app agreement page of one campaign, its report downloads, and the disagreement
workbench (admins only; reviewers never see judge scores or other reviews).

Settings come from GET parameters (pairing, margins, bootstrap, alpha, alt-test epsilon,
decision threshold, judged rubric version) so that a page and its downloads are addressable and
reproducible; the downloads pin the same settings as the page they are linked from. Results
are cached per (campaign state, settings) in cache.py: the page and its downloads compute once.
"""

from __future__ import annotations

import io
import json
import re
from typing import Any

from django import forms
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from accounts.roles import ADMIN, role_required
from agreement.cache import Analysis, campaign_analysis, rendered, tags_state
from agreement.data.pairing import POLICIES
from agreement.data.selectors import CampaignDataError, rubric_choices
from agreement.report.exports import clean_json, to_csv, to_html, to_json
from agreement.report.html import CSS, body_html, toc_html, verdict_html, view_label
from agreement.stats.alt_test import ALT_MIN_ITEMS
from agreement.stats.suite import DEFAULT_EPSILON, DEFAULT_MARGIN, DEFAULT_THRESHOLD
from agreement.workbench.selectors import disagreement_rows, item_evidence, tag_save, tags_export, tags_summary
from benchmark.csv_tables import CsvDictWriter
from benchmark.markdown import markdown_html
from review.models import Campaign, CampaignItem, DisagreementTag

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
    seed = forms.IntegerField(min_value=0, max_value=2**32 - 1, initial=0, required=False, label="bootstrap seed")
    alpha = forms.FloatField(min_value=0.001, max_value=0.49, initial=0.05, required=False, label="alpha")
    epsilon = forms.FloatField(
        min_value=0.0, max_value=0.5, initial=DEFAULT_EPSILON, required=False, label="alt-test epsilon"
    )
    min_items = forms.IntegerField(
        min_value=5, max_value=100_000, initial=ALT_MIN_ITEMS, required=False, label="alt-test: items per reviewer"
    )
    threshold = forms.FloatField(
        min_value=-1000, max_value=1000, initial=DEFAULT_THRESHOLD, required=False, label="accept when score >="
    )
    rubric = forms.ChoiceField(required=False, label="judged under rubric")

    def __init__(self, data: Any, *, campaign: Campaign) -> None:
        self.rubrics = {str(r.code): r for r in rubric_choices(campaign=campaign)}
        super().__init__(data)
        self.fields["rubric"].choices = [(code, str(r)) for code, r in self.rubrics.items()]
        self.fields["rubric"].initial = str(campaign.rubric.code)
        for field in self.fields.values():
            label = (
                dict(field.choices).get(field.initial, field.initial) if hasattr(field, "choices") else field.initial
            )
            field.help_text = f"default: {label}"

    @classmethod
    def from_query(cls, query: Any, *, campaign: Campaign) -> AgreementSettingsForm:
        """Bound to the defaults overlaid with the query, so the form shows the values in effect."""
        form = cls(None, campaign=campaign)
        data = {name: field.initial for name, field in form.fields.items()}
        data.update({k: v for k, v in query.items() if k in form.fields and v != ""})
        return cls(data, campaign=campaign)

    def settings(self) -> dict[str, Any]:
        """Cleaned values with the initial value for every field left blank."""
        return {
            name: (self.cleaned_data.get(name) if self.cleaned_data.get(name) not in (None, "") else field.initial)
            for name, field in self.fields.items()
        }


class TagForm(forms.Form):
    criterion = forms.CharField(max_length=100)
    cause = forms.ChoiceField(choices=DisagreementTag.Cause.choices)
    note = forms.CharField(required=False, max_length=5000, widget=forms.Textarea(attrs={"rows": 4}))


def _form(request: HttpRequest, code: str) -> tuple[Campaign, AgreementSettingsForm]:
    campaign = get_object_or_404(Campaign.objects.select_related("rubric"), code=code)
    return campaign, AgreementSettingsForm.from_query(request.GET, campaign=campaign)


def _analysis(campaign: Campaign, form: AgreementSettingsForm) -> Analysis:
    s = form.settings()
    return campaign_analysis(campaign=campaign, rubric=form.rubrics[s["rubric"]], settings=s)


def _prepared(request: HttpRequest, code: str) -> tuple[Campaign, AgreementSettingsForm, Analysis] | HttpResponse:
    """Campaign, valid settings and their (cached) analysis, or the plain-text 400 that says
    what is wrong: the downloads' and the workbench's common first steps."""
    campaign, form = _form(request, code)
    if not form.is_valid():
        return _text(form.errors.as_text(), 400)
    try:
        return campaign, form, _analysis(campaign, form)
    except CampaignDataError as exc:
        return _text(str(exc), 400)


def _query(request: HttpRequest) -> str:
    q = request.GET.urlencode()
    return f"?{q}" if q else ""


def _text(message: str, status: int) -> HttpResponse:
    return HttpResponse(message, status=status, content_type="text/plain; charset=utf-8")


@require_GET
@role_required(ADMIN)
def agreement_campaign(request: HttpRequest, code: str) -> HttpResponse:
    campaign, form = _form(request, code)
    context: dict[str, Any] = {"campaign": campaign, "form": form, "report_css": CSS}
    if not form.is_valid():
        return render(request, "agreement/report/campaign.html", context, status=400)
    try:
        analysis = _analysis(campaign, form)
    except CampaignDataError as exc:
        context["error"] = str(exc)
        return render(request, "agreement/report/campaign.html", context, status=400)
    result = analysis.result
    tags = tags_summary(campaign=campaign)
    query = _query(request)
    context.update(
        verdict=verdict_html(result),
        toc=toc_html(result, tags=True),
        body=body_html(result, progress=analysis.progress, tags=tags),
        charts=analysis.charts,
        sizes=result["sizes"],
        downloads={fmt: reverse("agreement:download", args=[campaign.code, fmt]) + query for fmt in DOWNLOADS},
        workbench=reverse("agreement:disagreements", args=[campaign.code]) + query,
    )
    response = render(request, "agreement/report/campaign.html", context)
    response["X-Agreement-Cache"] = "hit" if analysis.hit else "miss"
    return response


@require_GET
@role_required(ADMIN)
def agreement_download(request: HttpRequest, code: str, fmt: str) -> HttpResponse:
    if fmt not in DOWNLOADS:
        raise Http404("unknown report format")
    prepared = _prepared(request, code)
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


# --- the disagreement workbench --------------------------------------------------------------


def _criterion(request: HttpRequest, analysis: Analysis) -> int:
    try:
        c = int(request.GET.get("criterion", "0"))
    except ValueError:
        raise Http404("unknown criterion") from None
    if not 0 <= c < len(analysis.items["criteria"]):
        raise Http404("unknown criterion")
    return c


@require_GET
@role_required(ADMIN)
def agreement_disagreements(request: HttpRequest, code: str) -> HttpResponse:
    prepared = _prepared(request, code)
    if isinstance(prepared, HttpResponse):
        return prepared
    campaign, form, analysis = prepared
    c = _criterion(request, analysis)
    views = analysis.result["views"]
    view = request.GET.get("view") or views[-1]
    if view not in views:
        raise Http404("unknown judge view")
    key = analysis.items["criterion_keys"][c]
    tags = {
        t.item.code: t for t in DisagreementTag.objects.filter(campaign=campaign, criterion=key).select_related("item")
    }
    rows = disagreement_rows(analysis, c, view)
    for r in rows:
        r["tag"] = tags.get(r["code"])
    base = request.GET.copy()
    for k in ("criterion", "view"):
        base.pop(k, None)
    return render(
        request,
        "agreement/workbench/disagreements.html",
        {
            "campaign": campaign,
            "criteria": list(enumerate(analysis.items["criteria"])),
            "criterion": c,
            "criterion_name": analysis.items["criteria"][c],
            "views": [(v, view_label(v)) for v in views],
            "view": view,
            "rows": rows,
            "query": base.urlencode(),
            "agreement": reverse("agreement:campaign", args=[campaign.code]) + _query(request),
        },
    )


def _item(campaign: Campaign, item_code: str) -> CampaignItem:
    return get_object_or_404(
        CampaignItem.objects.select_related("artifact__research_run__task", "run__task", "run__agent"),
        campaign=campaign,
        code=item_code,
    )


def _content(item: CampaignItem) -> Any:
    """The item as the admin reads it beside the scores: the paper, or the run's steps as the judge saw them."""
    if item.run_id:
        from django.utils.html import format_html

        from judge.prompts import trajectory_steps_text

        return format_html('<pre class="step-text">{}</pre>', trajectory_steps_text(item.run)[0])
    return markdown_html(item.artifact.content or "")


@require_GET
@role_required(ADMIN)
def agreement_disagreement_item(request: HttpRequest, code: str, item_code: str) -> HttpResponse:
    prepared = _prepared(request, code)
    if isinstance(prepared, HttpResponse):
        return prepared
    campaign, form, analysis = prepared
    item = _item(campaign, item_code)
    c = _criterion(request, analysis)
    rubric = form.rubrics[form.settings()["rubric"]]
    human_key = analysis.items["criterion_keys"][c]
    judge_keys = analysis.result["meta"].get("judge_criterion_keys") or analysis.items["criterion_keys"]
    evidence = item_evidence(item=item, rubric=rubric, human_key=human_key, judge_key=judge_keys[c])
    tag = DisagreementTag.objects.filter(item=item, criterion=human_key).first()
    initial = {"criterion": human_key, "cause": tag.cause if tag else "", "note": tag.note if tag else ""}
    return render(
        request,
        "agreement/workbench/item.html",
        {
            "campaign": campaign,
            "item": item,
            "criterion": c,
            "criterion_name": analysis.items["criteria"][c],
            "content": _content(item),
            "evidence": evidence,
            "tag": tag,
            "tag_form": TagForm(initial=initial),
            "back": reverse("agreement:disagreements", args=[campaign.code]) + _query(request),
            "query": _query(request),
        },
    )


@require_POST
@role_required(ADMIN)
def agreement_tag(request: HttpRequest, code: str, item_code: str) -> HttpResponse:
    campaign = get_object_or_404(Campaign.objects.select_related("rubric"), code=code)
    item = _item(campaign, item_code)
    form = TagForm(request.POST)
    keys = {d["key"] for d in campaign.rubric.dimensions if d.get("kind", "score") == "score"}
    if form.is_valid() and form.cleaned_data["criterion"] not in keys:
        form.add_error("criterion", f"not a score dimension of {campaign.rubric}")
    if not form.is_valid():
        return _text(form.errors.as_text(), 400)
    d = form.cleaned_data
    tag_save(item=item, criterion=d["criterion"], cause=d["cause"], note=d["note"], user=request.user)
    target = reverse("agreement:disagreement_item", args=[campaign.code, item.code])
    return redirect(target + _query(request))


@require_GET
@role_required(ADMIN)
def agreement_tags_export(request: HttpRequest, code: str, fmt: str) -> HttpResponse:
    campaign = get_object_or_404(Campaign.objects.select_related("rubric"), code=code)
    rows = tags_export(campaign=campaign)
    if fmt == "json":
        body = json.dumps(clean_json({"summary": tags_summary(campaign=campaign, export=rows), "tags": rows}), indent=2)
        response = HttpResponse(body, content_type="application/json")
    elif fmt == "csv":
        buf = io.StringIO()
        fields = (
            "item",
            "artifact",
            "run",
            "criterion",
            "criterion_key",
            "cause",
            "cause_label",
            "note",
            "tagged_by",
            "updated_at",
        )
        writer = CsvDictWriter(buf, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
        response = HttpResponse(buf.getvalue(), content_type="text/csv; charset=utf-8")
    else:
        raise Http404("unknown format")
    response["Content-Disposition"] = f'attachment; filename="disagreement-tags.{fmt}"'
    return response
