"""The full agreement analysis of a `Paired` data set: every statistic, per criterion, per
judge view (each judge alone and the judges' mean), Holm-corrected across criteria, and the
verdict table built from them (verdict.py)."""

from __future__ import annotations

import math
import platform
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from agreement.data.containers import Paired
from agreement.stats import core as st
from agreement.stats import kappa as kp
from agreement.stats.alt_test import ALT_MIN_ITEMS, alt_test, alt_test_combined, human_likeness
from agreement.stats.decision import auroc, decision
from agreement.stats.resample import ResampledMeans
from agreement.stats.verdict import verdict_table

DEFAULT_MARGIN = 0.5  # points on the 1-10 scale: half the smallest score step a reviewer can give
DEFAULT_EPSILON = 0.1  # alt-test cost margin for expert scores (the choice; see README)
DEFAULT_THRESHOLD = 6.0  # decision view: accept when the score is >= this (MLR-Bench's 1-10 scale)
DEFAULT_SCALE = (1.0, 10.0)
# Resamples of the equivalence test's item bootstrap (the small-study verdict reads its interval).
TOST_BOOT = 2000
# Item-level reasons an item is not compared: in an open campaign these are progress, not faults.
COVERAGE_KINDS = ("no_human_review", "no_judge_score", "single_review", "pending_judgment")
HOLM_FAMILIES = (
    "mlrbench_mann_whitney_u",
    "wilcoxon_signed_rank",
    "spearman",
    "kendall",
    "tost_equivalence",
)


def _views(p: Paired) -> list[tuple[str, np.ndarray]]:
    """(name, scores[item, criterion]): each judge when there are several, then their mean."""
    out: list[tuple[str, np.ndarray]] = []
    if len(p.judges) > 1:
        out += [(f"judge:{name}", p.J[:, k, :]) for k, name in enumerate(p.judges)]
    mean = _nanmean(p.J, axis=1)
    name = "judges_mean" if (len(p.judges) > 1 or p.judge_is_mean) else f"judge:{p.judges[0]}"
    out.append((name, mean))
    return out


def _nanmean(a: np.ndarray, axis: int) -> np.ndarray:
    ok = ~np.isnan(a)
    cnt = ok.sum(axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(ok, a, 0.0).sum(axis=axis) / cnt


def _pair_mean_abs(H: np.ndarray) -> np.ndarray:
    """Per item: mean |h_a - h_b| over pairs of present reviews (NaN with fewer than two)."""
    n_slots = H.shape[1]
    pairs = [np.abs(H[:, a] - H[:, b]) for a in range(n_slots) for b in range(a + 1, n_slots)]
    if not pairs:
        return np.full(H.shape[0], np.nan)
    return _nanmean(np.stack(pairs, axis=1), axis=1)


def _scales(p: Paired) -> list[tuple[float, float]]:
    """Each criterion's (min, max): the campaign gives one per criterion, files one for all."""
    s = p.meta.get("scale")
    if s and isinstance(s[0], list | tuple):
        return [(float(a), float(b)) for a, b in s]
    if s:
        return [(float(s[0]), float(s[1]))] * len(p.criteria)
    return [DEFAULT_SCALE] * len(p.criteria)


def _agreement_family(
    a: np.ndarray, b: np.ndarray, items: int, scale: tuple[float, float], suffix: str, **by: Any
) -> dict[str, Any]:
    return {
        f"percent_agreement{suffix}": kp.percent_agreement(a, b, statistic=f"percent_agreement{suffix}", items=items),
        f"kappa_linear{suffix}": kp.weighted_kappa(
            a, b, scale, "linear", statistic=f"kappa_linear{suffix}", items=items, **by
        ),
        f"kappa_quadratic{suffix}": kp.weighted_kappa(
            a, b, scale, "quadratic", statistic=f"kappa_quadratic{suffix}", items=items, **by
        ),
        f"scott_pi{suffix}": kp.scott_pi(a, b, statistic=f"scott_pi{suffix}", items=items),
    }


def _humans_block(H: np.ndarray, hh: np.ndarray, boot: st.Bootstrap, scale: tuple[float, float]) -> dict[str, Any]:
    h0 = H[:, 0] if H.shape[1] > 0 else np.full(H.shape[0], np.nan)
    h1 = H[:, 1] if H.shape[1] > 1 else np.full(H.shape[0], np.nan)
    a, b = kp.human_human_pairs(H)
    items = int(((~np.isnan(H)).sum(axis=1) >= 2).sum())
    return {
        **_agreement_family(a, b, items, scale, "_human_human"),
        "fleiss_kappa": kp.fleiss_kappa(H, statistic="fleiss_kappa"),
        "gwet_ac2": kp.gwet_ac2(H, scale, statistic="gwet_ac2"),
        "pearson_h1_h2": kp.pearson(h0, h1, statistic="pearson_h1_h2"),
        "rmse_h1_h2": kp.rmse(h0, h1, statistic="rmse_h1_h2"),
        "alpha_ordinal": st.krippendorff_alpha(H, "ordinal"),
        "alpha_interval": st.krippendorff_alpha(H, "interval"),
        "icc_1_1": st.icc(np.stack([h0, h1], axis=1), "1,1"),
        "spearman_h1_h2": st.correlation(h0, h1, "spearman"),
        "kendall_h1_h2": st.correlation(h0, h1, "kendall"),
        "mad_human_human": st.mean_record("mad_human_human", _pair_mean_abs(H), boot),
        "mlrbench_human_human_differences": st.record(
            "mlrbench_human_human_differences",
            float(hh.mean()) if len(hh) else math.nan,
            n={"differences": len(hh)},
        ),
    }


def _view_block(
    H: np.ndarray,
    j: np.ndarray,
    hh: np.ndarray,
    boot: st.Bootstrap,
    margin: float,
    alpha: float,
    ctx: dict[str, Any],
) -> dict[str, Any]:
    hm = _nanmean(H, axis=1)
    ok = ~np.isnan(j) & ~np.isnan(hm)
    shift = float(np.mean(j[ok] - hm[ok])) if ok.any() else 0.0
    newer = _judge_view_block(H, j, hm, shift=shift, alpha=alpha, ctx=ctx)
    hj = np.abs(H - j[:, None])
    h0 = H[:, 0] if H.shape[1] > 0 else np.full(H.shape[0], np.nan)
    h1 = H[:, 1] if H.shape[1] > 1 else np.full(H.shape[0], np.nan)
    # Per item: judge's mean distance to each reviewer minus the reviewers' mean distance to each
    # other. Zero in expectation if the judge behaves like one more exchangeable reviewer.
    excess = _nanmean(hj, axis=1) - _pair_mean_abs(H)
    ceiling, a_hj = _ceiling(H, j, hh, hj, h0, h1)
    return {
        "mlrbench_mann_whitney_u": st.mann_whitney(hh, hj.ravel()),
        "wilcoxon_signed_rank": st.wilcoxon_bias(j, hm),
        "bias_judge_minus_humans": st.mean_record("bias_judge_minus_humans", j - hm, boot),
        "spearman": st.correlation(j, hm, "spearman"),
        "kendall": st.correlation(j, hm, "kendall"),
        "mad_judge_human_mean": st.mean_record("mad_judge_human_mean", np.abs(j - hm), boot),
        "excess_disagreement": st.mean_record("excess_disagreement", excess, boot),
        "tost_equivalence": st.tost(
            excess, margin, alpha, n_boot=TOST_BOOT, seed=ctx["seed"], resampled=ctx["tost_draws"]
        ),
        "alpha_ordinal_with_judge": st.krippendorff_alpha(np.concatenate([H, j[:, None]], axis=1), "ordinal"),
        "alpha_interval_with_judge": a_hj,
        "icc_1_1_with_judge": st.icc(np.stack([h0, h1, j], axis=1), "1,1"),
        "icc_2_1_judge_vs_human_mean": st.icc(np.stack([j, hm], axis=1), "2,1"),
        "ceiling": ceiling,
        **newer,
    }


def _judge_view_block(
    H: np.ndarray,
    j: np.ndarray,
    hm: np.ndarray,
    *,
    shift: float,
    alpha: float,
    ctx: dict[str, Any],
) -> dict[str, Any]:
    """The judge-as-one-more-reviewer statistics (kappas over judge-reviewer pairs, alt-test,
    human-likeness, decision view, coverage) of one criterion and judge view."""
    R, reviewers, scale = ctx["R"], ctx["reviewers"], ctx["scale"]
    ja, ha, ra = kp.judge_human_pairs(H, R, j)
    items = int((~np.isnan(j) & ((~np.isnan(H)).sum(axis=1) >= 1)).sum())
    alt = {"epsilon": ctx["epsilon"], "alpha": alpha, "min_items": ctx["min_items"]}
    newer = {
        **_agreement_family(ja, ha, items, scale, "", by=ra, by_names=reviewers),
        "fleiss_kappa_with_judge": kp.fleiss_kappa(
            np.concatenate([H, j[:, None]], axis=1), statistic="fleiss_kappa_with_judge"
        ),
        "gwet_ac2_with_judge": kp.gwet_ac2(
            np.concatenate([H, j[:, None]], axis=1), scale, statistic="gwet_ac2_with_judge"
        ),
        "pearson": kp.pearson(j, hm, statistic="pearson"),
        "rmse": kp.rmse(j, hm, statistic="rmse"),
        "alt_test": alt_test(H, R, j, reviewers, **alt),
        "alt_test_bias_corrected": alt_test(H, R, j - shift, reviewers, statistic="alt_test_bias_corrected", **alt),
        "alt_test_combined": alt_test_combined(H, R, j, epsilon=ctx["epsilon"], alpha=alpha),
        "human_likeness_z": human_likeness(H, R, j, reviewers, scale),
        "decision_at_threshold": decision(hm, j, ctx["threshold"]),
        "auroc": auroc(hm, j, ctx["threshold"]),
        "coverage": _coverage(H, j, ctx["left_out"], ctx["items_total"]),
    }
    newer["alt_test_bias_corrected"]["extra"]["shift"] = shift
    return newer


def _ceiling(
    H: np.ndarray, j: np.ndarray, hh: np.ndarray, hj: np.ndarray, h0: np.ndarray, h1: np.ndarray
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the ceiling record: how the judge agrees with one reviewer against how reviewers agree with
    each other; Krippendorff's interval alpha with the judge, which the view block reports too)."""
    sp_single = [st.correlation(j, h, "spearman") for h in (h0, h1)]
    sp_hh = st.correlation(h0, h1, "spearman")
    sp_j = (
        np.nanmean([r["estimate"] for r in sp_single])
        if not all(math.isnan(r["estimate"]) for r in sp_single)
        else math.nan
    )
    a_h = st.krippendorff_alpha(H, "interval")
    a_hj = st.krippendorff_alpha(np.concatenate([H, j[:, None]], axis=1), "interval")
    ceiling = st.record(
        "ceiling",
        sp_j - sp_hh["estimate"],
        n={"items": sp_hh["n"].get("items", 0)},
        note=(
            ""
            if not math.isnan(sp_j - sp_hh["estimate"])
            else f"needs both Spearman correlations: {sp_hh['note'] or sp_single[0]['note'] or 'undefined'}"
        ),
        spearman_judge_vs_one_human=sp_j,
        spearman_human_vs_human=sp_hh["estimate"],
        alpha_interval_humans=a_h["estimate"],
        alpha_interval_with_judge=a_hj["estimate"],
        mad_judge_vs_one_human=float(np.nanmean(hj)) if np.any(~np.isnan(hj)) else math.nan,
        mad_human_vs_human=float(hh.mean()) if len(hh) else math.nan,
        reading="estimate = judge-vs-one-human Spearman minus human-vs-human Spearman; "
        "at or above 0 the judge agrees with a reviewer as well as reviewers agree",
    )
    return ceiling, a_hj


def _coverage(H: np.ndarray, j: np.ndarray, left_out: Counter, items_total: int) -> dict[str, Any]:
    """Items compared on this criterion and view, of all items, and why the others are not."""
    n_h = (~np.isnan(H)).sum(axis=1)
    used = int(((n_h >= 2) & ~np.isnan(j)).sum())
    reasons = dict(left_out)
    no_judge = int(np.isnan(j).sum())
    few = int(((n_h < 2) & ~np.isnan(j)).sum())
    if no_judge:
        reasons["no judge score on this criterion"] = no_judge
    if few:
        reasons["fewer than two human scores on this criterion"] = few
    total = items_total or len(j)
    return st.record(
        "coverage",
        used / total if total else math.nan,
        n={"items_used": used, "items_total": total},
        note="" if used else "no item has two or more human scores and a judge score on this criterion",
        left_out=reasons,
        reading="estimate = share of all items compared with two or more human scores and a judge score",
    )


def _left_out(p: Paired) -> Counter:
    """Items the pairing policy set aside, counted once per reason."""
    kept = set(p.items)
    seen: dict[str, set[str]] = {}
    for f in p.faults:
        if f.kind in COVERAGE_KINDS and f.kind != "pending_judgment" and f.where not in kept:
            seen.setdefault(f.kind, set()).add(f.where)
    return Counter({k.replace("_", " "): len(v) for k, v in seen.items()})


def analyse(
    p: Paired,
    *,
    n_boot: int = 0,
    seed: int = 0,
    margin: float = DEFAULT_MARGIN,
    alpha: float = 0.05,
    epsilon: float = DEFAULT_EPSILON,
    threshold: float = DEFAULT_THRESHOLD,
    min_items: int = ALT_MIN_ITEMS,
) -> dict[str, Any]:
    t0 = time.perf_counter()
    boot = st.Bootstrap(len(p.items), n_boot, seed, defer=True)
    views = _views(p)
    scales = _scales(p)
    left_out = _left_out(p)
    R = p.reviewer_slots()
    systems = np.asarray(p.item_system, dtype=str)
    criteria: dict[str, Any] = {}
    by_system: dict[str, Any] = {}
    # One set of TOST item draws for every criterion and view (each call drew the same ones again).
    tost_draws = ResampledMeans(TOST_BOOT, seed)
    for c, crit in enumerate(p.criteria):
        H = p.H[:, :, c]
        hh = p.hh_diffs[c]
        ctx = {
            "R": R,
            "reviewers": p.reviewers,
            "scale": scales[c],
            "epsilon": epsilon,
            "threshold": threshold,
            "min_items": min_items,
            "seed": seed,
            "tost_draws": tost_draws,
            "left_out": left_out,
            "items_total": p.items_total or len(p.items),
        }
        criteria[crit] = {
            "humans": _humans_block(H, hh, boot, scales[c]),
            "views": {name: _view_block(H, J[:, c], hh, boot, margin, alpha, ctx) for name, J in views},
        }
        hm = _nanmean(H, axis=1)
        by_system[crit] = {name: st.system_means(hm, J[:, c], systems) for name, J in views}
    boot.flush()
    _holm_across_criteria(criteria, views=[name for name, _ in views], criteria_names=p.criteria)
    return {
        "pairing": {"policy": p.policy, "rule": p.rule},
        "settings": {
            "bootstrap_resamples": n_boot,
            "bootstrap_seed": seed,
            "tost_margin": margin,
            "alpha": alpha,
            "alt_test_epsilon": epsilon,
            "alt_test_min_items": min_items,
            "decision_threshold": threshold,
            **_fixed_settings(),
        },
        "meta": p.meta,
        "sizes": _sizes(p),
        "faults": [f.as_dict() for f in p.faults if f.kind not in COVERAGE_KINDS],
        "coverage": {
            "items_total": p.items_total or len(p.items),
            "items_compared": len(p.items),
            "left_out": dict(left_out),
            "reasons": [f.as_dict() for f in p.faults if f.kind in COVERAGE_KINDS],
        },
        "views": [name for name, _ in views],
        "verdict": verdict_table(criteria, [name for name, _ in views], alpha),
        "criteria": criteria,
        "systems": by_system,
        "seconds": time.perf_counter() - t0,
    }


def _holm_across_criteria(criteria: dict[str, Any], *, views: list[str], criteria_names: Sequence[str]) -> None:
    """Add each test's Holm-corrected p (`p_holm`): one family per test and judge view, across criteria."""
    for name in views:
        for fam in HOLM_FAMILIES:
            recs = [criteria[crit]["views"][name][fam] for crit in criteria_names]
            adj = st.holm(np.array([r["p_value"] for r in recs]))
            for r, a in zip(recs, adj, strict=True):
                r["p_holm"] = float(a)


def _fixed_settings() -> dict[str, Any]:
    """The settings no caller chooses, and the versions that computed the numbers (to reproduce them)."""
    import scipy

    return {
        "confidence": 0.95,
        "holm_families": list(HOLM_FAMILIES),
        "holm_across": "criteria, within each judge view",
        "scipy": scipy.__version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
    }


def _sizes(p: Paired) -> dict[str, Any]:
    """How much was compared: items, systems, human reviews, judges and criteria."""
    return {
        "items": len(p.items),
        "systems": len(set(p.item_system)),
        "human_reviews": int(np.sum(~np.all(np.isnan(p.H), axis=2))),
        "max_reviews_per_item": int(p.H.shape[1]),
        "judges": list(p.judges),
        "judge_scores_are_means": p.judge_is_mean,
        "criteria": list(p.criteria),
    }
