"""The kappa family, plain agreement, the decision view and the signed-rank method, each
against a reference (sklearn, statsmodels, scipy, or a hand computation), with the edge cases
that must give a message instead of a number."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from scipy import stats as sps
from sklearn.metrics import (
    accuracy_score,
    balanced_accuracy_score,
    cohen_kappa_score,
    confusion_matrix,
    f1_score,
    precision_score,
    recall_score,
    roc_auc_score,
)
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

from agreement.stats import core as st
from agreement.stats import kappa as kp
from agreement.stats.decision import auroc, decision

SCALE = (1.0, 10.0)


@pytest.fixture(scope="module")
def scores() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    x = rng.integers(1, 11, 200).astype(float)
    y = np.clip(x + rng.integers(-2, 3, 200), 1, 10).astype(float)
    return x, y


@pytest.mark.parametrize("weights", ["linear", "quadratic"])
def test_it_computes_weighted_kappa_like_sklearn(scores, weights) -> None:
    x, y = scores
    rec = kp.weighted_kappa(x, y, SCALE, weights, statistic="k", items=200)
    ref = cohen_kappa_score(x.astype(int), y.astype(int), labels=np.arange(1, 11), weights=weights)
    assert rec["estimate"] == pytest.approx(ref, abs=1e-12)
    # Values that leave scale points unused: sklearn needs the whole scale as labels to agree.
    a, b = np.array([2.0, 2, 5, 9, 9]), np.array([2.0, 5, 5, 9, 2])
    rec = kp.weighted_kappa(a, b, SCALE, weights, statistic="k", items=5)
    assert rec["estimate"] == pytest.approx(cohen_kappa_score(a, b, labels=np.arange(1, 11), weights=weights))


def test_it_breaks_judge_vs_human_kappa_down_per_reviewer(scores) -> None:
    x, y = scores
    by = np.arange(200) % 2
    rec = kp.weighted_kappa(x, y, SCALE, "quadratic", statistic="k", items=200, by=by, by_names=("ann", "bob"))
    per = {p["reviewer"]: p for p in rec["extra"]["per_reviewer"]}
    assert per["bob"]["pairs"] == 100
    ref = cohen_kappa_score(x[1::2], y[1::2], labels=np.arange(1, 11), weights="quadratic")
    assert per["bob"]["kappa"] == pytest.approx(ref)


def test_it_says_kappa_is_undefined_for_constant_scores() -> None:
    same = np.full(12, 7.0)
    rec = kp.weighted_kappa(same, same, SCALE, "linear", statistic="k", items=12)
    assert math.isnan(rec["estimate"]) and "undefined" in rec["note"]
    few = kp.weighted_kappa(np.array([1.0, 2]), np.array([1.0, 3]), SCALE, "linear", statistic="k", items=2)
    assert "needs at least 5 score pairs, got 2" in few["note"]
    assert "undefined" in kp.scott_pi(same, same, statistic="p", items=12)["note"]


def test_it_counts_exact_and_within_one_agreement() -> None:
    a = np.array([5.0, 6, 7, 8, 3])
    b = np.array([5.0, 7, 9, 8, 2])
    rec = kp.percent_agreement(a, b, statistic="pa", items=5)
    assert rec["estimate"] == pytest.approx(2 / 5)
    assert rec["extra"]["within_one"] == pytest.approx(4 / 5)
    assert kp.percent_agreement(np.empty(0), np.empty(0), statistic="pa", items=0)["note"] == "no score pairs"


def test_it_computes_scott_pi_by_hand() -> None:
    a = np.array([1.0, 1, 2, 2, 3, 3])
    b = np.array([1.0, 2, 2, 2, 3, 1])
    # pooled values: 1 x4, 2 x5, 3 x3 of 12 -> pe = (16 + 25 + 9) / 144; po = 4/6
    pe = 50 / 144
    rec = kp.scott_pi(a, b, statistic="p", items=6)
    assert rec["estimate"] == pytest.approx((4 / 6 - pe) / (1 - pe))


def test_it_computes_fleiss_kappa_like_statsmodels_and_the_textbook() -> None:
    # Fleiss (1971) as on Wikipedia: 10 subjects, 14 raters, 5 categories, kappa = 0.210.
    table = np.array(
        [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
         [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]
    )  # fmt: skip
    X = np.array([np.repeat(np.arange(1, 6), row).astype(float) for row in table])
    rec = kp.fleiss_kappa(X, statistic="f")
    assert rec["estimate"] == pytest.approx(sm_fleiss(table), abs=1e-12)
    assert round(rec["estimate"], 3) == 0.210
    # Two ratings per item: Scott's pi.
    a, b = np.array([1.0, 1, 2, 2, 3, 3]), np.array([1.0, 2, 2, 2, 3, 1])
    two = kp.fleiss_kappa(np.column_stack([a, b]), statistic="f")["estimate"]
    assert two == pytest.approx(kp.scott_pi(a, b, statistic="p", items=6)["estimate"])


def test_it_computes_fleiss_kappa_with_a_varying_number_of_ratings() -> None:
    X = np.array([[1.0, 1, np.nan], [2.0, 2, 2], [1.0, 2, np.nan], [3.0, 3, 1], [np.nan, 2, np.nan]])
    rec = kp.fleiss_kappa(X, statistic="f")
    assert rec["n"] == {"items": 4, "ratings": 10}  # the last item has one rating: not pairable
    # by hand: P_i = (sum n_ik^2 - n_i) / (n_i (n_i - 1)); p_k over the 10 ratings (1: 4, 2: 4, 3: 2)
    p_i = [(4 - 2) / 2, (9 - 3) / 6, (2 - 2) / 2, (4 + 1 - 3) / 6]
    pe = (0.4**2) + (0.4**2) + (0.2**2)
    assert rec["estimate"] == pytest.approx((np.mean(p_i) - pe) / (1 - pe))


def _gwet_by_hand(X: np.ndarray, cats: np.ndarray, power: int) -> float:
    """Gwet (2014) ch. 3, written out loop by loop from the formulas."""
    q = len(cats)
    w = [[1 - (abs(k - m) / (cats[-1] - cats[0])) ** power for m in cats] for k in cats]
    pa_terms, pi = [], np.zeros(q)
    n_rated = 0
    for row in X:
        vals = [v for v in row if not math.isnan(v)]
        r_i = len(vals)
        r = [sum(1 for v in vals if v == c) for c in cats]
        if r_i >= 1:
            n_rated += 1
            pi += np.array(r) / r_i
        if r_i >= 2:
            star = [sum(w[k][m] * r[m] for m in range(q)) for k in range(q)]
            pa_terms.append(sum(r[k] * (star[k] - 1) for k in range(q)) / (r_i * (r_i - 1)))
    pi /= n_rated
    t_w = sum(map(sum, w))
    pe = t_w / (q * (q - 1)) * float(np.sum(pi * (1 - pi)))
    pa = float(np.mean(pa_terms))
    return (pa - pe) / (1 - pe)


def test_it_computes_gwet_ac2_like_the_formulas_by_hand() -> None:
    rng = np.random.default_rng(11)
    X = rng.integers(1, 11, (40, 3)).astype(float)
    X[:, 1] = np.clip(X[:, 0] + rng.integers(-1, 2, 40), 1, 10)
    X[rng.random(X.shape) < 0.1] = np.nan
    rec = kp.gwet_ac2(X, SCALE, statistic="g")
    assert rec["estimate"] == pytest.approx(_gwet_by_hand(X, np.arange(1.0, 11.0), 2))
    lin = kp.gwet_ac2(X, SCALE, statistic="g", weights="linear")
    assert lin["estimate"] == pytest.approx(_gwet_by_hand(X, np.arange(1.0, 11.0), 1))
    # A mean of two judges (half points) is rated on the half-point grid.
    Y = X.copy()
    Y[:, 2] = np.where(np.isnan(Y[:, 2]), np.nan, Y[:, 2] - 0.5).clip(1, 10)
    half = kp.gwet_ac2(Y, SCALE, statistic="g")
    assert "19 scale points" in half["extra"]["method"]
    assert half["estimate"] == pytest.approx(_gwet_by_hand(Y, np.arange(1.0, 10.5, 0.5), 2))


def test_it_computes_pearson_and_rmse(scores) -> None:
    x, y = scores
    rec = kp.pearson(x, y, statistic="r")
    ref = sps.pearsonr(x, y)
    assert rec["estimate"] == pytest.approx(ref.statistic) and rec["p_value"] == pytest.approx(ref.pvalue)
    assert rec["ci_low"] < rec["estimate"] < rec["ci_high"]
    assert kp.rmse(x, y, statistic="e")["estimate"] == pytest.approx(math.sqrt(np.mean((x - y) ** 2)))
    assert "constant" in kp.pearson(np.full(5, 3.0), x[:5], statistic="r")["note"]


def test_it_pools_judge_and_human_pairs_over_present_reviews() -> None:
    H = np.array([[5.0, 6, np.nan], [7.0, np.nan, np.nan], [2.0, 3, 4]])
    R = np.array([[0, 1, -1], [2, -1, -1], [0, 1, 2]])
    j = np.array([6.0, np.nan, 3])
    ja, ha, ra = kp.judge_human_pairs(H, R, j)
    assert ja.tolist() == [6, 6, 3, 3, 3] and ha.tolist() == [5, 6, 2, 3, 4] and ra.tolist() == [0, 1, 0, 1, 2]
    a, b = kp.human_human_pairs(H)
    assert sorted(zip(a.tolist(), b.tolist(), strict=True)) == [(2, 3), (2, 4), (3, 4), (5, 6)]


# --- decision view ---------------------------------------------------------------------------


def test_it_scores_the_decision_view_like_sklearn() -> None:
    rng = np.random.default_rng(5)
    hm = rng.integers(2, 19, 80) / 2.0
    j = np.clip(hm + rng.normal(0, 1.5, 80), 1, 10).round()
    rec = decision(hm, j, 6.0)
    truth, pred = hm >= 6, j >= 6
    e = rec["extra"]
    assert e["accuracy"] == pytest.approx(accuracy_score(truth, pred))
    assert e["balanced_accuracy"] == pytest.approx(balanced_accuracy_score(truth, pred))
    assert e["precision"] == pytest.approx(precision_score(truth, pred))
    assert e["recall"] == pytest.approx(recall_score(truth, pred))
    assert e["f1"] == pytest.approx(f1_score(truth, pred))
    tn, fp, fn, tp = confusion_matrix(truth, pred).ravel()
    assert e["confusion"] == {"judge_accept_human_accept": tp, "judge_accept_human_reject": fp,
                              "judge_reject_human_accept": fn, "judge_reject_human_reject": tn}  # fmt: skip
    assert e["false_positive_rate"] == pytest.approx(fp / (fp + tn))
    assert e["false_negative_rate"] == pytest.approx(fn / (fn + tp))
    roc = auroc(hm, j, 6.0)
    assert roc["estimate"] == pytest.approx(roc_auc_score(truth, j))  # ties in j count one half
    assert 0 <= roc["ci_low"] < roc["estimate"] < roc["ci_high"] <= 1


def test_it_says_when_the_humans_decide_one_way_only() -> None:
    hm = np.array([7.0, 8, 9, 7.5])
    j = np.array([5.0, 8, 9, 6])
    assert "needs items the humans accept and items they reject" in auroc(hm, j, 6.0)["note"]
    rec = decision(hm, j, 6.0)
    assert "accept every item" in rec["note"] and math.isnan(rec["extra"]["false_positive_rate"])
    assert rec["extra"]["recall"] == pytest.approx(0.75)


# --- the signed-rank test's method -----------------------------------------------------------


@pytest.mark.parametrize("n", [5, 8, 10, 13])
def test_it_computes_the_signed_rank_p_exactly_on_small_tied_samples(n) -> None:
    """scipy's `auto` falls back to a permutation test here; enumerating all 2^n sign patterns
    gives its exact answer deterministically, and a brute-force enumeration agrees."""
    rng = np.random.default_rng(n)
    d = rng.integers(-3, 4, n).astype(float) / 2
    rec = st.wilcoxon_bias(d, np.zeros(n))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = sps.wilcoxon(d, zero_method="wilcox")
    assert rec["extra"]["signed_rank_statistic"] == pytest.approx(ref.statistic)
    assert rec["p_value"] == pytest.approx(ref.pvalue)
    nz = d[d != 0]
    ranks = sps.rankdata(np.abs(nz))
    t = ranks[nz > 0].sum()
    null = [
        sum(r for r, s in zip(ranks, signs, strict=True) if s) for signs in itertools.product([0, 1], repeat=len(nz))
    ]
    p = min(1.0, 2 * min(np.mean(np.array(null) >= t - 1e-9), np.mean(np.array(null) <= t + 1e-9)))
    assert rec["p_value"] == pytest.approx(p)
    assert "exact over all" in rec["extra"]["method"]


def test_it_uses_the_normal_approximation_on_larger_tied_samples() -> None:
    rng = np.random.default_rng(1)
    d = rng.integers(-3, 4, 40).astype(float)
    rec = st.wilcoxon_bias(d, np.zeros(40))
    ref = sps.wilcoxon(d, zero_method="wilcox", method="approx")
    assert rec["p_value"] == pytest.approx(ref.pvalue)
    assert "normal approximation" in rec["extra"]["method"]
