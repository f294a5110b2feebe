"""Judge pages: an artifact's judgments, a judgment, rubric versions. Researchers (their runs) and admins only."""

from __future__ import annotations

import json

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Count
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import NoReverseMatch, reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.roles import ADMIN, RESEARCHER, role_required
from benchmark.models import Artifact
from judge.access import may_request_judgments, may_see_judgments
from judge.forms import JudgmentRequestForm, RubricVersionForm
from judge.models import Judgment, Rubric
from judge.rubrics import rubric_create_version, rubric_latest
from judge.services import judgment_request


def _research_url(artifact: Artifact) -> str:
    """The research run's page in the benchmark app, when that page exists (judge only links down to it)."""
    try:
        return reverse("benchmark:research_run", args=[artifact.research_run.code])
    except NoReverseMatch:
        return ""


def _artifact_page(
    request: HttpRequest, artifact: Artifact, form: JudgmentRequestForm | None, status: int = 200
) -> HttpResponse:
    context = {"artifact": artifact, "form": form, "research_url": _research_url(artifact)}
    return render(request, "judge/artifact_judgments.html", context, status=status)


def _artifact_for(request: HttpRequest, code: str) -> Artifact:
    artifact = get_object_or_404(Artifact.objects.select_related("research_run__task"), code=code)
    if not may_see_judgments(request.user, artifact):
        raise PermissionDenied
    return artifact


@require_GET
@role_required(RESEARCHER, ADMIN)
def artifact_judgments(request: HttpRequest, code: str) -> HttpResponse:
    artifact = _artifact_for(request, code)
    form = (
        JudgmentRequestForm(artifact=artifact, user=request.user)
        if may_request_judgments(request.user, artifact)
        else None
    )
    return _artifact_page(request, artifact, form)


@require_POST
@role_required(RESEARCHER, ADMIN)
def judgment_request_view(request: HttpRequest, code: str) -> HttpResponse:
    artifact = _artifact_for(request, code)
    if not may_request_judgments(request.user, artifact):
        raise PermissionDenied
    form = JudgmentRequestForm(request.POST, artifact=artifact, user=request.user)
    if form.is_valid():
        try:
            judgments = judgment_request(
                artifact=artifact,
                rubric=form.cleaned_data["rubric"],
                judge_models=form.cleaned_data["models"],
                with_supplementary=form.cleaned_data["with_supplementary"],
                requested_by=request.user,
            )
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            messages.success(request, f"{len(judgments)} judgment(s) queued.")
            return redirect("judge:artifact_judgments", code=artifact.code)
    return _artifact_page(request, artifact, form, status=400)


@require_GET
@role_required(RESEARCHER, ADMIN)
def judgment_detail(request: HttpRequest, code: str) -> HttpResponse:
    judgment = get_object_or_404(
        Judgment.objects.select_related("rubric", "artifact__research_run__task", "requested_by"), code=code
    )
    if not may_see_judgments(request.user, judgment.artifact):
        raise PermissionDenied
    dimensions = [
        {"dimension": d, "entry": (judgment.scores or {}).get(d["key"])}
        for d in judgment.rubric.dimensions
        if d.get("kind") != "findings"
    ]
    return render(request, "judge/judgment_detail.html", {"judgment": judgment, "dimensions": dimensions})


@require_GET
@role_required(RESEARCHER, ADMIN)
def rubric_list(request: HttpRequest) -> HttpResponse:
    rubrics = Rubric.objects.annotate(judgment_count=Count("judgments")).order_by("stage", "-version")
    return render(request, "judge/rubric_list.html", {"rubrics": rubrics})


@require_GET
@role_required(RESEARCHER, ADMIN)
def rubric_detail(request: HttpRequest, code: str) -> HttpResponse:
    rubric = get_object_or_404(Rubric, code=code)
    versions = Rubric.objects.filter(stage=rubric.stage).order_by("-version")
    return render(request, "judge/rubric_detail.html", {"rubric": rubric, "versions": versions})


@require_http_methods(["GET", "POST"])
@role_required(ADMIN)
def rubric_new_version(request: HttpRequest, stage: str) -> HttpResponse:
    if stage not in Rubric.Stage.values:
        raise Http404("no such rubric stage")
    latest = rubric_latest(stage)
    if request.method == "POST":
        form = RubricVersionForm(request.POST)
        if form.is_valid():
            rubric = rubric_create_version(stage=stage, created_by=request.user, **form.cleaned_data)
            messages.success(request, f"Saved {rubric}. Judgments made with earlier versions keep theirs.")
            return redirect("judge:rubric_detail", code=rubric.code)
        status = 400
    else:
        initial = {"name": "", "instructions": "", "dimensions": "[]"}
        if latest is not None:
            initial = {
                "name": latest.name,
                "instructions": latest.instructions,
                "dimensions": json.dumps(latest.dimensions, indent=2, ensure_ascii=False),
            }
        form = RubricVersionForm(initial=initial)
        status = 200
    context = {"form": form, "stage": Rubric.Stage(stage), "latest": latest}
    return render(request, "judge/rubric_new_version.html", context, status=status)
