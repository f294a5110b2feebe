"""MLGym scoring: best attempt / best submission, performance profiles and AUP.

Pure Python + numpy (no Django), so the management command, the leaderboard page and the
benchmark share one implementation. The method follows MLGym's published computation
(../shared/mlgym/README.md):

* per run: best attempt = best priority-metric value among its scores, best submission = its
  last score; a run without any usable value is skipped;
* per method and task: the best over its runs (the baseline counts as one more method);
* per task: a method is feasible when its score is >= 0 and at least as good as the
  baseline; ratio = best/score (max) or score/best (min) against the best feasible score;
  infeasible or missing methods get (1 + epsilon) x the worst feasible ratio;
* tau_max = log10 of the largest ceil((1 + epsilon) x worst feasible ratio) over tasks and
  both scorings, rounded up to one decimal; rho_m(tau) = share of tasks with
  log10(ratio) <= tau on `points` evenly spaced tau in [0, tau_max]; AUP = left Riemann sum.

Bad data never raises: it becomes an `Issue` that callers show next to the numbers.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

BASELINE = "baseline"
EPSILON = 0.05
PROFILE_POINTS = 500
# A value this many times larger (in magnitude) than the baseline, or than 1 when there is no
# baseline, is treated as a broken evaluation (MLGym released -3e13 rewards on a task whose
# baseline is 34), reported and left out rather than allowed to win or to skew means.
ABSURD_FACTOR = 1e6


class Direction(StrEnum):
    MAX = "max"
    MIN = "min"


class Scoring(StrEnum):
    BEST_ATTEMPT = "best_attempt"
    BEST_SUBMISSION = "best_submission"


@dataclass(frozen=True)
class Issue:
    """One problem found in the input: where, which field, what is wrong."""

    source: str
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.source}: {self.field}: {self.message}"


def better(a: float, b: float, direction: Direction) -> bool:
    return a > b if direction == Direction.MAX else a < b


def best_of(values: Iterable[float], direction: Direction) -> float | None:
    values = list(values)
    if not values:
        return None
    return max(values) if direction == Direction.MAX else min(values)


def absurd_limit(baseline: float | None) -> float:
    return ABSURD_FACTOR * max(1.0, abs(baseline) if baseline is not None else 1.0)


def clean_value(
    value: Any, *, source: str, metric: str, baseline: float | None = None
) -> tuple[float | None, Issue | None]:
    """A usable float, or None and the reason it is not usable."""
    if value is None:
        return None, Issue(source, metric, "missing")
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None, Issue(source, metric, f"not a number: {value!r}")
    number = float(value)
    if math.isnan(number):
        return None, Issue(source, metric, "NaN")
    if math.isinf(number):
        return None, Issue(source, metric, f"infinite ({number})")
    if abs(number) > absurd_limit(baseline):
        return None, Issue(
            source,
            metric,
            f"absurd value {number:.6g} (|value| > {absurd_limit(baseline):.3g})",
        )
    return number, None


@dataclass
class RunScore:
    """Best attempt and best submission of one run (None when the run has no usable score)."""

    best_attempt: float | None
    best_submission: float | None
    n_scores: int
    issues: list[Issue] = field(default_factory=list)


def run_score(
    scores: Sequence[Mapping[str, Any]] | Any,
    *,
    metric: str,
    direction: Direction,
    source: str,
    baseline: float | None = None,
) -> RunScore:
    """Score one run from its list of metric dicts (validations, the last one the submission)."""
    issues: list[Issue] = []
    if not isinstance(scores, Sequence) or isinstance(scores, str | bytes):
        issues.append(
            Issue(
                source,
                "agent",
                f"expected a list of scores, got {type(scores).__name__}",
            )
        )
        return RunScore(None, None, 0, issues)
    if not scores:
        issues.append(Issue(source, "agent", "no scores (the run never validated or submitted)"))
        return RunScore(None, None, 0, issues)
    values: list[float | None] = []
    for index, entry in enumerate(scores):
        where = f"{source} agent[{index}]"
        if not isinstance(entry, Mapping):
            issues.append(
                Issue(
                    where,
                    metric,
                    f"expected a metrics dict, got {type(entry).__name__}",
                )
            )
            values.append(None)
            continue
        value, issue = clean_value(entry.get(metric), source=where, metric=metric, baseline=baseline)
        if issue:
            issues.append(issue)
        values.append(value)
    usable = [v for v in values if v is not None]
    if not usable:
        # MLGym skips such a run entirely (no best attempt, hence no submission either).
        return RunScore(None, None, len(scores), issues)
    # The submission is the last score; if it is unusable the run has no best submission.
    return RunScore(best_of(usable, direction), values[-1], len(scores), issues)


# Two-sided 95 % Student-t critical values for 1..30 degrees of freedom (scipy.stats.t.ppf(0.975,
# df), checked by a test). Runs per cell are few, and importing scipy costs ~0.4 s, which would
# be most of `manage.py aup`'s time; scipy is only imported for other levels or larger samples.
T_975 = (
    12.706205, 4.302653, 3.182446, 2.776445, 2.570582, 2.446912, 2.364624, 2.306004, 2.262157, 2.228139,
    2.200985, 2.178813, 2.160369, 2.144787, 2.13145, 2.119905, 2.109816, 2.100922, 2.093024, 2.085963,
    2.079614, 2.073873, 2.068658, 2.063899, 2.059539, 2.055529, 2.051831, 2.048407, 2.04523, 2.042272,
)  # fmt: skip


def t_critical(df: int, confidence: float = 0.95) -> float:
    if confidence == 0.95 and 1 <= df <= len(T_975):
        return T_975[df - 1]
    from scipy import stats

    return float(stats.t.ppf((1 + confidence) / 2, df))


def mean_ci(values: Sequence[float], confidence: float = 0.95) -> tuple[float | None, float | None]:
    """Mean and half-width of a Student-t confidence interval (None when undefined)."""
    n = len(values)
    if n == 0:
        return None, None
    mean = math.fsum(values) / n
    if n == 1:
        return mean, None
    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1))
    return mean, t_critical(n - 1, confidence) * sd / math.sqrt(n)


@dataclass
class MethodTaskScore:
    """A method on a task over its runs: best of runs, and mean with a 95 % CI."""

    method: str
    task: str
    n_runs: int
    n_scored_runs: int
    best_attempt: float | None
    best_submission: float | None
    mean_attempt: float | None
    ci_attempt: float | None
    mean_submission: float | None
    ci_submission: float | None

    def score(self, scoring: Scoring) -> float | None:
        return self.best_attempt if scoring == Scoring.BEST_ATTEMPT else self.best_submission


def method_task_score(*, method: str, task: str, runs: Sequence[RunScore], direction: Direction) -> MethodTaskScore:
    attempts = [r.best_attempt for r in runs if r.best_attempt is not None]
    submissions = [r.best_submission for r in runs if r.best_submission is not None]
    mean_a, ci_a = mean_ci(attempts)
    mean_s, ci_s = mean_ci(submissions)
    return MethodTaskScore(
        method=method,
        task=task,
        n_runs=len(runs),
        n_scored_runs=len(attempts),
        best_attempt=best_of(attempts, direction),
        best_submission=best_of(submissions, direction),
        mean_attempt=mean_a,
        ci_attempt=ci_a,
        mean_submission=mean_s,
        ci_submission=ci_s,
    )


@dataclass
class TaskRatios:
    """Performance ratios of every method on one task for one scoring."""

    ratios: dict[str, float]
    feasible: dict[str, bool]
    best: float | None
    # ceil((1 + epsilon) x worst feasible ratio); None when no method is feasible.
    tau_candidate: int | None
    issues: list[Issue] = field(default_factory=list)


def performance_ratios(
    scores: Mapping[str, float | None],
    *,
    methods: Sequence[str],
    direction: Direction,
    baseline: float | None,
    task: str = "",
    epsilon: float = EPSILON,
) -> TaskRatios:
    issues: list[Issue] = []
    if baseline is None:
        issues.append(Issue(task, BASELINE, "no baseline score: feasibility only requires >= 0"))
    feasible_scores: dict[str, float] = {}
    for method in methods:
        score = scores.get(method)
        if score is None or score < 0.0:
            continue
        if baseline is not None and better(baseline, score, direction):
            continue
        feasible_scores[method] = score
    best = best_of(feasible_scores.values(), direction)
    ratios: dict[str, float] = {}
    for method, score in feasible_scores.items():
        assert best is not None
        numerator, denominator = (best, score) if direction == Direction.MAX else (score, best)
        if denominator == 0.0:
            ratio = 1.0 if numerator == 0.0 else math.inf
        else:
            ratio = numerator / denominator
        if math.isfinite(ratio):
            ratios[method] = ratio
        else:
            # MLGym would divide by zero here; we call the method infeasible and say so.
            issues.append(Issue(task, method, f"score {score} gives an infinite ratio"))
    feasible = {m: m in ratios for m in methods}
    if not ratios:
        issues.append(Issue(task, "feasibility", "no method is feasible on this task"))
        return TaskRatios({m: math.inf for m in methods}, feasible, best, None, issues)
    penalty = max(ratios.values()) * (1 + epsilon)
    full = {m: ratios.get(m, penalty) for m in methods}
    return TaskRatios(full, feasible, best, math.ceil(penalty), issues)


def tau_max_from(candidates: Iterable[int | None]) -> float | None:
    import numpy as np  # here, not at import: the URL conf imports this module (tests/ops)

    usable = [c for c in candidates if c is not None]
    if not usable:
        return None
    return float(np.ceil(np.log10(max(usable)) * 10) / 10)


def profiles(
    ratios_by_task: Sequence[Mapping[str, float]],
    methods: Sequence[str],
    tau: np.ndarray,
) -> np.ndarray:
    """rho[m, i]: share of tasks where method m has log10(ratio) <= tau[i]."""
    import numpy as np

    if not ratios_by_task:
        return np.zeros((len(methods), len(tau)))
    log_ratios = np.log10(np.array([[task[m] for task in ratios_by_task] for m in methods], dtype=float))
    within = log_ratios[:, :, None] <= tau[None, None, :]
    return within.sum(axis=1) / len(ratios_by_task)


def aup(profile: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """Left Riemann sum of each profile row over tau."""
    import numpy as np

    return (profile[..., :-1] * np.diff(tau)).sum(axis=-1)


@dataclass
class ScoringResult:
    ratios: dict[str, TaskRatios]  # by task
    profile: dict[str, list[float]]  # by method
    aup: dict[str, float | None]  # by method


@dataclass
class Leaderboard:
    """AUP for both scorings over one method set; depends on that set and on tau_max."""

    methods: list[str]
    tasks: list[str]
    tau_max: float | None
    tau: list[float]
    cells: dict[tuple[str, str], MethodTaskScore]  # (method, task)
    results: dict[Scoring, ScoringResult]
    issues: list[Issue]
    # Per task: how a caller describes its column (label, baseline and its source); JSON-ready.
    columns: dict[str, dict[str, Any]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (non-finite numbers become None)."""

        def num(x: float | None) -> float | None:
            return x if x is not None and math.isfinite(x) else None

        return {
            "methods": self.methods,
            "tasks": self.tasks,
            "tau_max": self.tau_max,
            "aup": {m: {s.value: num(self.results[s].aup[m]) for s in Scoring} for m in self.methods},
            "scores": {
                t: {
                    m: {
                        "best_attempt": num(c.best_attempt),
                        "best_submission": num(c.best_submission),
                        "mean_attempt": num(c.mean_attempt),
                        "ci_attempt": num(c.ci_attempt),
                        "mean_submission": num(c.mean_submission),
                        "ci_submission": num(c.ci_submission),
                        "n_runs": c.n_runs,
                        "n_scored_runs": c.n_scored_runs,
                        **{f"ratio_{s.value}": num(self.results[s].ratios[t].ratios[m]) for s in Scoring},
                        **{f"feasible_{s.value}": self.results[s].ratios[t].feasible[m] for s in Scoring},
                    }
                    for m in self.methods
                    if (c := self.cells[(m, t)])
                }
                for t in self.tasks
            },
            "columns": self.columns,
            "issues": [{"source": i.source, "field": i.field, "message": i.message} for i in self.issues],
        }


def leaderboard(
    *,
    cells: Mapping[tuple[str, str], MethodTaskScore],
    methods: Sequence[str],
    tasks: Sequence[str],
    directions: Mapping[str, Direction],
    baselines: Mapping[str, float | None],
    epsilon: float = EPSILON,
    points: int = PROFILE_POINTS,
) -> Leaderboard:
    """AUP of `methods` over `tasks` from per-(method, task) scores.

    `cells` may lack pairs (a method that never ran a task counts as missing). The baseline
    is one of `methods` when it should be ranked; `baselines` gives its score per task for
    the feasibility test either way.
    """
    import numpy as np

    issues: list[Issue] = []
    full_cells: dict[tuple[str, str], MethodTaskScore] = {}
    for t in tasks:
        for m in methods:
            cell = cells.get((m, t))
            if cell is None:
                cell = MethodTaskScore(m, t, 0, 0, None, None, None, None, None, None)
                issues.append(Issue(t, m, "no runs"))
            full_cells[(m, t)] = cell
    per_scoring_ratios: dict[Scoring, dict[str, TaskRatios]] = {}
    candidates: list[int | None] = []
    for scoring in Scoring:
        by_task: dict[str, TaskRatios] = {}
        for t in tasks:
            scores = {m: full_cells[(m, t)].score(scoring) for m in methods}
            task_ratios = performance_ratios(
                scores,
                methods=methods,
                direction=directions[t],
                baseline=baselines.get(t),
                task=t,
                epsilon=epsilon,
            )
            by_task[t] = task_ratios
            candidates.append(task_ratios.tau_candidate)
            issues.extend(i for i in task_ratios.issues if i not in issues)
        per_scoring_ratios[scoring] = by_task
    tau_max = tau_max_from(candidates)
    if tau_max is None or tau_max <= 0:
        issues.append(Issue("leaderboard", "tau_max", "undefined: no feasible method on any task"))
        tau = np.zeros(0)
    else:
        tau = np.linspace(0.0, tau_max, num=points)
    results: dict[Scoring, ScoringResult] = {}
    for scoring, by_task in per_scoring_ratios.items():
        if len(tau) == 0:
            results[scoring] = ScoringResult(by_task, {m: [] for m in methods}, dict.fromkeys(methods))
            continue
        rho = profiles([by_task[t].ratios for t in tasks], methods, tau)
        areas = aup(rho, tau)
        results[scoring] = ScoringResult(
            by_task,
            {m: rho[i].tolist() for i, m in enumerate(methods)},
            {m: float(areas[i]) for i, m in enumerate(methods)},
        )
    return Leaderboard(
        methods=list(methods),
        tasks=list(tasks),
        tau_max=tau_max,
        tau=tau.tolist(),
        cells=full_cells,
        results=results,
        issues=issues,
    )
