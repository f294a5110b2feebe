"""Task pages: the list of current tasks and one task version's page (by UUID code)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from accounts.roles import ADMIN, RESEARCHER, role_required
from benchmark.markdown import markdown_html
from benchmark.models import Task


@require_GET
@role_required(RESEARCHER, ADMIN)
def task_list(request: HttpRequest) -> HttpResponse:
    tasks = Task.objects.filter(is_current=True).order_by("source", "slug")
    return render(request, "benchmark/task_list.html", {"tasks": tasks})


@require_GET
@role_required(RESEARCHER, ADMIN)
def task_detail(request: HttpRequest, code) -> HttpResponse:
    task = get_object_or_404(Task, code=code)
    versions = (
        Task.objects.filter(slug=task.slug)
        .order_by("-created_at")
        .only("code", "version_hash", "is_current", "created_at", "baseline_scores", "metric")
    )
    baseline = task.baseline_scores or {}
    splits = [(split, baseline.get(split)) for split in ("dev", "test") if baseline.get(split)]
    context = {
        "task": task,
        "description_html": markdown_html(task.description),
        "versions": versions,
        "baseline": baseline,
        "baseline_splits": splits,
        "published_baseline": task.config.get("published_baseline_scores") or {},
    }
    return render(request, "benchmark/task_detail.html", context)
