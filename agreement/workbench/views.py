"""The disagreement workbench (admins only): per criterion, the items where the judge and the
reviewers' mean are furthest apart, one item's evidence side by side, and the admin's tags. It reads
the same cached analysis as the agreement page, with the same settings in its query string.
"""

from __future__ import annotations

import io
import json
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from accounts.roles import ADMIN, role_required
from agreement.report.context import view_label
from agreement.report.exports import clean_json
from agreement.report.selectors import Analysis, tags_export, tags_summary
from agreement.report.views import prepared_analysis, query_string, text_response
from agreement.workbench.forms import TagForm
from agreement.workbench.selectors import disagreement_rows, item_evidence
from agreement.workbench.services import tag_save
from benchmark.csv_tables import CsvDictWriter
from benchmark.markdown import markdown_html
from review.models import Campaign, CampaignItem, DisagreementTag


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
    prepared = prepared_analysis(request, code)
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
            "agreement": reverse("agreement:campaign", args=[campaign.code]) + query_string(request),
        },
    )


def _item(campaign: Campaign, item_code: str) -> CampaignItem:
    return get_object_or_404(
        CampaignItem.objects.select_related("artifact__research_run__task", "run__task", "run__agent"),
        campaign=campaign,
        code=item_code,
    )


def _content(item: CampaignItem) -> dict[str, Any]:
    """The item as the admin reads it beside the scores: the paper (rendered markdown), or the
    run's steps as the judge saw them (plain text, escaped by the template)."""
    if item.run_id:
        from judge.prompts import trajectory_steps_text

        return {"steps": trajectory_steps_text(item.run)[0]}
    return {"paper": markdown_html(item.artifact.content or "")}


@require_GET
@role_required(ADMIN)
def agreement_disagreement_item(request: HttpRequest, code: str, item_code: str) -> HttpResponse:
    prepared = prepared_analysis(request, code)
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
            "back": reverse("agreement:disagreements", args=[campaign.code]) + query_string(request),
            "query": query_string(request),
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
        return text_response(form.errors.as_text(), 400)
    d = form.cleaned_data
    tag_save(item=item, criterion=d["criterion"], cause=d["cause"], note=d["note"], user=request.user)
    target = reverse("agreement:disagreement_item", args=[campaign.code, item.code])
    return redirect(target + query_string(request))


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
