"""Agreement between two raters on the same items - the suite's statistics that apply to two raters.

Used for judge vs judge (Claude vs Gemini on MLR-Bench's 2,412 stepwise ideas and proposals): the
same functions as the human agreement analysis (kappa.py, stats.py, decision.py), called on two
score vectors instead of reviewers and a judge. What applies to two raters:

- agreement on the scale: exact and within-one agreement, Cohen's weighted kappa (linear and
  quadratic), Scott's pi, Fleiss' kappa and Gwet's AC2 with two raters;
- correlation and error: Spearman, Kendall's tau-b, Pearson, RMSE, mean absolute difference;
- reliability: Krippendorff's alpha (ordinal, interval), ICC(1,1) and ICC(2,1);
- bias: the mean of A - B with its interval and the Wilcoxon signed-rank test (Holm across
  criteria, with Spearman and Kendall);
- decision view: B's accept/reject at the threshold as the reference, A as the classifier
  (accuracy, FPR, FNR, confusion matrix) and AUROC of A's score for B's decision;
- systems: each rater's mean per system (here: the model that wrote the item), their ranks and
  the rank agreement (Kendall's tau over systems), and the pairs they order differently;
- coverage: items both raters scored, of all items.

What does not apply, and is left out: the alternative annotator test and human-likeness (they
need several reviewers to leave one out), MLR-Bench's Mann-Whitney test and the excess
disagreement / TOST (they compare judge-human distances with human-human ones).
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from agreement.stats import core as st
from agreement.stats import kappa as kp
from agreement.stats.decision import auroc, decision
from agreement.stats.suite import DEFAULT_THRESHOLD

HOLM = ("wilcoxon_signed_rank", "spearman", "kendall")
LEFT_OUT = {
    "alt_test": "needs several reviewers per item to leave one out",
    "human_likeness_z": "needs several reviewers per item to leave one out",
    "mlrbench_mann_whitney_u": "compares judge-human with human-human distances: needs a third rater",
    "tost_equivalence": "tests the excess of judge-human over human-human distance: needs a third rater",
}


def two_rater_block(
    a: np.ndarray, b: np.ndarray, scale: tuple[float, float], boot: st.Bootstrap, threshold: float
) -> dict[str, Any]:
    """Every two-rater statistic of A and B on one criterion (NaN = not scored by that rater)."""
    both = ~np.isnan(a) & ~np.isnan(b)
    x, y = a[both], b[both]
    items = int(both.sum())
    X = np.stack([a, b], axis=1)
    diff = a - b
    return {
        "percent_agreement": kp.percent_agreement(x, y, statistic="percent_agreement", items=items),
        "kappa_linear": kp.weighted_kappa(x, y, scale, "linear", statistic="kappa_linear", items=items),
        "kappa_quadratic": kp.weighted_kappa(x, y, scale, "quadratic", statistic="kappa_quadratic", items=items),
        "scott_pi": kp.scott_pi(x, y, statistic="scott_pi", items=items),
        "fleiss_kappa": kp.fleiss_kappa(X, statistic="fleiss_kappa"),
        "gwet_ac2": kp.gwet_ac2(X, scale, statistic="gwet_ac2"),
        "spearman": st.correlation(a, b, "spearman"),
        "kendall": st.correlation(a, b, "kendall"),
        "pearson": kp.pearson(a, b, statistic="pearson"),
        "rmse": kp.rmse(a, b, statistic="rmse"),
        "mad": st.mean_record("mad", np.abs(diff), boot),
        "alpha_ordinal": st.krippendorff_alpha(X, "ordinal"),
        "alpha_interval": st.krippendorff_alpha(X, "interval"),
        "icc_1_1": st.icc(X, "1,1"),
        "icc_2_1": st.icc(X, "2,1"),
        "bias_a_minus_b": st.mean_record("bias_a_minus_b", diff, boot),
        "wilcoxon_signed_rank": st.wilcoxon_bias(a, b),
        "decision_at_threshold": decision(b, a, threshold),
        "auroc": auroc(b, a, threshold),
        "coverage": st.record(
            "coverage",
            items / len(a) if len(a) else math.nan,
            n={"items_used": items, "items_total": len(a)},
            reading="estimate = share of items both raters scored",
        ),
    }


def two_rater_analysis(
    *,
    a: np.ndarray,
    b: np.ndarray,
    raters: tuple[str, str],
    criteria: list[str],
    scales: list[tuple[float, float]],
    systems: list[str],
    n_boot: int = 1000,
    seed: int = 0,
    threshold: float = DEFAULT_THRESHOLD,
    meta: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """a, b: (items, criteria). Per criterion every two-rater statistic, Holm across criteria."""
    t0 = time.perf_counter()
    boot = st.Bootstrap(a.shape[0], n_boot, seed, defer=True)
    by_system = np.asarray(systems, dtype=str)
    out: dict[str, Any] = {}
    system_view: dict[str, Any] = {}
    for c, crit in enumerate(criteria):
        out[crit] = two_rater_block(a[:, c], b[:, c], scales[c], boot, threshold)
        system_view[crit] = st.system_means(b[:, c], a[:, c], by_system)
    boot.flush()
    for fam in HOLM:
        recs = [out[crit][fam] for crit in criteria]
        for r, adj in zip(recs, st.holm(np.array([r["p_value"] for r in recs])), strict=True):
            r["p_holm"] = float(adj)
    return {
        "raters": {"a": raters[0], "b": raters[1]},
        "reading": (
            f"A = {raters[0]}, B = {raters[1]}. Bias is A minus B; the decision view takes B's accept/reject "
            f"(score >= {threshold:g}) as the reference and A as the classifier."
        ),
        "settings": {"bootstrap_resamples": n_boot, "bootstrap_seed": seed, "decision_threshold": threshold},
        "sizes": {"items": int(a.shape[0]), "systems": len(set(systems)), "criteria": list(criteria)},
        "criteria": out,
        "systems": system_view,
        "left_out": LEFT_OUT,
        "meta": meta or {},
        "seconds": time.perf_counter() - t0,
    }
