"""Task pages: the list of current tasks (search, source filter, pages) and one task version's page
(by UUID code) with "launch on this task", its best scores and its runs."""

from __future__ import annotations

from typing import Any

from django.core.paginator import Paginator
from django.db.models import Count, Q, QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_GET

from accounts.roles import ADMIN, RESEARCHER, role_required
from benchmark.markdown import markdown_html
from benchmark.models import Run, Task
from benchmark.runs.forms import launchable_tasks
from benchmark.runs.permissions import visible_runs
from benchmark.tasks.baselines import published_comparison
from benchmark.tasks.resources import task_gpus, task_requirements
from sandbox import conf as sandbox_conf
from sandbox.variants import variant_state

PAGE_SIZE = 50
RUNS_SHOWN = 50


def _current() -> QuerySet[Task]:
    return Task.objects.filter(is_current=True)


def distinct_titles(tasks: list[Task]) -> dict[int, str]:
    """Each task's title, with its id added when another current task has the same title
    ("Colonel Blotto" is both Referee's colonel_blotto and MLGym's blotto)."""
    shared = set(
        _current()
        .filter(title__in={t.title for t in tasks})
        .values("title")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
        .values_list("title", flat=True)
    )
    return {t.pk: f"{t.title} ({t.slug})" if t.title in shared else t.title for t in tasks}


@require_GET
@role_required(RESEARCHER, ADMIN)
def task_list(request: HttpRequest) -> HttpResponse:
    tasks = _current()
    q = request.GET.get("q", "").strip()[:200]
    source = request.GET.get("source", "")[:100]
    if q:
        tasks = tasks.filter(Q(title__icontains=q) | Q(slug__icontains=q) | Q(category__icontains=q))
    if source:
        tasks = tasks.filter(source=source)
    page = Paginator(
        tasks.order_by("source", "slug").only(
            "code", "slug", "title", "source", "metric", "direction", "baseline_scores", "data_status", "version_hash"
        ),
        PAGE_SIZE,
    ).get_page(request.GET.get("page"))
    titles = distinct_titles(list(page))
    params = request.GET.copy()
    params.pop("page", None)
    context = {
        "page": page,
        "rows": [(task, titles[task.pk]) for task in page],
        "q": q,
        "source": source,
        "sources": sorted(set(_current().values_list("source", flat=True))),
        "total": _current().count(),
        "querystring": params.urlencode(),
    }
    return render(request, "benchmark/task_list.html", context)


def _launch_url(task: Task) -> str | None:
    """Where "launch on this task" goes: the research form for MLR tasks, the run launcher for runnable ones."""
    if task.kind == Task.Kind.MLR:
        return f"{reverse('benchmark:research_new')}?task={task.code}"
    if task.is_current and launchable_tasks().filter(pk=task.pk).exists():
        return f"{reverse('benchmark:run_launch')}?task={task.code}"
    return None


def _best(runs: QuerySet[Run], task: Task) -> list[dict[str, Any]]:
    """The best finished run per method on this task (all versions), best first."""
    order = "-best_attempt" if task.direction == Task.Direction.MAX else "best_attempt"
    best: dict[str, Run] = {}
    for run in runs.exclude(status=Run.Status.FAILED).filter(best_attempt__isnull=False).order_by(order)[:2000]:
        best.setdefault(run.method or run.agent.name, run)
    return [{"method": m, "run": r} for m, r in list(best.items())[:10]]


@require_GET
@role_required(RESEARCHER, ADMIN)
def task_detail(request: HttpRequest, code) -> HttpResponse:  # type: ignore[no-untyped-def]
    task = get_object_or_404(Task, code=code)
    versions = (
        Task.objects.filter(slug=task.slug)
        .order_by("-created_at")
        .only("code", "version_hash", "is_current", "created_at", "baseline_scores", "metric")
    )
    baseline = task.baseline_scores or {}
    splits = [(split, baseline.get(split)) for split in ("dev", "test") if baseline.get(split)]
    runs = visible_runs(request.user).filter(task__slug=task.slug).select_related("agent", "task")
    context = {
        "task": task,
        "title": distinct_titles([task])[task.pk],
        "description_html": markdown_html(task.description),
        "versions": versions,
        "baseline": baseline,
        "baseline_splits": splits,
        "published": published_comparison(task) if task.config.get("published_baseline_scores") else None,
        "launch_url": _launch_url(task),
        "runs": runs.order_by("-created_at")[:RUNS_SHOWN],
        "run_count": runs.count(),
        "best": _best(runs, task),
        "image": _image(task),
        "gpus": task_gpus(task),
    }
    return render(request, "benchmark/task_detail.html", context)


def _image(task: Task) -> dict[str, object]:
    """The image the task runs on: the sandbox image, or its variant with the task's own packages."""
    requirements = task_requirements(task)
    if not requirements:
        return {"tag": sandbox_conf.image(), "variant": False, "requirements": []}
    return variant_state(requirements)
