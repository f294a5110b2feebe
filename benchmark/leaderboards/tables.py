"""Leaderboard tables and charts: MLGym scoring shown as plain data.

The builders turn a `scoring.Leaderboard` (+ per-run cost, exit status and action counts) into
table rows, CSV/JSON downloads and plotly figure dicts that static/js/leaderboard.js draws with
the vendored plotly.js. No Django and no plotly import on the server.
"""

from __future__ import annotations

import io
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchmark.csv_tables import CsvWriter
from benchmark.leaderboards.mlgym_results import ACTION_ORDER
from benchmark.leaderboards.published import published_comparison
from benchmark.leaderboards.scoring import BASELINE, Scoring
from benchmark.leaderboards.scoring import Leaderboard as Board
from benchmark.text_tables import latex_escape, latex_tabular, markdown_table

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
    writer = CsvWriter(out)  # names come from users: the writer keeps spreadsheets from running them
    writer.writerow([*CSV_COLUMNS, "aup_best_attempt", "aup_best_submission", "tau_max"])
    for method in data["methods"]:
        aup = data["aup"][method]
        for task in data["tasks"]:
            cell = {**data["scores"][task][method], "method": method, "task": task}
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


AXIS = {"automargin": True, "ticks": "outside", "ticklen": 6}


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
    # Axes size their margins to their labels (automargin) and the legend stands at the right, one
    # method a line: a horizontal legend under the plots overlapped the axis titles with many methods.
    return {
        "data": traces,
        "layout": {
            "grid": {"rows": 1, "columns": 2, "pattern": "independent"},
            # Outside ticks keep the x and y axes' "0" labels apart at the corner.
            "xaxis": {"title": {"text": "log10 tau (best attempt)"}, "range": [0, tau_max], **AXIS},
            "xaxis2": {"title": {"text": "log10 tau (best submission)"}, "range": [0, tau_max], **AXIS},
            "yaxis": {"title": {"text": "share of tasks within tau"}, "range": [0, 1.02], **AXIS},
            "yaxis2": {"range": [0, 1.02], **AXIS},
            "margin": {"t": 20},
            "legend": {"orientation": "v"},
        },
    }


def aup_cost_figure(board: Board, costs: Mapping[str, Sequence[float]]) -> dict[str, Any]:
    """Best-attempt AUP against the mean recorded cost per run (methods with costs only).

    One trace per method, named in the legend: text labels beside the markers overlapped one
    another when methods cost about the same, and were cut at the plot's edges."""
    aups = board.results[Scoring.BEST_ATTEMPT].aup
    points = [
        (m, sum(costs[m]) / len(costs[m]), aups[m]) for m in board.methods if costs.get(m) and aups[m] is not None
    ]
    return {
        "data": [
            {
                "type": "scatter",
                "mode": "markers",
                "name": method,
                "x": [cost],
                "y": [value],
                "marker": {"size": 10},
                "customdata": [len(costs[method])],
                "hovertemplate": "$%{x:.2f} per run (%{customdata} runs)<br>AUP %{y:.3f}",
            }
            for method, cost, value in points
        ],
        "layout": {
            "xaxis": {"title": {"text": "mean API cost per run (USD)"}, "automargin": True, "rangemode": "tozero"},
            "yaxis": {"title": {"text": "best-attempt AUP"}, "automargin": True},
            "margin": {"t": 30},
            "legend": {"orientation": "v"},
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
    # Horizontal bars: method names are y tick labels, one per row, so long names neither overlap
    # (as slanted x labels did) nor get cut (the left margin grows to fit them).
    data = [
        {
            "type": "bar",
            "orientation": "h",
            "name": category,
            "y": methods,
            "x": [counts[m][category] / totals[m] if share else counts[m][category] for m in methods],
        }
        for category in categories
    ]
    return {
        "data": data,
        "layout": {
            "barmode": "stack",
            "xaxis": {"title": {"text": "share of actions" if share else "runs"}, "automargin": True},
            "yaxis": {"automargin": True, "autorange": "reversed"},
            "meta": {"title": title},
            "margin": {"t": 20},
            "height": max(360, 120 + 26 * len(methods)),
        },
    }


def action_figure(actions: Mapping[str, Counter[str]]) -> dict[str, Any]:
    return stacked_bar_figure(actions, order=ACTION_ORDER, share=True, title="Actions per model")


def exit_status_figure(statuses: Mapping[str, Counter[str]]) -> dict[str, Any]:
    return stacked_bar_figure(statuses, order=("submitted",), title="Exit status per model")


def task_score_figures(board: Board) -> dict[str, dict[str, Any]]:
    """Per task: each method's best attempt as a bar, and the task's baseline as a dashed line.

    The baseline is the board's `baseline` row (the task's own baseline score); a task without one
    gets no line, and its figure says so (`baseline` None) instead of drawing one at 0."""
    figures = {}
    for task in board.tasks:
        baseline = finite_or_none(board.cells[(BASELINE, task)].best_attempt)
        scored = [
            (method, value)
            for method in ranked_methods(board)
            if method != BASELINE and (value := finite_or_none(board.cells[(method, task)].best_attempt)) is not None
        ]
        layout: dict[str, Any] = {
            "xaxis": {"title": {"text": f"best attempt on {task}"}, "automargin": True},
            "yaxis": {"automargin": True, "autorange": "reversed"},
            "margin": {"t": 30},
            "height": max(260, 100 + 26 * len(scored)),
        }
        if baseline is not None:
            layout["shapes"] = [
                {
                    "type": "line",
                    "x0": baseline,
                    "x1": baseline,
                    "yref": "paper",
                    "y0": 0,
                    "y1": 1,
                    "line": {"dash": "dash", "color": "#444", "width": 2},
                }
            ]
            layout["annotations"] = [
                {
                    "x": baseline,
                    "y": 1,
                    "yref": "paper",
                    "yanchor": "bottom",
                    "showarrow": False,
                    "text": f"baseline {baseline:.4g}",
                }
            ]
        figures[task] = {
            "data": [
                {
                    "type": "bar",
                    "orientation": "h",
                    "y": [method for method, _ in scored],
                    "x": [value for _, value in scored],
                    "hovertemplate": "%{y}: %{x:.4f}<extra></extra>",
                }
            ],
            "layout": layout,
            "baseline": baseline,
        }
    return figures


@dataclass
class Analysis:
    """MLGym's side analyses, per method: recorded costs per run, exit statuses, action families."""

    costs: dict[str, list[float]] = field(default_factory=dict)
    exit_statuses: dict[str, Counter[str]] = field(default_factory=dict)
    actions: dict[str, Counter[str]] = field(default_factory=dict)


def page_data(
    board: Board,
    analysis: Analysis,
    *,
    runs: Sequence[Mapping[str, Any]] = (),
    research: bool = False,
    grouped: bool = False,
) -> dict[str, Any]:
    """Everything the page and the downloads show, JSON-ready; stored as is in a saved leaderboard.

    `published` is MLGym's published table beside this one when the board ranks MLGym's method
    set (benchmark.leaderboards.published), else None."""
    data = board.as_dict()
    data["methods"] = ranked_methods(board)
    data["rows"] = table_rows(board)
    data["runs"] = list(runs)
    data["figures"] = {
        "profiles": profile_figure(board),
        "aup_cost": aup_cost_figure(board, analysis.costs) if analysis.costs else None,
        "exit_status": exit_status_figure(analysis.exit_statuses) if analysis.exit_statuses else None,
        "actions": action_figure(analysis.actions) if analysis.actions else None,
        "task_scores": task_score_figures(board),
    }
    data["analysis_methods"] = {
        "aup_cost": sorted(analysis.costs),
        "exit_status": sorted(analysis.exit_statuses),
        "actions": sorted(analysis.actions),
    }
    data["published"] = published_comparison(data, runs=runs, research=research, grouped=grouped)
    # A row links to its runs: by its method, and by its environment when rows are per environment.
    ranked_as = {run["method"]: (run.get("method_base", run["method"]), run.get("environment", "")) for run in runs}
    for row in data["rows"]:
        row["method_filter"], row["environment"] = ranked_as.get(row["method"], (row["method"], ""))
        row["published"] = (data["published"] or {}).get("rows", {}).get(row["method"])
    return data


def _number(value: float | None, digits: int) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _text_table(data: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    """The page's table as strings: rank, method, both AUPs, then each task's best attempt."""
    head = ["#", "Method", "AUP best attempt", "AUP best submission", *data["tasks"]]
    body = []
    for rank, method in enumerate(data["methods"], start=1):
        aup = data["aup"][method]
        scores = [_number(data["scores"][task][method]["best_attempt"], 4) for task in data["tasks"]]
        body.append([str(rank), method, _number(aup["best_attempt"], 3), _number(aup["best_submission"], 3), *scores])
    return head, body


def _caption(data: Mapping[str, Any]) -> str:
    tau = "undefined" if data["tau_max"] is None else data["tau_max"]
    return (
        f"MLGym scoring over {len(data['methods'])} methods (baseline included) and {len(data['tasks'])} tasks; "
        f"tau_max = {tau}. Task columns: best attempt over runs."
    )


def leaderboard_markdown(data: Mapping[str, Any]) -> str:
    head, body = _text_table(data)
    return f"{markdown_table(head, body, numeric_from=2)}\n\n{_caption(data)}\n"


def leaderboard_latex(data: Mapping[str, Any]) -> str:
    """A booktabs table (needs \\usepackage{booktabs, graphicx}); wide boards are scaled to the text width."""
    head, body = _text_table(data)
    lines = [r"\begin{table}[t]", r"\centering", r"\resizebox{\textwidth}{!}{%"]
    lines += latex_tabular(head, body, numeric_from=2)
    lines += ["}", r"\caption{" + latex_escape(_caption(data)).replace("tau\\_max", r"$\tau_{\max}$") + "}"]
    lines += [r"\end{table}", ""]
    return "\n".join(lines)
