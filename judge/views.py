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

from accounts.roles import ADMIN, RESEARCHER, is_admin, role_required
from benchmark.markdown import markdown_html
from benchmark.models import Artifact, ResearchRun, Task
from benchmark.research.stepwise import ATTRIBUTION as STEPWISE_ATTRIBUTION
from judge import leaderboard as lb
from judge.access import may_request_judgments, may_see_judgments, may_see_released_judgments
from judge.forms import JudgmentRequestForm, RubricPolicyForm, RubricVersionForm
from judge.models import Judgment, Rubric
from judge.rubrics import gate_problem, rubric_create_version, rubric_latest, rubric_policy, rubric_set_default
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
        Judgment.objects.select_related("rubric", "artifact__research_run__task", "run__task", "requested_by"),
        code=code,
    )
    # A trajectory judgment (of an agent run): admins only, like the trajectory campaigns it serves.
    allowed = is_admin(request.user) if judgment.run_id else may_see_judgments(request.user, judgment.artifact)
    if not allowed:
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
    policy = rubric_policy(rubric.stage)
    context = {
        "rubric": rubric,
        "versions": versions,
        "policy": policy,
        "policy_form": RubricPolicyForm(instance=policy) if is_admin(request.user) else None,
        "default_blocked": gate_problem(rubric, None),
    }
    return render(request, "judge/rubric_detail.html", context)


@require_POST
@role_required(ADMIN)
def rubric_policy_update(request: HttpRequest, stage: str) -> HttpResponse:
    if stage not in Rubric.Stage.values:
        raise Http404("no such rubric stage")
    form = RubricPolicyForm(request.POST, instance=rubric_policy(stage))
    if form.is_valid():
        policy = form.save(commit=False)
        policy.updated_by = request.user
        policy.save()
        messages.success(request, f"Default policy of the {stage} rubric saved.")
    else:
        messages.error(request, f"Policy not saved: {form.errors.as_text()}")
    latest = rubric_latest(stage)
    return redirect("judge:rubric_detail", code=latest.code) if latest else redirect("judge:rubric_list")


@require_POST
@role_required(ADMIN)
def rubric_make_default(request: HttpRequest, code: str) -> HttpResponse:
    """Make a version the default directly; refused while the stage's policy requires a passing gate."""
    rubric = get_object_or_404(Rubric, code=code)
    try:
        rubric_set_default(rubric=rubric, user=request.user)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, f"{rubric} is now the default.")
    return redirect("judge:rubric_detail", code=rubric.code)


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


# --- the stepwise leaderboard (released MLR-Bench ideas and proposals) ---------------------------

EXPORTS = {
    "csv": "text/csv; charset=utf-8",
    "json": "application/json",
    "md": "text/markdown; charset=utf-8",
    "tex": "application/x-tex; charset=utf-8",
}


def _stepwise_board(request: HttpRequest, stage: str) -> lb.Leaderboard:
    if not may_see_released_judgments(request.user):
        raise PermissionDenied
    if stage not in lb.STAGES:
        raise Http404("the stepwise results have an idea and a proposal stage")
    rubric = None
    wanted = request.GET.get("rubric", "")
    if wanted:
        rubric = next((r for r in lb.stepwise_rubrics(stage) if str(r.code) == wanted), None)
        if rubric is None:
            raise Http404("no stepwise judgments under that rubric version")
    return lb.stepwise_leaderboard(stage, rubric)


@require_GET
@role_required(RESEARCHER, ADMIN)
def stepwise_leaderboard(request: HttpRequest, stage: str) -> HttpResponse:
    board = _stepwise_board(request, stage)
    tasks = dict(Task.objects.filter(slug__in=board.per_task, is_current=True).values_list("slug", "code"))
    models = [row.model for row in board.rows]
    task_rows = [
        {"slug": slug, "code": tasks.get(slug), "scores": [scores.get(m) for m in models]}
        for slug, scores in board.per_task.items()
    ]
    query = f"?rubric={board.rubric.code}" if request.GET.get("rubric") and board.rubric else ""
    context = {
        "board": board,
        "stages": lb.STAGES,
        "rubrics": lb.stepwise_rubrics(stage),
        "models": models,
        "task_rows": task_rows,
        "query": query,
        "attribution": STEPWISE_ATTRIBUTION,
        "rank_by": "overall",
    }
    return render(request, "judge/stepwise_leaderboard.html", context)


@require_GET
@role_required(RESEARCHER, ADMIN)
def stepwise_export(request: HttpRequest, stage: str, fmt: str) -> HttpResponse:
    if fmt not in EXPORTS:
        raise Http404("downloads: csv, json, md, tex")
    board = _stepwise_board(request, stage)
    if fmt == "csv":
        body = lb.to_csv(board)
    elif fmt == "json":
        body = json.dumps(lb.to_json(board, STEPWISE_ATTRIBUTION), indent=1)
    elif fmt == "md":
        body = lb.to_markdown(board, STEPWISE_ATTRIBUTION)
    else:
        body = lb.to_latex(board, STEPWISE_ATTRIBUTION)
    response = HttpResponse(body, content_type=EXPORTS[fmt])
    response["Content-Disposition"] = f'attachment; filename="stepwise-{stage}.{fmt}"'
    return response


@require_GET
@role_required(RESEARCHER, ADMIN)
def stepwise_task(request: HttpRequest, stage: str, code: str) -> HttpResponse:
    """One task's items of a stage: each model's text beside both judges' reviews."""
    board = _stepwise_board(request, stage)
    task = get_object_or_404(Task, code=code, kind=Task.Kind.MLR)
    artifacts = list(
        Artifact.objects.filter(
            research_run__source=ResearchRun.Source.STEPWISE,
            research_run__task__slug=task.slug,
            research_run__stages=[stage],
            stage=stage,
        )
        .select_related("research_run")
        .order_by("research_run__backbone")
    )
    judgments: dict[int, list[Judgment]] = {}
    if board.rubric is not None:
        for j in lb.stepwise_judgments(stage, board.rubric).filter(artifact__in=artifacts).order_by("judge_model"):
            judgments.setdefault(j.artifact_id, []).append(j)
    given = {}
    if stage == "proposal" and artifacts:
        given = {a.stage: a for a in artifacts[0].research_run.artifacts.filter(data__given=True)}
    items = []
    for artifact in artifacts:
        reviews = judgments.get(artifact.pk, [])
        rows = [
            {"key": k, "name": n, "scores": [(j, (j.scores or {}).get(k) or {}) for j in reviews]}
            for k, n in board.criteria
        ]
        items.append({"artifact": artifact, "html": markdown_html(artifact.content), "reviews": reviews, "rows": rows})
    context = {
        "board": board,
        "task": task,
        "task_html": markdown_html(task.description),
        "items": items,
        "given_idea": given.get("idea"),
        "given_literature": given.get("literature"),
        "given_idea_html": markdown_html(given["idea"].content) if "idea" in given else "",
        "attribution": STEPWISE_ATTRIBUTION,
    }
    return render(request, "judge/stepwise_task.html", context)
