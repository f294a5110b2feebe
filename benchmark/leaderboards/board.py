"""The leaderboard over stored runs: which runs a user may rank, scored the way MLGym scores.

Failed runs are not results; neither are the research pipeline's experiments (an agent working on
an MLR-Bench idea, not on the task's metric) unless asked for. The reference row `baseline` is each
task's computed baseline. Columns are tasks across sources (`task_names`: MLGym's ids mapped).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from django.db.models import Q, QuerySet
from django.urls import NoReverseMatch, reverse

from benchmark.leaderboards.mlgym_results import action_family, baseline_cell
from benchmark.leaderboards.scoring import (
    BASELINE,
    Direction,
    Issue,
    RunScore,
    clean_value,
    leaderboard,
    method_task_score,
)
from benchmark.leaderboards.scoring import Leaderboard as Board
from benchmark.leaderboards.tables import Analysis, finite_or_none
from benchmark.leaderboards.task_names import column_slugs, task_column
from benchmark.models import Run, Step, baseline_value
from benchmark.runs.permissions import visible_runs


def leaderboard_runs(user: Any) -> QuerySet[Run]:
    """Runs a user may rank: exactly the runs they may see (benchmark.runs.permissions)."""
    return visible_runs(user)


def method_q(names: Sequence[str]) -> Q:
    """Runs of these methods: a run's method, or its agent's name when it has none."""
    return Q(method__in=names) | Q(method="", agent__name__in=names)


def ranked_runs(runs: QuerySet[Run], *, include_research: bool = False) -> QuerySet[Run]:
    """The runs that are results: not failed, and not research-pipeline experiments unless asked for."""
    runs = runs.exclude(status=Run.Status.FAILED)
    if not include_research:
        runs = runs.exclude(params__has_key="research_run")
    return runs


def cell_runs(runs: QuerySet[Run], *, method: str = "", column: str = "") -> QuerySet[Run]:
    """The runs behind one method, one task column, or one cell of the board."""
    if method:
        runs = runs.filter(method_q([method]))
    if column:
        runs = runs.filter(task__slug__in=column_slugs([column]))
    return runs


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
    runs: QuerySet[Run], *, methods: Sequence[str] | None = None, include_research: bool = False
) -> tuple[Board, Analysis, list[dict[str, Any]]]:
    """MLGym scoring over `runs` (their stored best attempt / best submission), plus the analyses.

    Failed runs are not results (a run whose model never answered, a harness error): left out,
    as they are of AUP. The reference row `baseline` is each task's computed baseline score: the
    column's own task's (Referee's computed one for a mapped game) before an alias's."""
    runs = ranked_runs(runs, include_research=include_research)
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
    own_baseline: set[str] = set()  # columns whose baseline comes from the column's own task
    for row in rows:
        method, task = row["method"] or row["agent__name"], task_column(row["task__slug"])
        direction = Direction(row["task__direction"])
        if directions.setdefault(task, direction) != direction:
            issue = Issue(task, row["task__slug"], f"direction {direction} differs from the column's; check task_names")
            if issue not in issues:
                issues.append(issue)
        if task not in own_baseline:
            value = baseline_value(row["task__baseline_scores"], row["task__metric"])
            if value is not None and (row["task__slug"] == task or baselines.get(task) is None):
                baselines[task] = value
                if row["task__slug"] == task:
                    own_baseline.add(task)
            baselines.setdefault(task, None)
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
                "task_slug": row["task__slug"],
                "source": row["source"],
                "best_attempt": finite_or_none(row["best_attempt"]),
                "best_submission": finite_or_none(row["best_submission"]),
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
