"""Leaderboard pages: the live board for a filter, downloads, and saved (pinned) boards."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from accounts.roles import ADMIN, RESEARCHER, is_admin, role_required
from benchmark.leaderboards.board import leaderboard_runs, runs_leaderboard
from benchmark.leaderboards.forms import LeaderboardFilter
from benchmark.leaderboards.tables import leaderboard_csv, page_data
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
    board, analysis, run_rows = runs_leaderboard(selected, methods=form.cleaned_data.get("methods") or None)
    return form, page_data(board, analysis, runs=run_rows)


@require_GET
@role_required(RESEARCHER, ADMIN)
def leaderboard_page(request: HttpRequest) -> HttpResponse:
    form, data = _live(request)
    saved = Leaderboard.objects.filter(created_by=request.user)[:20]
    status = 400 if form.errors else 200
    return render(
        request,
        "benchmark/leaderboard.html",
        {"form": form, "data": data, "saved": saved, "query": request.GET.urlencode(), "board": None},
        status=status,
    )


def _download(data: Mapping[str, Any], fmt: str, name: str) -> HttpResponse:
    if fmt == "csv":
        response = HttpResponse(leaderboard_csv(data), content_type="text/csv; charset=utf-8")
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
        {"form": None, "data": board.results, "saved": [], "query": "", "board": board},
    )


@require_GET
@role_required(RESEARCHER, ADMIN)
def leaderboard_detail_download(request: HttpRequest, code: Any, fmt: str) -> HttpResponse:
    board = _saved(request, code)
    return _download(board.results, fmt, f"leaderboard-{board.code}")
