"""Bias probes of a judge configuration, each over a judge experiment's judgments (a job ran them):

- stability: the same judge re-run N times on each item; per criterion the within-item SD over the
  runs (mean over items, with an interval), the share of items whose runs disagree at all;
- leniency: the judge's mean shift against the human mean, by criterion (mean of judge - human
  mean with an interval, Wilcoxon signed-rank, Holm across criteria);
- length: the judge - human residual against the item's length in words (Spearman with a Fisher
  interval, and the least-squares slope per 1,000 words with a bootstrap interval);
- self-preference: the residual on items written by the judge's own family minus the residual on
  the other items (bootstrap interval, Mann-Whitney test); on the stepwise data, where there are
  no humans, the other judge stands in: judge X minus judge Y on X's family's items, minus the
  same on items of neither judge's family;
- position consistency (pairwise experiments): a pair asked in both orders is consistent when the
  same item (or a tie) wins both times; the share of decided answers that pick whichever item was
  shown first (0.5 when order does not matter) with a binomial test.

Intervals are 95 %: bootstrap percentiles over items (seeded) where stated, else t or Fisher.
Every probe returns a JSON-ready dict with a `reading` and notes when it cannot be computed.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import numpy as np

from agreement.data.containers import Paired
from agreement.stats import core as st
from agreement.stats.suite import _nanmean
from judge.families import family_of
from judge.leaderboard import ScoreMatrix
from judge.models import JudgeExperiment, Judgment

N_BOOT = 1000


def _criteria_of(experiment: JudgeExperiment) -> list[tuple[str, str]]:
    return [(d["key"], d.get("name", d["key"])) for d in experiment.config.rubric.score_dimensions]


def stability(experiment: JudgeExperiment, *, seed: int = 0) -> dict[str, Any]:
    """Within-item SD over the experiment's repeats, per criterion."""
    crits = _criteria_of(experiment)
    runs: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for artifact_id, scores in experiment.judgments.filter(status=Judgment.Status.SUCCEEDED).values_list(
        "artifact_id", "scores"
    ):
        runs[artifact_id].append(scores or {})
    items = sorted(a for a, r in runs.items() if len(r) >= 2)
    out: dict[str, Any] = {
        "probe": "stability",
        "repeats": experiment.repeats,
        "items_with_two_or_more_runs": len(items),
        "reading": "within-item SD over re-runs: 0 = the judge repeats itself exactly",
        "criteria": {},
    }
    if experiment.repeats < 2:
        out["note"] = "needs an experiment with 2 or more repeats"
        return out
    boot = st.Bootstrap(len(items), N_BOOT, seed)
    for key, name in crits:
        sds, ranges = [], []
        for a in items:
            v = np.array(
                [float(s[key]["score"]) for s in runs[a] if isinstance((s.get(key) or {}).get("score"), int | float)]
            )
            sds.append(float(v.std(ddof=1)) if len(v) >= 2 else math.nan)
            ranges.append(float(v.max() - v.min()) if len(v) >= 2 else math.nan)
        sd = np.array(sds)
        rng = np.array(ranges)
        rec = st.mean_record("within_item_sd", sd, boot)
        rec["extra"].update(
            {
                "max_sd": float(np.nanmax(sd)) if np.any(~np.isnan(sd)) else math.nan,
                "share_of_items_that_vary": float(np.nanmean(rng > 0)) if np.any(~np.isnan(rng)) else math.nan,
                "max_range": float(np.nanmax(rng)) if np.any(~np.isnan(rng)) else math.nan,
            }
        )
        out["criteria"][name] = rec
    return out


def _residuals(p: Paired) -> tuple[np.ndarray, np.ndarray]:
    """(judge, judge - human mean) per (item, criterion) of a single-judge paired set."""
    j = p.J[:, -1, :] if p.J.shape[1] == 1 else _nanmean(p.J, axis=1)
    return j, j - _nanmean(p.H, axis=1)


def leniency(p: Paired, *, seed: int = 0) -> dict[str, Any]:
    """The judge's mean shift against the human mean, by criterion."""
    j, r = _residuals(p)
    hm = _nanmean(p.H, axis=1)
    boot = st.Bootstrap(len(p.items), N_BOOT, seed)
    crit: dict[str, Any] = {}
    for c, name in enumerate(p.criteria):
        crit[name] = {"shift": st.mean_record("leniency", r[:, c], boot), "test": st.wilcoxon_bias(j[:, c], hm[:, c])}
    adj = st.holm(np.array([v["test"]["p_value"] for v in crit.values()]))
    for v, a in zip(crit.values(), adj, strict=True):
        v["test"]["p_holm"] = float(a)
    return {
        "probe": "leniency",
        "items": len(p.items),
        "reading": "positive shift: the judge scores higher than the humans (more lenient); negative: harsher",
        "criteria": crit,
    }


def _slope(x: np.ndarray, y: np.ndarray) -> float:
    if len(x) < 3 or np.all(x == x[0]):
        return math.nan
    xc = x - x.mean()
    return float((xc * (y - y.mean())).sum() / (xc * xc).sum())


def length(p: Paired, lengths: np.ndarray, *, seed: int = 0) -> dict[str, Any]:
    """Judge - human residual against item length (words)."""
    _, r = _residuals(p)
    rng = np.random.default_rng(seed)
    crit: dict[str, Any] = {}
    for c, name in enumerate(p.criteria):
        ok = ~np.isnan(r[:, c]) & ~np.isnan(lengths)
        x, y = lengths[ok] / 1000.0, r[ok, c]
        slope = _slope(x, y)
        draws = []
        if len(x) >= 3:
            for _ in range(N_BOOT):
                idx = rng.integers(0, len(x), len(x))
                draws.append(_slope(x[idx], y[idx]))
        valid = np.array([d for d in draws if np.isfinite(d)])
        ci = tuple(np.percentile(valid, [2.5, 97.5])) if len(valid) >= 0.8 * N_BOOT else (math.nan, math.nan)
        crit[name] = {
            "spearman": st.correlation(lengths, r[:, c], "spearman"),
            "slope_per_1000_words": st.record(
                "slope_per_1000_words",
                slope,
                ci=ci,
                ci_method=f"bootstrap percentile, B={N_BOOT}, items resampled, seed={seed}",
                n={"items": int(ok.sum())},
                note="" if math.isfinite(slope) else "needs 3 items of different lengths",
            ),
        }
    return {
        "probe": "length",
        "items": len(p.items),
        "words": {
            "min": float(np.nanmin(lengths)) if len(lengths) else math.nan,
            "median": float(np.nanmedian(lengths)) if len(lengths) else math.nan,
            "max": float(np.nanmax(lengths)) if len(lengths) else math.nan,
        },  # fmt: skip
        "reading": "positive slope/correlation: the judge rewards longer items more than the humans do",
        "criteria": crit,
    }


def _diff_of_means(same: np.ndarray, other: np.ndarray, rng: np.random.Generator) -> dict[str, Any]:
    from scipy import stats as sps

    same, other = same[~np.isnan(same)], other[~np.isnan(other)]
    n = {"own_family_items": len(same), "other_items": len(other)}
    if len(same) < 2 or len(other) < 2:
        return st.record("self_preference", n=n, note="needs at least 2 items of the judge's family and 2 others")
    est = float(same.mean() - other.mean())
    draws = [
        rng.choice(same, len(same)).mean() - rng.choice(other, len(other)).mean() for _ in range(N_BOOT)
    ]  # fmt: skip
    lo, hi = np.percentile(draws, [2.5, 97.5])
    test = sps.mannwhitneyu(same, other, alternative="two-sided")
    return st.record(
        "self_preference",
        est,
        ci=(float(lo), float(hi)),
        ci_method=f"bootstrap percentile, B={N_BOOT}, each group resampled",
        p=float(test.pvalue),
        n=n,
        own_family_mean=float(same.mean()),
        other_mean=float(other.mean()),
        method="two-sided Mann-Whitney U of the two groups",
    )


def self_preference(p: Paired, judge_model: str, *, seed: int = 0) -> dict[str, Any]:
    """Residual on the judge family's own items minus the residual on the others, by criterion."""
    _, r = _residuals(p)
    family = family_of(judge_model)
    own = np.array([family_of(s) == family for s in p.item_system], dtype=bool)
    rng = np.random.default_rng(seed)
    return {
        "probe": "self_preference",
        "judge_family": family,
        "own_family_items": int(own.sum()),
        "reading": "positive: the judge, relative to the humans, favours items its own family wrote",
        "criteria": {name: _diff_of_means(r[own, c], r[~own, c], rng) for c, name in enumerate(p.criteria)},
    }


def self_preference_judges(m: ScoreMatrix, *, seed: int = 0) -> dict[str, Any]:
    """Two judges, no humans: X - Y on X's family's items minus X - Y on items of neither family."""
    if len(m.judges) < 2:
        return {"probe": "self_preference_between_judges", "note": "needs two judges", "judges": {}}
    families = [family_of(model) for model in m.models]
    rng = np.random.default_rng(seed)
    out: dict[str, Any] = {}
    for x, y in ((0, 1), (1, 0)):
        fx, fy = family_of(m.judges[x]), family_of(m.judges[y])
        d = m.S[:, x, :] - m.S[:, y, :]
        own = np.array([f == fx for f in families], dtype=bool)
        neither = np.array([f not in (fx, fy) for f in families], dtype=bool)
        out[m.judges[x]] = {
            "family": fx,
            "other_judge": m.judges[y],
            "criteria": {name: _diff_of_means(d[own, c], d[neither, c], rng) for c, (_, name) in enumerate(m.criteria)},
        }
    return {
        "probe": "self_preference_between_judges",
        "reading": (
            "per judge X: (X - other judge) on items X's family wrote, minus (X - other judge) on items neither "
            "judge's family wrote; positive: X favours its own family beyond the other judge's view"
        ),
        "judges": out,
    }


def position(experiment: JudgeExperiment) -> dict[str, Any]:
    """Position consistency of a pairwise experiment."""
    from scipy import stats as sps

    rows = list(experiment.pairwise.values_list("first_id", "second_id", "swapped", "status", "preferred"))
    by_pair: dict[tuple[int, int], dict[bool, str]] = defaultdict(dict)
    first_picks = decided = 0
    for first, second, swapped, status, preferred in rows:
        if status != Judgment.Status.SUCCEEDED:
            continue
        winner = {"first": first, "second": second}.get(preferred, 0)  # 0: a tie
        by_pair[(min(first, second), max(first, second))][swapped] = str(winner)
        if preferred in ("first", "second"):
            decided += 1
            first_picks += preferred == "first"
    complete = [v for v in by_pair.values() if len(v) == 2]
    consistent = sum(1 for v in complete if v[False] == v[True])
    out: dict[str, Any] = {
        "probe": "position",
        "pairs_asked": len({(min(a, b), max(a, b)) for a, b, *_ in rows}),
        "pairs_answered_both_ways": len(complete),
        "reading": "consistency 1 = the order shown never changes the winner; first-position rate 0.5 = no order bias",
    }
    out["consistency"] = _share("position_consistency", consistent, len(complete))
    rate = _share("first_position_rate", first_picks, decided)
    if decided:
        rate["p_value"] = float(sps.binomtest(first_picks, decided, 0.5).pvalue)
        rate["extra"]["method"] = "two-sided exact binomial test against 0.5"
    out["first_position_rate"] = rate
    return out


def _share(name: str, k: int, n: int) -> dict[str, Any]:
    if n == 0:
        return st.record(
            name,
            n={"count": 0},
            note="no pair answered in both orders" if "consistency" in name else "no decided answer",
        )
    z = st.Z975
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return st.record(
        name, p, ci=(centre - half, centre + half), ci_method="Wilson score interval", n={"count": n, "yes": k}
    )
