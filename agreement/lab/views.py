"""The judge lab (under /agreement/lab/): gold sets, judge configurations and experiments, regression
comparisons with their gate, bias probes, judge-vs-judge agreement on the stepwise data, the
hallucination labels and the fabrication audit against the humans.

Admins only, except the judge-vs-judge report of the released stepwise data, which researchers may
read too; reviewers never see any of it (judge scores and model identity are what blinding hides).

The statistics pages (judges per stage and their downloads, hallucination, fabrication, an
experiment's probes, the lab report) read their results from the agreement cache; when cold they
queue one job and answer at once with a page that refreshes until the result is there (issue 30:
a few users asking for seconds of statistics each had slowed every reviewer's pages).
"""

from __future__ import annotations

import json
from typing import Any

import django_rq
import redis
from django.conf import settings
from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from accounts.roles import ADMIN, RESEARCHER, role_required
from agreement.cache import Limited, cached_or_queued
from agreement.lab import context as lab_context
from agreement.lab import judge_pair as jp
from agreement.lab import statistics as lab_stats
from agreement.lab.forms import ComparisonForm, ExperimentForm, GoldSetForm, JudgeConfigForm
from agreement.lab.services import comparison_create, gate_evidence, gold_set_from_campaign
from agreement.report.exports import clean_json
from benchmark.models import Artifact, ResearchRun
from judge.access import may_see_released_judgments
from judge.experiments import experiment_start, experiment_summary, judge_config_create
from judge.leaderboard import STAGES
from judge.models import GoldSet, JudgeConfig, JudgeExperiment
from judge.rubrics import rubric_policy, rubric_set_default
from review.models import JudgeComparison

JSON = "application/json"


def _json(data: Any, filename: str) -> HttpResponse:
    response = HttpResponse(json.dumps(clean_json(data), indent=1), content_type=JSON)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def _statistics(request: HttpRequest, title: str, key: str, task: str, **kwargs: Any) -> Any:
    """The cached result of lab_stats.`task`, or the page to answer instead: computing (202, it
    refreshes itself), failed (500, with the error), over the user's limit (429), no Redis (503)."""
    try:
        value, mark = cached_or_queued(
            key=key, task=f"{lab_stats.TASKS}.{task}", kwargs=kwargs, user_id=request.user.pk
        )
    except Limited as exc:
        context = {"title": title, "limited": exc.retry_after, "limit": settings.LAB_COLD_PER_MINUTE}
        response = render(request, "agreement/lab/pending.html", context, status=429)
        response["Retry-After"] = str(exc.retry_after)
        return response
    except redis.RedisError as exc:
        message = f"The statistics are computed by the job queue, and Redis cannot be reached: {exc}"
        return HttpResponse(message, status=503, content_type="text/plain; charset=utf-8")
    if mark is None:
        return value
    failed = mark.status == "failed"
    response = render(
        request,
        "agreement/lab/pending.html",
        {"title": title, "pending": mark, "refresh": 3},
        status=500 if failed else 202,
    )
    if not failed:
        response["Retry-After"] = "3"
    return response


def _lab_context() -> dict[str, Any]:
    experiments = list(
        JudgeExperiment.objects.select_related("config__rubric", "gold_set").order_by("-created_at")[:100]
    )
    return {
        "gold_sets": GoldSet.objects.order_by("-created_at")[:100],
        "configs": JudgeConfig.objects.select_related("rubric").order_by("-created_at")[:100],
        "experiments": [{"row": e, "summary": experiment_summary(e)} for e in experiments],
        "comparisons": JudgeComparison.objects.select_related("baseline__config", "candidate__config")[:100],
        "stages": STAGES,
    }


@require_GET
@role_required(ADMIN)
def lab_home(request: HttpRequest) -> HttpResponse:
    context = {
        **_lab_context(),
        "gold_form": GoldSetForm(),
        "config_form": JudgeConfigForm(),
        "experiment_form": ExperimentForm(),
        "comparison_form": ComparisonForm(),
    }
    return render(request, "agreement/lab/home.html", context)


def _form_failed(request: HttpRequest, what: str, errors: Any) -> HttpResponse:
    messages.error(request, f"{what} not saved: {errors}")
    return redirect("agreement:lab")


@require_POST
@role_required(ADMIN)
def lab_gold_set(request: HttpRequest) -> HttpResponse:
    form = GoldSetForm(request.POST)
    if not form.is_valid():
        return _form_failed(request, "Gold set", form.errors.as_text())
    try:
        gold = gold_set_from_campaign(
            campaign=form.cleaned_data["campaign"], name=form.cleaned_data["name"], user=request.user
        )
    except ValidationError as exc:
        return _form_failed(request, "Gold set", " ".join(exc.messages))
    messages.success(request, f"Gold set {gold} pinned: {gold.artifacts.count()} items with human reviews.")
    return redirect("agreement:lab")


@require_POST
@role_required(ADMIN)
def lab_config(request: HttpRequest) -> HttpResponse:
    form = JudgeConfigForm(request.POST)
    if not form.is_valid():
        return _form_failed(request, "Judge configuration", form.errors.as_text())
    try:
        config = judge_config_create(created_by=request.user, **form.cleaned_data)
    except ValidationError as exc:
        return _form_failed(request, "Judge configuration", " ".join(exc.messages))
    messages.success(request, f"Judge configuration {config} saved.")
    return redirect("agreement:lab")


@require_POST
@role_required(ADMIN)
def lab_experiment_start(request: HttpRequest) -> HttpResponse:
    form = ExperimentForm(request.POST)
    if not form.is_valid():
        return _form_failed(request, "Experiment", form.errors.as_text())
    try:
        experiment = experiment_start(user=request.user, **form.cleaned_data)
    except ValidationError as exc:
        return _form_failed(request, "Experiment", " ".join(exc.messages))
    messages.success(request, f"Experiment queued: {experiment}.")
    return redirect("agreement:lab_experiment", code=experiment.code)


@require_GET
@role_required(ADMIN)
def lab_experiment(request: HttpRequest, code: str) -> HttpResponse:
    experiment = get_object_or_404(JudgeExperiment.objects.select_related("config__rubric", "gold_set"), code=code)
    report = _statistics(
        request,
        f"Experiment {experiment}",
        lab_stats.experiment_key(experiment=experiment),
        "experiment_compute",
        experiment_id=experiment.pk,
    )
    if isinstance(report, HttpResponse):
        return report
    if request.GET.get("format") == "json":
        return _json(report, f"experiment-{experiment.code}.json")
    sections = []
    for key, title in (("stability", "Stability"), ("leniency", "Leniency"), ("length", "Length"),
                       ("self_preference", "Self-preference"), ("position", "Position consistency")):  # fmt: skip
        probe = report.get(key)
        if probe:
            sections.append(
                {"key": key, "title": title, "probe": probe, "tables": lab_context.probe_tables(key, probe)}
            )
    context = {"experiment": experiment, "report": report, "sections": sections}
    return render(request, "agreement/lab/experiment.html", context)


@require_POST
@role_required(ADMIN)
def lab_comparison_create(request: HttpRequest) -> HttpResponse:
    form = ComparisonForm(request.POST)
    if not form.is_valid():
        return _form_failed(request, "Comparison", form.errors.as_text())
    try:
        comparison = comparison_create(user=request.user, **form.cleaned_data)
    except ValidationError as exc:
        return _form_failed(request, "Comparison", " ".join(exc.messages))
    messages.success(request, "Comparison queued.")
    return redirect("agreement:lab_comparison", code=comparison.code)


@require_GET
@role_required(ADMIN)
def lab_comparison(request: HttpRequest, code: str) -> HttpResponse:
    comparison = get_object_or_404(
        JudgeComparison.objects.select_related("baseline__config__rubric", "candidate__config__rubric"), code=code
    )
    if request.GET.get("format") == "json":
        return _json(
            {"status": comparison.status, "error": comparison.error, **comparison.result},
            f"comparison-{comparison.code}.json",
        )
    candidate_rubric = comparison.candidate.config.rubric
    policy = rubric_policy(candidate_rubric.stage)
    context = {
        "comparison": comparison,
        "comparison_view": (
            lab_context.comparison(comparison.result) if comparison.status == JudgeComparison.Status.FINISHED else None
        ),
        "candidate_rubric": candidate_rubric,
        "policy": policy,
        "can_make_default": comparison.passed is True and not candidate_rubric.is_default,
    }
    return render(request, "agreement/lab/comparison.html", context)


@require_POST
@role_required(ADMIN)
def lab_comparison_make_default(request: HttpRequest, code: str) -> HttpResponse:
    """Make the candidate's rubric version the default, with this comparison's gate as the evidence."""
    comparison = get_object_or_404(JudgeComparison.objects.select_related("candidate__config__rubric"), code=code)
    rubric = comparison.candidate.config.rubric
    try:
        rubric_set_default(rubric=rubric, user=request.user, gate=gate_evidence(comparison))
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, f"{rubric} is now the default, after passing this comparison's gate.")
    return redirect("agreement:lab_comparison", code=comparison.code)


# --- judge vs judge on the stepwise data ------------------------------------------------------


def _judge_pair(request: HttpRequest, stage: str) -> dict[str, Any] | HttpResponse:
    if not may_see_released_judgments(request.user):
        raise PermissionDenied
    if stage not in STAGES:
        raise Http404("the stepwise results have an idea and a proposal stage")
    return _statistics(
        request, f"Judge vs judge: stepwise {stage}s", lab_stats.judges_key(stage=stage), "judges_compute", stage=stage
    )


@require_GET
@role_required(RESEARCHER, ADMIN)
def lab_judge_pair(request: HttpRequest, stage: str) -> HttpResponse:
    computed = _judge_pair(request, stage)
    if isinstance(computed, HttpResponse):
        return computed
    result = computed["pair"]
    context: dict[str, Any] = {"stage": stage, "stages": STAGES, "result": result}
    if "error" not in result:
        context["html"] = computed["html"]
        context["self_preference"] = computed["self_preference_html"]
    return render(request, "agreement/lab/judge_pair.html", context)


@require_GET
@role_required(RESEARCHER, ADMIN)
def lab_judge_pair_download(request: HttpRequest, stage: str, fmt: str) -> HttpResponse:
    if fmt not in ("csv", "json"):
        raise Http404("downloads: csv, json")
    computed = _judge_pair(request, stage)
    if isinstance(computed, HttpResponse):
        return computed
    result = computed["pair"]
    if "error" in result:
        return HttpResponse(result["error"], status=400, content_type="text/plain; charset=utf-8")
    if fmt == "json":
        return _json(result, f"judges-{stage}.json")
    response = HttpResponse(jp.to_csv(result), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="judges-{stage}.csv"'
    return response


# --- hallucination labels and the fabrication audit --------------------------------------------


@require_GET
@role_required(ADMIN)
def lab_hallucination(request: HttpRequest) -> HttpResponse:
    result = _statistics(request, "Hallucination flags", lab_stats.hallucination_key(), "hallucination_compute")
    if isinstance(result, HttpResponse):
        return result
    if request.GET.get("format") == "json":
        return _json(result, "hallucination.json")
    tables = [
        {"source": source, "rows": lab_context.decision_table(records, "humans", "judge")}
        for source, records in result["sources"].items()
    ]
    return render(request, "agreement/lab/hallucination.html", {"result": result, "tables": tables})


def _min_flags(request: HttpRequest) -> int:
    raw = request.GET.get("min_flags", "1")
    if not raw.isdigit() or not 1 <= int(raw) <= 1000:
        raise Http404("min_flags: an integer from 1 to 1000")
    return int(raw)


@require_GET
@role_required(ADMIN)
def lab_fabrication(request: HttpRequest) -> HttpResponse:
    min_flags = _min_flags(request)
    result = _statistics(
        request,
        "Fabrication audit",
        lab_stats.fabrication_key(min_flags=min_flags),
        "fabrication_compute",
        min_flags=min_flags,
    )
    if isinstance(result, HttpResponse):
        return result
    if request.GET.get("format") == "json":
        return _json(result, "fabrication.json")
    context = {
        "result": result,
        "rows": lab_context.decision_table({"faked results": result["decision"]}, "humans", "audit"),
        "released": Artifact.objects.filter(
            stage=Artifact.Stage.PAPER, research_run__source=ResearchRun.Source.MLRBENCH
        ).count(),
    }
    return render(request, "agreement/lab/fabrication.html", context)


@require_POST
@role_required(ADMIN)
def lab_fabrication_audit(request: HttpRequest) -> HttpResponse:
    """Queue the deterministic audit of every imported paper (a job: traces are megabytes)."""
    ids = list(
        Artifact.objects.filter(
            stage=Artifact.Stage.PAPER, status=Artifact.Status.DONE, research_run__source=ResearchRun.Source.MLRBENCH
        ).values_list("pk", flat=True)
    )
    if not ids:
        messages.error(request, "No imported paper to audit: import the MLR-Bench runs first.")
    else:
        django_rq.get_queue("default").enqueue("benchmark.research.fabrication.audit_papers_job", ids)
        messages.success(request, f"Audit of {len(ids)} papers queued; reload in a minute.")
    return redirect("agreement:lab_fabrication")


@require_GET
@role_required(ADMIN)
def lab_report(request: HttpRequest) -> HttpResponse:
    """The judge lab's part of the agreement report, as one JSON file: probes, comparisons, flags."""
    report = _statistics(request, "Judge lab report", lab_stats.report_key(), "report_compute")
    if isinstance(report, HttpResponse):
        return report
    return _json(report, "judge-lab-report.json")
