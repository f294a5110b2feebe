"""Leaderboard pages: the live board for a filter, the runs behind a cell, downloads, saved (pinned) boards."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from accounts.roles import ADMIN, RESEARCHER, is_admin, role_required
from benchmark.leaderboards.board import (
    attempt_on_test_split,
    cell_runs,
    leaderboard_runs,
    ranked_runs,
    runs_leaderboard,
)
from benchmark.leaderboards.forms import LeaderboardFilter
from benchmark.leaderboards.published import published_filter
from benchmark.leaderboards.tables import leaderboard_csv, leaderboard_latex, leaderboard_markdown, page_data
from benchmark.models import Leaderboard


def _live(request: HttpRequest) -> tuple[LeaderboardFilter, dict[str, Any] | None]:
    """The leaderboard for the filters in the query string (None when they are invalid or match nothing)."""
    runs = leaderboard_runs(request.user)
    form = LeaderboardFilter(request.GET, runs=runs)
    if not form.is_valid():
        return form, None
    selected = form.filtered(runs)
    if not selected.exists():
        return form, None
    research, group_by = form.cleaned_data["research"], form.cleaned_data.get("group_by") or ""
    board, analysis, run_rows = runs_leaderboard(
        selected, methods=form.cleaned_data.get("methods") or None, include_research=research, group_by=group_by
    )
    return form, page_data(board, analysis, runs=run_rows, research=research, grouped=bool(group_by))


EXPORT_FORMATS = [("csv", "CSV"), ("json", "JSON"), ("md", "Markdown"), ("tex", "LaTeX")]
BASELINE_SOURCES = {
    "imported": "MLGym's released baseline (results.json)",
    "computed": "Referee's computed baseline (test split)",
    None: "no baseline",
}


def _board_context(data: Mapping[str, Any] | None) -> dict[str, Any]:
    """What the board template needs beside the data: column headers and where each baseline comes from."""
    tasks = data["tasks"] if data else []
    described = (data or {}).get("columns") or {}  # a board saved before columns were described has none
    columns = []
    for task in tasks:
        column = described.get(task, {})
        source = column.get("baseline_source")
        columns.append(
            {
                "task": task,
                "label": column.get("label", task),
                "baseline_source": source,
                "baseline_words": BASELINE_SOURCES.get(source, BASELINE_SOURCES[None]) if column else "",
            }
        )
    query = urlencode(published_filter(), doseq=True)
    return {
        "columns": columns,
        "export_formats": EXPORT_FORMATS,
        "published_query": query,
        "baseline_counts": Counter(c["baseline_source"] for c in columns if c["baseline_words"]),
    }


@require_GET
@role_required(RESEARCHER, ADMIN)
def leaderboard_page(request: HttpRequest) -> HttpResponse:
    form, data = _live(request)
    saved = Leaderboard.objects.filter(created_by=request.user)[:20]
    status = 400 if form.errors else 200
    return render(
        request,
        "benchmark/leaderboard.html",
        {
            "form": form,
            "data": data,
            "saved": saved,
            "query": request.GET.urlencode(),
            "board": None,
            **_board_context(data),
        },
        status=status,
    )


TEXT_EXPORTS = {
    "csv": (leaderboard_csv, "text/csv; charset=utf-8"),
    "md": (leaderboard_markdown, "text/markdown; charset=utf-8"),
    "tex": (leaderboard_latex, "application/x-tex; charset=utf-8"),
}


def _download(data: Mapping[str, Any], fmt: str, name: str) -> HttpResponse:
    if fmt != "json" and fmt not in TEXT_EXPORTS:
        raise Http404(f"no export format {fmt!r} (csv, json, md, tex)")
    if fmt in TEXT_EXPORTS:
        build, content_type = TEXT_EXPORTS[fmt]
        response = HttpResponse(build(data), content_type=content_type)
    else:
        body = {k: v for k, v in data.items() if k not in ("figures", "rows")}
        response = JsonResponse(body, json_dumps_params={"indent": 1, "allow_nan": False})
    response["Content-Disposition"] = f'attachment; filename="{name}.{fmt}"'
    return response


@require_GET
@role_required(RESEARCHER, ADMIN)
def leaderboard_download(request: HttpRequest, fmt: str) -> HttpResponse:
    form, data = _live(request)
    if data is None:
        raise Http404("no runs match these filters")
    return _download(data, fmt, "leaderboard")


@require_GET
@role_required(RESEARCHER, ADMIN)
def leaderboard_cell(request: HttpRequest) -> HttpResponse:
    """The runs behind a method, a task column or one cell, under the board's own filters."""
    runs = leaderboard_runs(request.user)
    form = LeaderboardFilter(request.GET, runs=runs)
    method, column = request.GET.get("method", "")[:200], request.GET.get("task", "")[:200]
    if not form.is_valid():
        return render(request, "benchmark/leaderboard_cell.html", {"form": form, "runs": None}, status=400)
    selected = ranked_runs(form.filtered(runs), include_research=form.cleaned_data["research"])
    rows = (
        cell_runs(selected, method=method, column=column, environment=request.GET.get("env", "")[:300])
        .select_related("task", "agent")
        .order_by("task__slug", "-best_attempt", "created_at")[:500]
    )
    rows = list(rows)
    for run in rows:  # the best attempt the board ranks: a test-split score (board.attempt_on_test_split)
        run.ranked_attempt, run.ranked_note = attempt_on_test_split(
            source=run.source, best_attempt=run.best_attempt, best_submission=run.best_submission, params=run.params
        )
    params = request.GET.copy()
    for key in ("method", "task", "env"):
        params.pop(key, None)
    context = {"form": form, "runs": rows, "method": method, "column": column, "query": params.urlencode()}
    return render(request, "benchmark/leaderboard_cell.html", context)


@require_POST
@role_required(RESEARCHER, ADMIN)
def leaderboard_save(request: HttpRequest) -> HttpResponse:
    """Freeze the current view: the method set, tasks, tau_max and every number are stored."""
    form, data = _live(request)
    if data is None:
        raise Http404("no runs match these filters")
    name = (request.POST.get("name") or "").strip()[:200] or f"Leaderboard {timezone.now():%Y-%m-%d %H:%M}"
    board = Leaderboard.objects.create(
        name=name,
        methods=data["methods"],
        tasks=data["tasks"],
        filters=form.as_filters(),
        tau_max=data["tau_max"],
        results=data,
        created_by=request.user,
    )
    return redirect("benchmark:leaderboard_detail", code=board.code)


def _saved(request: HttpRequest, code: Any) -> Leaderboard:
    board = get_object_or_404(Leaderboard, code=code)
    if not (is_admin(request.user) or board.created_by_id == request.user.id):
        raise Http404("no such leaderboard")  # do not reveal other people's saved boards
    return board


@require_GET
@role_required(RESEARCHER, ADMIN)
def leaderboard_detail(request: HttpRequest, code: Any) -> HttpResponse:
    board = _saved(request, code)
    return render(
        request,
        "benchmark/leaderboard.html",
        {
            "form": None,
            "data": board.results,
            "saved": [],
            "query": "",
            "board": board,
            **_board_context(board.results),
        },
    )


@require_GET
@role_required(RESEARCHER, ADMIN)
def leaderboard_detail_download(request: HttpRequest, code: Any, fmt: str) -> HttpResponse:
    board = _saved(request, code)
    return _download(board.results, fmt, f"leaderboard-{board.code}")
