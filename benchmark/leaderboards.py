"""Leaderboards: MLGym scoring shown as a table, performance profiles and MLGym's analysis.

The builders below turn a `scoring.Leaderboard` (+ per-run cost, exit status and action
counts) into plain data: table rows, CSV/JSON downloads and plotly figure dicts that
static/js/leaderboard.js draws with the vendored plotly.js. No plotly import on the server.
"""

from __future__ import annotations

import csv
import io
import math
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django import forms
from django.db import models
from django.db.models import Q, QuerySet
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import NoReverseMatch, path, reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from accounts.roles import ADMIN, RESEARCHER, is_admin, role_required
from benchmark.mlgym_results import ACTION_ORDER, action_family, baseline_cell
from benchmark.models import Leaderboard, Run, RunGroup, Step, baseline_value
from benchmark.permissions import visible_runs
from benchmark.scoring import (
    BASELINE,
    Direction,
    Issue,
    RunScore,
    Scoring,
    clean_value,
    leaderboard,
    method_task_score,
)
from benchmark.scoring import Leaderboard as Board

SCORING_LABELS = {Scoring.BEST_ATTEMPT: "Best attempt", Scoring.BEST_SUBMISSION: "Best submission"}


def _num(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def ranked_methods(board: Board) -> list[str]:
    """Methods by best-attempt AUP, best first; undefined AUP last."""
    aups = board.results[Scoring.BEST_ATTEMPT].aup
    return sorted(board.methods, key=lambda m: (aups[m] is None, -(aups[m] or 0.0), m))


def table_rows(board: Board) -> list[dict[str, Any]]:
    """One row per method: AUP for both scorings and, per task, best scores with mean +- CI."""
    rows = []
    for rank, method in enumerate(ranked_methods(board), start=1):
        cells = []
        for task in board.tasks:
            cell = board.cells[(method, task)]
            cells.append(
                {
                    "task": task,
                    "best_attempt": _num(cell.best_attempt),
                    "best_submission": _num(cell.best_submission),
                    "mean_attempt": _num(cell.mean_attempt),
                    "ci_attempt": _num(cell.ci_attempt),
                    "n_runs": cell.n_runs,
                    "n_scored_runs": cell.n_scored_runs,
                    "feasible": board.results[Scoring.BEST_ATTEMPT].ratios[task].feasible[method],
                }
            )
        rows.append(
            {
                "rank": rank,
                "method": method,
                "aup_attempt": _num(board.results[Scoring.BEST_ATTEMPT].aup[method]),
                "aup_submission": _num(board.results[Scoring.BEST_SUBMISSION].aup[method]),
                "cells": cells,
            }
        )
    return rows


CSV_COLUMNS = [
    "method",
    "task",
    "best_attempt",
    "best_submission",
    "mean_attempt",
    "ci_attempt",
    "mean_submission",
    "ci_submission",
    "n_runs",
    "n_scored_runs",
    "ratio_best_attempt",
    "ratio_best_submission",
    "feasible_best_attempt",
    "feasible_best_submission",
]


def leaderboard_csv(data: Mapping[str, Any]) -> str:
    """Long format from `page_data`: one line per (method, task) with the method's AUP and tau_max."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow([*CSV_COLUMNS, "aup_best_attempt", "aup_best_submission", "tau_max"])
    for method in data["methods"]:
        aup = data["aup"][method]
        for task in data["tasks"]:
            # Names come from users: keep spreadsheets from reading them as formulas.
            safe = [f"'{n}" if n[:1] in ("=", "+", "-", "@") else n for n in (method, task)]
            cell = {**data["scores"][task][method], "method": safe[0], "task": safe[1]}
            row = ["" if cell.get(c) is None else cell[c] for c in CSV_COLUMNS]
            writer.writerow(
                [
                    *row,
                    *("" if v is None else v for v in (aup["best_attempt"], aup["best_submission"], data["tau_max"])),
                ]
            )
    return out.getvalue()


def step_points(tau: Sequence[float], profile: Sequence[float]) -> tuple[list[float], list[float]]:
    """The corners of a step profile (first point, every change, last point): same drawing, ~50x less JSON."""
    if not profile:
        return [], []
    keep = [0, *(i for i in range(1, len(profile)) if profile[i] != profile[i - 1]), len(profile) - 1]
    keep = sorted(set(keep))
    return [round(tau[i], 6) for i in keep], [profile[i] for i in keep]


def profile_figure(board: Board) -> dict[str, Any]:
    """Performance profiles, best attempt and best submission side by side (step lines)."""
    traces = []
    for index, scoring in enumerate(Scoring, start=1):
        result = board.results[scoring]
        for method in ranked_methods(board):
            x, y = step_points(board.tau, result.profile[method])
            traces.append(
                {
                    "type": "scatter",
                    "mode": "lines",
                    "line": {"shape": "hv"},
                    "name": method,
                    "legendgroup": method,
                    "showlegend": index == 1,
                    "x": x,
                    "y": y,
                    "xaxis": f"x{index}",
                    "yaxis": f"y{index}",
                }
            )
    tau_max = board.tau_max or 0
    return {
        "data": traces,
        "layout": {
            "grid": {"rows": 1, "columns": 2, "pattern": "independent"},
            "xaxis": {"title": {"text": "log10 tau (best attempt)"}, "range": [0, tau_max]},
            "xaxis2": {"title": {"text": "log10 tau (best submission)"}, "range": [0, tau_max]},
            "yaxis": {"title": {"text": "share of tasks within tau"}, "range": [0, 1.02]},
            "yaxis2": {"range": [0, 1.02]},
            "margin": {"t": 20, "b": 150},
            "legend": {"orientation": "h", "y": -0.3},
        },
    }


def aup_cost_figure(board: Board, costs: Mapping[str, Sequence[float]]) -> dict[str, Any]:
    """Best-attempt AUP against the mean recorded cost per run (methods with costs only)."""
    aups = board.results[Scoring.BEST_ATTEMPT].aup
    points = [
        (m, sum(costs[m]) / len(costs[m]), aups[m]) for m in board.methods if costs.get(m) and aups[m] is not None
    ]
    return {
        "data": [
            {
                "type": "scatter",
                "mode": "markers+text",
                "x": [p[1] for p in points],
                "y": [p[2] for p in points],
                "text": [p[0] for p in points],
                "textposition": "top center",
                "customdata": [len(costs[p[0]]) for p in points],
                "hovertemplate": "%{text}<br>$%{x:.2f} per run (%{customdata} runs)<br>AUP %{y:.3f}<extra></extra>",
            }
        ],
        "layout": {
            "xaxis": {
                "title": {"text": "mean API cost per run (USD)"},
                # room for the labels of the cheapest and dearest methods
                "range": [
                    -0.3 * max((p[1] for p in points), default=1.0),
                    1.3 * max((p[1] for p in points), default=1.0),
                ],
            },
            "yaxis": {"title": {"text": "best-attempt AUP"}},
            "margin": {"t": 30},
        },
    }


def stacked_bar_figure(
    counts: Mapping[str, Counter[str]], *, order: Sequence[str] = (), share: bool = False, title: str
) -> dict[str, Any]:
    """One bar per method, stacked by category (exit statuses, action families)."""
    methods = sorted(counts)
    categories = [c for c in order if any(counts[m][c] for m in methods)]
    categories += sorted({c for m in methods for c in counts[m]} - set(categories))
    totals = {m: sum(counts[m].values()) or 1 for m in methods}
    data = [
        {
            "type": "bar",
            "name": category,
            "x": methods,
            "y": [counts[m][category] / totals[m] if share else counts[m][category] for m in methods],
        }
        for category in categories
    ]
    return {
        "data": data,
        "layout": {
            "barmode": "stack",
            "yaxis": {"title": {"text": "share of actions" if share else "runs"}},
            "meta": {"title": title},
            "margin": {"t": 20},
        },
    }


def action_figure(actions: Mapping[str, Counter[str]]) -> dict[str, Any]:
    return stacked_bar_figure(actions, order=ACTION_ORDER, share=True, title="Actions per model")


def exit_status_figure(statuses: Mapping[str, Counter[str]]) -> dict[str, Any]:
    return stacked_bar_figure(statuses, order=("submitted",), title="Exit status per model")


@dataclass
class Analysis:
    """MLGym's side analyses, per method: recorded costs per run, exit statuses, action families."""

    costs: dict[str, list[float]] = field(default_factory=dict)
    exit_statuses: dict[str, Counter[str]] = field(default_factory=dict)
    actions: dict[str, Counter[str]] = field(default_factory=dict)


def page_data(board: Board, analysis: Analysis, *, runs: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """Everything the page and the downloads show, JSON-ready; stored as is in a saved leaderboard."""
    data = board.as_dict()
    data["methods"] = ranked_methods(board)
    data["rows"] = table_rows(board)
    data["runs"] = list(runs)
    data["figures"] = {
        "profiles": profile_figure(board),
        "aup_cost": aup_cost_figure(board, analysis.costs) if analysis.costs else None,
        "exit_status": exit_status_figure(analysis.exit_statuses) if analysis.exit_statuses else None,
        "actions": action_figure(analysis.actions) if analysis.actions else None,
    }
    data["analysis_methods"] = {
        "aup_cost": sorted(analysis.costs),
        "exit_status": sorted(analysis.exit_statuses),
        "actions": sorted(analysis.actions),
    }
    return data


# ---------------------------------------------------------------------------------------------
# Database: which runs a user may rank, and the leaderboard over them.


class Source(models.TextChoices):
    ALL = "all", "Referee runs and imported"
    REFEREE = Run.Source.REFEREE.value, "Referee runs only"
    MLGYM = Run.Source.MLGYM.value, "imported from MLGym only"


def leaderboard_runs(user: Any) -> QuerySet[Run]:
    """Runs a user may rank: exactly the runs they may see (benchmark.permissions)."""
    return visible_runs(user)


class LeaderboardFilter(forms.Form):
    tasks = forms.MultipleChoiceField(required=False)
    methods = forms.MultipleChoiceField(required=False)
    source = forms.ChoiceField(choices=Source.choices, required=False)
    group = forms.ChoiceField(required=False)

    def __init__(self, *args: Any, runs: QuerySet[Run], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        pairs = runs.values_list("task__slug", "method", "agent__name").distinct()
        self.fields["tasks"].choices = [(t, t) for t in sorted({p[0] for p in pairs})]
        self.fields["methods"].choices = [(m, m) for m in sorted({p[1] or p[2] for p in pairs})]
        groups = RunGroup.objects.filter(runs__in=runs).distinct().order_by("-created_at")
        self.fields["group"].choices = [("", "any run set"), *((str(g.code), g.name) for g in groups)]

    def filtered(self, runs: QuerySet[Run]) -> QuerySet[Run]:
        data = self.cleaned_data
        if data.get("source") in (Source.REFEREE, Source.MLGYM):
            runs = runs.filter(source=data["source"])
        if data.get("group"):
            runs = runs.filter(group__code=data["group"])
        if data.get("tasks"):
            runs = runs.filter(task__slug__in=data["tasks"])
        if data.get("methods"):
            runs = runs.filter(Q(method__in=data["methods"]) | Q(method="", agent__name__in=data["methods"]))
        return runs

    def as_filters(self) -> dict[str, Any]:
        return {k: v for k, v in self.cleaned_data.items() if v}


def _run_link(code: Any) -> str | None:
    try:
        return reverse("benchmark:run_detail", args=[code])
    except NoReverseMatch:  # the run page lives with the runs feature; no link until it exists
        return None


def _stored_run_score(row: Mapping[str, Any], baseline: float | None, issues: list[Issue]) -> RunScore:
    """A run's stored best attempt / submission, checked like file scores (None, NaN, absurd)."""
    source = f"run {row['code']} ({row['method'] or row['agent__name']}, {row['task__slug']})"
    if row["best_attempt"] is None:
        issues.append(Issue(source, "best_attempt", "no score (the run never validated or submitted)"))
        return RunScore(None, None, 0)
    values = []
    for name in ("best_attempt", "best_submission"):
        value, issue = (
            (None, None) if row[name] is None else clean_value(row[name], source=source, metric=name, baseline=baseline)
        )
        if issue:
            issues.append(issue)
        values.append(value)
    return RunScore(values[0], values[1], 0)


def runs_leaderboard(
    runs: QuerySet[Run], *, methods: Sequence[str] | None = None
) -> tuple[Board, Analysis, list[dict[str, Any]]]:
    """MLGym scoring over `runs` (their stored best attempt / best submission), plus the analyses.

    Failed runs are not results (a run whose model never answered, a harness error): left out,
    as they are of AUP. The reference row `baseline` is each task's computed baseline score."""
    runs = runs.exclude(status=Run.Status.FAILED)
    rows = list(
        runs.order_by("task__slug", "method", "created_at").values(
            "id",
            "code",
            "method",
            "agent__name",
            "source",
            "task__slug",
            "task__metric",
            "task__direction",
            "task__baseline_scores",
            "best_attempt",
            "best_submission",
            "exit_status",
            "cost",
            "params",
        )
    )
    by_cell: dict[tuple[str, str], list[RunScore]] = defaultdict(list)
    directions: dict[str, Direction] = {}
    baselines: dict[str, float | None] = {}
    analysis = Analysis()
    issues: list[Issue] = []
    run_rows = []
    for row in rows:
        method, task = row["method"] or row["agent__name"], row["task__slug"]
        directions.setdefault(task, Direction(row["task__direction"]))
        if task not in baselines or baselines[task] is None:
            baselines[task] = baseline_value(row["task__baseline_scores"], row["task__metric"])
        by_cell[(method, task)].append(_stored_run_score(row, baselines.get(task), issues))
        params = row["params"] or {}
        if row["source"] == Run.Source.REFEREE or params.get("cost_recorded"):
            analysis.costs.setdefault(method, []).append(row["cost"])
        if row["exit_status"]:
            analysis.exit_statuses.setdefault(method, Counter())[row["exit_status"]] += 1
        run_rows.append(
            {
                "method": method,
                "task": task,
                "source": row["source"],
                "best_attempt": _num(row["best_attempt"]),
                "best_submission": _num(row["best_submission"]),
                "exit_status": row["exit_status"],
                "cost": row["cost"] if row["source"] == Run.Source.REFEREE or params.get("cost_recorded") else None,
                "url": _run_link(row["code"]),
            }
        )
    actions = Step.objects.filter(run_id__in=[r["id"] for r in rows]).values_list(
        "run__method", "run__agent__name", "action"
    )
    for method, agent_name, action in actions.iterator(chunk_size=2000):
        analysis.actions.setdefault(method or agent_name, Counter())[action_family(action)] += 1
    tasks = sorted(directions)
    chosen = list(methods) if methods else sorted({m for m, _ in by_cell})
    cells = {
        (m, t): method_task_score(method=m, task=t, runs=scores, direction=directions[t])
        for (m, t), scores in by_cell.items()
        if m in chosen
    }
    for t in tasks:
        cells[(BASELINE, t)] = baseline_cell(t, baselines.get(t))
    board = leaderboard(
        cells=cells,
        methods=[*(m for m in chosen if m != BASELINE), BASELINE],
        tasks=tasks,
        directions=directions,
        baselines=baselines,
    )
    board.issues[:0] = issues
    return board, analysis, run_rows


# ---------------------------------------------------------------------------------------------
# Views


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


urlpatterns = [
    path("leaderboards/", leaderboard_page, name="leaderboard"),
    path("leaderboards/download.<str:fmt>", leaderboard_download, name="leaderboard_download"),
    path("leaderboards/save", leaderboard_save, name="leaderboard_save"),
    path("leaderboards/<uuid:code>/", leaderboard_detail, name="leaderboard_detail"),
    path(
        "leaderboards/<uuid:code>/download.<str:fmt>", leaderboard_detail_download, name="leaderboard_detail_download"
    ),
]
