"""MLGym scoring on small cases that can be checked by hand (no Django, no files)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from benchmark.leaderboards.scoring import (
    BASELINE,
    Direction,
    MethodTaskScore,
    Scoring,
    leaderboard,
    mean_ci,
    method_task_score,
    performance_ratios,
    run_score,
    t_critical,
    tau_max_from,
)

MAX, MIN = Direction.MAX, Direction.MIN


def cell(method: str, task: str, attempt: float | None, submission: float | None = None) -> MethodTaskScore:
    submission = attempt if submission is None else submission
    return MethodTaskScore(method, task, 1, 1, attempt, submission, attempt, None, submission, None)


def board(scores: dict[str, dict[str, float | None]], directions: dict[str, Direction], baselines: dict[str, float]):
    """scores: task -> method -> value (same for both scorings); baseline is ranked too."""
    methods = sorted({m for per_task in scores.values() for m in per_task})
    cells = {(m, t): cell(m, t, v) for t, per_task in scores.items() for m, v in per_task.items()}
    for t, b in baselines.items():
        cells[(BASELINE, t)] = cell(BASELINE, t, b)
    return leaderboard(
        cells=cells,
        methods=[*methods, BASELINE],
        tasks=list(scores),
        directions=directions,
        baselines=baselines,
    )


def test_it_takes_the_best_validation_as_best_attempt_and_the_last_score_as_submission():
    run = run_score([{"acc": 0.5}, {"acc": 0.9}, {"acc": 0.7}], metric="acc", direction=MAX, source="r")
    assert (run.best_attempt, run.best_submission) == (0.9, 0.7)
    run = run_score([{"t": 5.0}, {"t": 3.0}, {"t": 4.0}], metric="t", direction=MIN, source="r")
    assert (run.best_attempt, run.best_submission) == (3.0, 4.0)


def test_it_reports_nan_missing_and_non_numeric_scores_and_keeps_the_valid_ones():
    scores = [{"acc": float("nan")}, {"loss": 1.0}, {"acc": "high"}, {"acc": 0.6}, {"acc": float("inf")}]
    run = run_score(scores, metric="acc", direction=MAX, source="run-7")
    assert run.best_attempt == 0.6
    assert run.best_submission is None  # the submission itself (last score) was unusable
    problems = [(i.source, i.message) for i in run.issues]
    assert ("run-7 agent[0]", "NaN") in problems
    assert ("run-7 agent[1]", "missing") in problems
    assert ("run-7 agent[2]", "not a number: 'high'") in problems
    assert problems[-1][0] == "run-7 agent[4]" and "infinite" in problems[-1][1]


def test_it_leaves_out_absurd_values_and_says_so():
    run = run_score(
        [{"Reward Mean": 40.0}, {"Reward Mean": -3e13}],
        metric="Reward Mean",
        direction=MAX,
        source="mountaincar",
        baseline=33.8,
    )
    assert run.best_attempt == 40.0 and run.best_submission is None
    assert "absurd value -3e+13" in run.issues[0].message


def test_it_skips_a_run_with_no_scores_without_crashing():
    for agent in ([], None, "garbage", [1, 2]):
        run = run_score(agent, metric="acc", direction=MAX, source="r")
        assert run.best_attempt is None and run.best_submission is None
        assert run.issues


def test_it_takes_the_best_run_and_a_mean_with_a_confidence_interval_per_method_and_task():
    runs = [run_score([{"a": v}], metric="a", direction=MAX, source=str(v)) for v in (1.0, 2.0, 3.0)]
    score = method_task_score(method="m", task="t", runs=runs, direction=MAX)
    assert score.best_attempt == 3.0 and score.n_scored_runs == 3
    assert score.mean_attempt == pytest.approx(2.0)
    # t(0.975, df=2) = 4.3027; sd = 1; half-width = 4.3027 / sqrt(3)
    assert score.ci_attempt == pytest.approx(4.3027 / math.sqrt(3), rel=1e-4)
    assert mean_ci([5.0]) == (5.0, None)
    assert mean_ci([1.0, 2.0, 3.0], confidence=0.9)[1] == pytest.approx(2.919986 / math.sqrt(3), rel=1e-5)
    assert mean_ci([]) == (None, None)


def test_it_uses_exact_student_t_critical_values():
    from scipy import stats

    for df in range(1, 41):
        assert t_critical(df) == pytest.approx(float(stats.t.ppf(0.975, df)), abs=1e-6)


def test_it_computes_ratios_for_a_minimised_metric_and_penalises_infeasible_methods():
    ratios = performance_ratios(
        {"a": 2.0, "b": 4.0, "slow": 6.0, "neg": -1.0, BASELINE: 5.0, "absent": None},
        methods=["a", "b", "slow", "neg", "absent", BASELINE],
        direction=MIN,
        baseline=5.0,
    )
    assert ratios.best == 2.0
    # feasible: a (1.0), b (2.0), baseline (2.5); slow is worse than the baseline, neg is < 0
    assert ratios.ratios["a"] == 1.0 and ratios.ratios["b"] == 2.0 and ratios.ratios[BASELINE] == 2.5
    for method in ("slow", "neg", "absent"):
        assert ratios.ratios[method] == pytest.approx(2.5 * 1.05)
        assert ratios.feasible[method] is False
    assert ratios.tau_candidate == 3  # ceil(2.625)


def test_it_gives_tied_methods_the_same_ratio_and_the_same_aup():
    result = board({"t": {"x": 0.8, "y": 0.8, "z": 0.6}}, {"t": MAX}, {"t": 0.5})
    ratios = result.results[Scoring.BEST_ATTEMPT].ratios["t"].ratios
    assert ratios["x"] == ratios["y"] == 1.0
    aups = result.results[Scoring.BEST_ATTEMPT].aup
    assert aups["x"] == aups["y"] > aups["z"] > aups[BASELINE]


def test_it_computes_aup_as_the_left_riemann_sum_of_the_profile():
    # One task, ratios 1 (a) and 2 (b, baseline at half of a). Worst feasible ratio 2 ->
    # ceil(2.1) = 3 -> tau_max = ceil(10 * log10 3) / 10 = 0.5.
    result = board({"t": {"a": 1.0, "b": 0.5}}, {"t": MAX}, {"t": 0.5})
    assert result.tau_max == 0.5
    tau = np.array(result.tau)
    assert len(tau) == 500 and tau[0] == 0.0 and tau[-1] == 0.5
    aups = result.results[Scoring.BEST_ATTEMPT].aup
    assert aups["a"] == pytest.approx(0.5)  # within tau everywhere: the whole width
    # b counts from the first tau >= log10(2): 0.5 - log10(2) give or take one step
    step = 0.5 / 499
    assert abs(aups["b"] - (0.5 - math.log10(2))) <= step
    first = int(np.argmax(tau >= math.log10(2)))
    assert aups["b"] == pytest.approx((499 - first) * step)


def test_it_counts_an_all_infeasible_task_against_every_method():
    # On "bad" the baseline is negative and so is everyone: nobody is feasible there.
    result = board(
        {"good": {"a": 2.0, "b": 1.0}, "bad": {"a": -1.0, "b": -2.0}},
        {"good": MAX, "bad": MAX},
        {"good": 1.0, "bad": -3.0},
    )
    bad = result.results[Scoring.BEST_ATTEMPT].ratios["bad"]
    assert bad.tau_candidate is None and not any(bad.feasible.values())
    assert all(math.isinf(r) for r in bad.ratios.values())
    assert any(i.source == "bad" and "no method is feasible" in i.message for i in result.issues)
    profile_a = result.results[Scoring.BEST_ATTEMPT].profile["a"]
    assert max(profile_a) == 0.5  # at most one of the two tasks
    assert result.results[Scoring.BEST_ATTEMPT].aup["a"] == pytest.approx(result.tau_max / 2)


def test_it_reports_an_undefined_tau_max_when_nothing_is_feasible_anywhere():
    result = board({"bad": {"a": -1.0}}, {"bad": MAX}, {"bad": -3.0})
    assert result.tau_max is None
    assert result.results[Scoring.BEST_ATTEMPT].aup == {"a": None, BASELINE: None}
    assert any(i.field == "tau_max" for i in result.issues)


def test_it_treats_a_zero_denominator_as_an_infinite_ratio_not_a_crash():
    ratios = performance_ratios({"a": 0.0, "b": 1.0}, methods=["a", "b"], direction=MIN, baseline=None)
    assert ratios.ratios["a"] == 1.0
    assert ratios.feasible["b"] is False
    assert any("infinite ratio" in i.message for i in ratios.issues)
    assert any("no baseline" in i.message for i in ratios.issues)


def test_it_takes_tau_max_from_the_largest_candidate_rounded_up_to_one_decimal():
    assert tau_max_from([2, 3, None]) == 0.5  # log10 3 = 0.477
    assert tau_max_from([10]) == 1.0
    assert tau_max_from([None]) is None


def test_it_counts_a_method_that_never_ran_a_task_as_missing():
    cells = {("a", "t"): cell("a", "t", 1.0), (BASELINE, "t"): cell(BASELINE, "t", 0.5)}
    result = leaderboard(
        cells=cells, methods=["a", "ghost", BASELINE], tasks=["t"], directions={"t": MAX}, baselines={"t": 0.5}
    )
    assert result.results[Scoring.BEST_SUBMISSION].ratios["t"].feasible["ghost"] is False
    assert any(i.field == "ghost" and i.message == "no runs" for i in result.issues)


def test_it_serialises_to_strict_json_even_with_infinite_ratios():
    result = board({"bad": {"a": -1.0}, "good": {"a": 1.0}}, {"bad": MAX, "good": MAX}, {"bad": -3.0, "good": 0.5})
    data = json.loads(json.dumps(result.as_dict(), allow_nan=False))
    assert data["scores"]["bad"]["a"]["ratio_best_attempt"] is None
    assert data["aup"]["a"]["best_attempt"] == pytest.approx(result.results[Scoring.BEST_ATTEMPT].aup["a"])
