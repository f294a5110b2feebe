"""Leaderboard tables and charts: MLGym scoring shown as plain data.

The builders turn a `scoring.Leaderboard` (+ per-run cost, exit status and action counts) into
table rows, CSV/JSON downloads and plotly figure dicts that static/js/leaderboard.js draws with
the vendored plotly.js. No Django and no plotly import on the server.
"""

from __future__ import annotations

import csv
import io
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchmark.leaderboards.mlgym_results import ACTION_ORDER
from benchmark.leaderboards.scoring import Leaderboard as Board
from benchmark.leaderboards.scoring import (
    Scoring,
)

SCORING_LABELS = {Scoring.BEST_ATTEMPT: "Best attempt", Scoring.BEST_SUBMISSION: "Best submission"}


def finite_or_none(value: float | None) -> float | None:
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
                    "best_attempt": finite_or_none(cell.best_attempt),
                    "best_submission": finite_or_none(cell.best_submission),
                    "mean_attempt": finite_or_none(cell.mean_attempt),
                    "ci_attempt": finite_or_none(cell.ci_attempt),
                    "n_runs": cell.n_runs,
                    "n_scored_runs": cell.n_scored_runs,
                    "feasible": board.results[Scoring.BEST_ATTEMPT].ratios[task].feasible[method],
                }
            )
        rows.append(
            {
                "rank": rank,
                "method": method,
                "aup_attempt": finite_or_none(board.results[Scoring.BEST_ATTEMPT].aup[method]),
                "aup_submission": finite_or_none(board.results[Scoring.BEST_SUBMISSION].aup[method]),
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
