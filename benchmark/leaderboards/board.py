"""The leaderboard over stored runs: which runs a user may rank, scored the way MLGym scores.

Failed runs are not results; neither are the research pipeline's experiments (an agent working on
an MLR-Bench idea, not on the task's metric) unless asked for.

Like is compared with like:

* a column is one task (its slug): Referee's ports of MLGym's games are tasks of their own
  (`battle_of_sexes`, "Battle of the Sexes (Referee port)"), never merged with MLGym's releases
  (`battleOfSexes`); a Referee run on MLGym's own task shares MLGym's column;
* the `baseline` row is, per column, the baseline MLGym released with its results
  (`params["mlgym_baseline"]` of the imported runs, first run folder first, as
  `manage.py aup --results` reads it) when the column ranks imported results, else the baseline
  Referee computed for the task (its test split); `page_data["columns"]` says which;
* every best attempt is a test-split score: MLGym's `validate` scores the test set, so an imported
  run's best attempt is one already; a Referee run's agent validates on the dev split, and each
  attempt it validated is scored on the test split after the run, out of its sight
  (benchmark.runs.attempts). Its best attempt is the best of those and its submission's score.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Q, QuerySet
from django.urls import NoReverseMatch, reverse

from benchmark.leaderboards.mlgym_results import action_family, baseline_cell, first_baseline
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
from benchmark.models import Run, Step, Task, baseline_value
from benchmark.runs.permissions import visible_runs

# The keys of `Run.environment` a board can group and filter by (what a run ran on).
ENVIRONMENT_KEYS = ("image", "image_digest", "task_hash", "dataset_hash", "evaluator_hash", "network")
MLGYM_RELEASE = "MLGym release"  # the environment of an imported result: MLGym's own, unrecorded


def leaderboard_runs(user: Any) -> QuerySet[Run]:
    """Runs a user may rank: exactly the runs they may see (benchmark.runs.permissions)."""
    return visible_runs(user)


def method_q(names: Sequence[str]) -> Q:
    """Runs of these methods: a run's method, or its agent's name when it has none."""
    return Q(method__in=names) | Q(method="", agent__name__in=names)


def environment_q(value: str) -> Q:
    """Runs with this environment ("key=value" of Run.environment, or MLGym release)."""
    if value == MLGYM_RELEASE:
        return Q(source=Run.Source.MLGYM)
    key, _, wanted = value.partition("=")
    if key not in ENVIRONMENT_KEYS:
        return Q(pk__in=[])
    return Q(source=Run.Source.REFEREE, **{f"environment__{key}": wanted})


def environment_label(source: str, environment: Mapping[str, Any] | None, key: str) -> str:
    """How a run's environment reads under one key: "image=referee-sandbox:1a2b", or MLGym release."""
    if source == Run.Source.MLGYM:
        return MLGYM_RELEASE
    value = (environment or {}).get(key)
    return f"{key}={value}" if value not in (None, "") else f"{key} not recorded"


def ranked_runs(runs: QuerySet[Run], *, include_research: bool = False) -> QuerySet[Run]:
    """The runs that are results: not failed, and not research-pipeline experiments unless asked for."""
    runs = runs.exclude(status=Run.Status.FAILED)
    if not include_research:
        runs = runs.exclude(params__has_key="research_run")
    return runs


def cell_runs(runs: QuerySet[Run], *, method: str = "", column: str = "", environment: str = "") -> QuerySet[Run]:
    """The runs behind one method, one task column, or one cell of the board."""
    if method:
        runs = runs.filter(method_q([method]))
    if column:
        runs = runs.filter(task__slug=column)
    if environment:
        runs = runs.filter(environment_q(environment))
    return runs


def column_label(slug: str, title: str, source: str) -> str:
    """A column's header: Referee's ports are named as such, MLGym's tasks by MLGym's id."""
    if source == "builtin":
        return f"{title} (Referee port)"
    if source == "mlgym":
        return slug
    return title or slug


_CODE = "00000000-0000-0000-0000-000000000000"


def _run_links() -> Any:
    """code -> the run page's URL. Reversed once and filled per run: reverse() per row was a third
    of the board's compute (624 runs: 77 of 233 ms under cProfile)."""
    try:
        pattern = reverse("benchmark:run_detail", args=[_CODE])
    except NoReverseMatch:  # the run page lives with the runs feature; no link until it exists
        return lambda code: None
    return lambda code: pattern.replace(_CODE, str(code))


@dataclass
class _Column:
    """What the board knows about one task column while reading its runs."""

    slug: str
    direction: Direction
    label: str
    imported: list[tuple[str, float | None]] = field(default_factory=list)  # (run folder, released baseline)
    computed: float | None = None
    referee_runs: int = 0

    def baseline(self, issues: list[Issue]) -> tuple[float | None, str | None]:
        """(the column's baseline, where it comes from): MLGym's released one for imported results."""
        if self.imported:
            value, problem = first_baseline(sorted(self.imported, key=lambda pair: pair[0]), task=self.slug)
            if problem:
                issues.append(problem)
            if value is not None:
                if self.referee_runs:
                    computed = "none" if self.computed is None else f"{self.computed:.6g}"
                    issues.append(
                        Issue(
                            self.slug,
                            BASELINE,
                            f"MLGym's released baseline {value:.6g} ranks this column's {self.referee_runs} Referee "
                            f"run(s) too (Referee's computed baseline: {computed}); "
                            "choose Referee runs only to rank them against it",
                        )
                    )
                return value, "imported"
        return self.computed, ("computed" if self.computed is not None else None)


def attempt_on_test_split(
    *, source: str, best_attempt: float | None, best_submission: float | None, params: Mapping[str, Any] | None
) -> tuple[float | None, str]:
    """(a run's best attempt on the test split, why it is only its submission's score, or "").

    An imported run's best attempt is one already (MLGym's validate scores the test set). A
    Referee run's is the best of its validated attempts' test scores (benchmark.runs.attempts) and
    its submission's; until those are in, or for a run from before they existed, its submission's."""
    if source == Run.Source.MLGYM:
        return best_attempt, ""
    params = params or {}
    scoring = params.get("test_scoring") if isinstance(params.get("test_scoring"), dict) else {}
    kept = params.get("attempts_kept") or []
    if scoring.get("status") == "done":
        return scoring.get("best_attempt"), ""
    if kept:
        detail = f": {scoring['error']}" if scoring.get("error") else ""
        why = (
            f"{len(kept)} validated attempt(s) not scored on the test split yet "
            f"({scoring.get('status', 'queued')}{detail}): its submission's score stands for its best attempt"
        )
        return best_submission, why
    if best_attempt is not None and best_attempt != best_submission:
        return best_submission, (
            "its validated attempts were scored on the dev split only (the run predates test-split scoring "
            "of attempts): its submission's score stands for its best attempt"
        )
    return best_submission, ""


def _stored_run_score(row: Mapping[str, Any], baseline: float | None, issues: list[Issue]) -> RunScore:
    """A run's best attempt / submission on the test split, checked like file scores (None, NaN, absurd)."""
    source = f"run {row['code']} ({row['method'] or row['agent__name']}, {row['task__slug']})"
    params = {"test_scoring": row["params__test_scoring"], "attempts_kept": row["params__attempts_kept"]}
    attempt, why = attempt_on_test_split(
        source=row["source"], best_attempt=row["best_attempt"], best_submission=row["best_submission"], params=params
    )
    if why:
        issues.append(Issue(source, "best_attempt", why))
    if attempt is None and row["best_submission"] is None:
        issues.append(Issue(source, "best_attempt", "no score (the run never validated or submitted)"))
        return RunScore(None, None, 0)
    values = []
    for name, raw in (("best_attempt", attempt), ("best_submission", row["best_submission"])):
        value, issue = (None, None) if raw is None else clean_value(raw, source=source, metric=name, baseline=baseline)
        if issue:
            issues.append(issue)
        values.append(value)
    return RunScore(values[0], values[1], 0)


RUN_FIELDS = (
    "id",
    "code",
    "method",
    "agent__name",
    "source",
    "task__slug",
    "task__title",
    "task__source",
    "task__metric",
    "task__direction",
    "task_id",
    "best_attempt",
    "best_submission",
    "exit_status",
    "cost",
    # Only the keys the board reads, not the whole params (imported prompts are long).
    "params__cost_recorded",
    "params__mlgym_folder",
    "params__mlgym_baseline",
    "params__test_scoring",
    "params__attempts_kept",
)


def runs_leaderboard(
    runs: QuerySet[Run],
    *,
    methods: Sequence[str] | None = None,
    include_research: bool = False,
    group_by: str = "",
) -> tuple[Board, Analysis, list[dict[str, Any]]]:
    """MLGym scoring over `runs` (see the module docstring), plus the analyses and the run list.

    `group_by` (a key of ENVIRONMENT_KEYS) splits each method into one row per environment it ran on.
    The board's `columns` describe each column: label, baseline and where the baseline comes from."""
    runs = ranked_runs(runs, include_research=include_research)
    fields = (*RUN_FIELDS, "environment") if group_by else RUN_FIELDS
    rows = list(runs.order_by("task__slug", "method", "created_at").values(*fields))
    columns = _read_columns(rows)
    issues: list[Issue] = []
    baselines: dict[str, float | None] = {}
    baseline_sources: dict[str, str | None] = {}
    for slug, column in columns.items():
        baselines[slug], baseline_sources[slug] = column.baseline(issues)
    scored = _Scored()
    run_link = _run_links()
    for row in rows:
        scored.add(row, baseline=baselines.get(row["task__slug"]), group_by=group_by, issues=issues, link=run_link)
    scored.count_actions()
    board = _board(columns, scored.by_cell, baselines, methods=methods, group_by=group_by)
    board.issues[:0] = issues
    board.columns = {
        t: {"label": columns[t].label, "baseline": baselines[t], "baseline_source": baseline_sources[t]}
        for t in sorted(columns)
    }
    return board, scored.analysis, scored.run_rows


def _read_columns(rows: list[dict[str, Any]]) -> dict[str, _Column]:
    """One column per task slug, with the released baselines of its imported runs, its count of
    Referee runs and Referee's computed baseline: the current version's, else the newest version's
    that has one (read once per version: a computed baseline carries the baseline's output)."""
    columns: dict[str, _Column] = {}
    versions: set[int] = set()  # the task versions the runs ran
    for row in rows:
        slug = row["task__slug"]
        column = columns.get(slug)
        if column is None:
            label = column_label(slug, row["task__title"], row["task__source"])
            column = columns[slug] = _Column(slug, Direction(row["task__direction"]), label)
        if row["source"] == Run.Source.MLGYM:
            released = row["params__mlgym_baseline"]
            value = released.get(row["task__metric"]) if isinstance(released, dict) else None
            column.imported.append((row["params__mlgym_folder"] or "", value))
        else:
            column.referee_runs += 1
        versions.add(row["task_id"])
    computed = Task.objects.filter(pk__in=versions).order_by("-is_current", "-pk")
    for slug, metric, scores in computed.values_list("slug", "metric", "baseline_scores"):
        if slug in columns and columns[slug].computed is None:
            columns[slug].computed = baseline_value(scores, metric)
    return columns


@dataclass
class _Scored:
    """The runs scored one by one: the scores per (ranked method, task) cell, the analyses and the
    run list. The ranked method is the method, or "method · environment" when grouped."""

    by_cell: dict[tuple[str, str], list[RunScore]] = field(default_factory=lambda: defaultdict(list))
    analysis: Analysis = field(default_factory=Analysis)
    run_rows: list[dict[str, Any]] = field(default_factory=list)
    method_of: dict[int, str] = field(default_factory=dict)  # run id -> ranked method

    def add(
        self, row: dict[str, Any], *, baseline: float | None, group_by: str, issues: list[Issue], link: Any
    ) -> None:
        method, task = row["method"] or row["agent__name"], row["task__slug"]
        environment = environment_label(row["source"], row.get("environment"), group_by) if group_by else ""
        ranked_as = f"{method} · {environment}" if group_by else method
        self.method_of[row["id"]] = ranked_as
        score = _stored_run_score(row, baseline, issues)
        self.by_cell[(ranked_as, task)].append(score)
        cost_known = row["source"] == Run.Source.REFEREE or row["params__cost_recorded"]
        if cost_known:
            self.analysis.costs.setdefault(ranked_as, []).append(row["cost"])
        if row["exit_status"]:
            self.analysis.exit_statuses.setdefault(ranked_as, Counter())[row["exit_status"]] += 1
        self.run_rows.append(
            {
                "method": ranked_as,
                "method_base": method,
                "task": task,
                "source": row["source"],
                "environment": environment,
                "best_attempt": finite_or_none(score.best_attempt),
                "best_submission": finite_or_none(score.best_submission),
                "exit_status": row["exit_status"],
                "cost": row["cost"] if cost_known else None,
                "url": link(row["code"]),
            }
        )

    def count_actions(self) -> None:
        """Each ranked method's actions by family, over the steps of every run added."""
        actions = Step.objects.filter(run_id__in=list(self.method_of)).values_list("run_id", "action")
        for run_id, action in actions.iterator(chunk_size=2000):
            self.analysis.actions.setdefault(self.method_of[run_id], Counter())[action_family(action)] += 1


def _board(
    columns: dict[str, _Column],
    by_cell: dict[tuple[str, str], list[RunScore]],
    baselines: dict[str, float | None],
    *,
    methods: Sequence[str] | None,
    group_by: str,
) -> Board:
    """The board of the chosen methods (all by default; grouped rows by their method's name) and
    the baseline row, over every column."""
    tasks = sorted(columns)
    directions = {t: columns[t].direction for t in tasks}
    if methods and group_by:
        chosen = sorted({m for m, _ in by_cell if m.split(" · ")[0] in methods})
    else:
        chosen = list(methods) if methods else sorted({m for m, _ in by_cell})
    cells = {
        (m, t): method_task_score(method=m, task=t, runs=scores, direction=directions[t])
        for (m, t), scores in by_cell.items()
        if m in chosen
    }
    for t in tasks:
        cells[(BASELINE, t)] = baseline_cell(t, baselines.get(t))
    return leaderboard(
        cells=cells,
        methods=[*(m for m in chosen if m != BASELINE), BASELINE],
        tasks=tasks,
        directions=directions,
        baselines=baselines,
    )


def task_labels(slugs: Sequence[str]) -> dict[str, str]:
    """Column labels of task slugs, for the filter's choices (the current version's title and source)."""
    labels = {}
    for slug, title, source in (
        Task.objects.filter(slug__in=slugs).order_by("slug", "-is_current").values_list("slug", "title", "source")
    ):
        labels.setdefault(slug, column_label(slug, title, source))
    return labels
