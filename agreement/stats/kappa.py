"""Chance-corrected and plain agreement on the rating scale: percent agreement, Cohen's
weighted kappa, Scott's pi, Fleiss' kappa, Gwet's AC2, Pearson r and RMSE.

Conventions (stated again in each record's `extra.method`):
- Pairs. "Judge vs humans" pools every (judge score, human review) pair of an item; "human vs
  human" pools every pair of reviews of the same item (slot order: the earlier review first).
  Pairs of one item are not independent, so these records carry no interval.
- Weights. Weighted statistics measure disagreement by the distance of the two *values* over
  the scale's range, (|x - y| / (max - min))^p with p = 1 (linear) or 2 (quadratic). On an
  integer scale this is exactly Cohen's index-distance weighting over all scale points (what
  sklearn's `cohen_kappa_score(..., labels=scale, weights=...)` computes); it also gives a mean
  of two judges (half points) its true distance instead of inventing categories.
- Categories of the unweighted statistics (Scott's pi, Fleiss' kappa) are the observed values.
"""

from __future__ import annotations

import math

import numpy as np

from agreement.stats.core import Record, record

WEIGHTS = {"linear": 1, "quadratic": 2}


def judge_human_pairs(H: np.ndarray, R: np.ndarray, j: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(judge, human, reviewer) per present (judge score, human review) pair, item-major."""
    J = np.broadcast_to(j[:, None], H.shape)
    ok = ~np.isnan(H) & ~np.isnan(J)
    return J[ok], H[ok], R[ok]


def human_human_pairs(H: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(earlier review, later review) for every pair of present reviews of an item."""
    k = H.shape[1]
    a_parts, b_parts = [], []
    for a in range(k):
        for b in range(a + 1, k):
            ok = ~np.isnan(H[:, a]) & ~np.isnan(H[:, b])
            a_parts.append(H[ok, a])
            b_parts.append(H[ok, b])
    if not a_parts:
        return np.empty(0), np.empty(0)
    return np.concatenate(a_parts), np.concatenate(b_parts)


def value_codes(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(values, code of each entry of `a`): scores on the half-point grid (every rubric scale
    and a mean of two judges) are coded by arithmetic, without the sort np.unique needs; the
    value list may then include grid points nobody gave, which count zero everywhere."""
    if len(a) == 0:
        return np.empty(0), np.empty(0, dtype=np.int64)
    twice = a * 2.0
    if np.all(twice == np.round(twice)) and np.all(np.abs(twice) < 1e6):
        t = twice.astype(np.int64)
        lo = int(t.min())
        return (np.arange(int(t.max()) - lo + 1) + lo) / 2.0, t - lo
    values, codes = np.unique(a, return_inverse=True)
    return values, codes.reshape(-1).astype(np.int64)


def _disagreement(x: np.ndarray, y: np.ndarray, span: float, power: int) -> np.ndarray:
    return (np.abs(x - y) / span) ** power


def grouped_kappa(
    x: np.ndarray, y: np.ndarray, group: np.ndarray, n_groups: int, scale: tuple[float, float], power: int
) -> tuple[np.ndarray, np.ndarray]:
    """(kappa, pairs) per group of score pairs, all groups at once.

    kappa_g = 1 - mean_g d(x, y) / (sum_ab cx_g[a] cy_g[b] d(v_a, v_b) / n_g^2), with cx_g, cy_g
    the groups' histograms over the observed values v: one pass for every reviewer of a campaign
    instead of a loop (a 10,000-item study has hundreds of reviewers). NaN where undefined.
    """
    span = float(scale[1] - scale[0]) or 1.0
    values, codes = value_codes(np.concatenate([x, y]))
    cx_codes, cy_codes = codes[: len(x)], codes[len(x) :]
    V = len(values)
    n = np.bincount(group, minlength=n_groups).astype(float)
    observed = np.bincount(group, weights=_disagreement(x, y, span, power), minlength=n_groups)
    CX = np.bincount(group * V + cx_codes, minlength=n_groups * V).reshape(n_groups, V).astype(float)
    CY = np.bincount(group * V + cy_codes, minlength=n_groups * V).reshape(n_groups, V).astype(float)
    D = _disagreement(values[:, None], values[None, :], span, power)
    expected = np.einsum("ga,ab,gb->g", CX, D, CY)
    with np.errstate(invalid="ignore", divide="ignore"):
        kappa = 1.0 - (observed / n) / (expected / n**2)
    kappa[(n == 0) | (expected == 0)] = np.nan
    return kappa, n.astype(int)


def kappa_value(x: np.ndarray, y: np.ndarray, scale: tuple[float, float], power: int) -> float:
    """Cohen's weighted kappa = 1 - observed / expected mean disagreement (NaN if undefined)."""
    if len(x) == 0:
        return math.nan
    kappa, _ = grouped_kappa(x, y, np.zeros(len(x), dtype=np.int64), 1, scale, power)
    return float(kappa[0])


def weighted_kappa(
    x: np.ndarray,
    y: np.ndarray,
    scale: tuple[float, float],
    weights: str,
    *,
    statistic: str,
    items: int,
    by: np.ndarray | None = None,
    by_names: tuple[str, ...] = (),
    min_pairs: int = 5,
) -> Record:
    """Weighted kappa of paired scores; `by` (reviewer per pair) adds a per-reviewer breakdown."""
    power = WEIGHTS[weights]
    n = {"pairs": len(x), "items": items}
    method = (
        f"Cohen's weighted kappa, {weights} weights on value distance over the scale "
        f"{scale[0]:g}-{scale[1]:g}; pooled pairs, no interval (pairs of an item are not independent)"
    )
    if len(x) < min_pairs:
        return record(statistic, n=n, note=f"needs at least {min_pairs} score pairs, got {len(x)}", method=method)
    value = kappa_value(x, y, scale, power)
    per: list[dict[str, object]] = []
    if by is not None:
        present, group = np.unique(by, return_inverse=True)
        kappas, pairs = grouped_kappa(x, y, group.reshape(-1), len(present), scale, power)
        per = [
            {
                "reviewer": by_names[r] if 0 <= r < len(by_names) else str(r),
                "pairs": int(c),
                "kappa": float(k) if c >= min_pairs else math.nan,
            }
            for r, k, c in zip(present.tolist(), kappas.tolist(), pairs.tolist(), strict=True)
        ]
    note = ""
    if math.isnan(value):
        note = "both sides give one and the same score throughout: kappa undefined (no chance baseline)"
    extra: dict[str, object] = {"method": method}
    if by is not None:
        extra["per_reviewer"] = per
    return record(statistic, value, n=n, note=note, **extra)


def percent_agreement(x: np.ndarray, y: np.ndarray, *, statistic: str, items: int) -> Record:
    """Share of score pairs that are equal (estimate) and within one point (extra)."""
    n = {"pairs": len(x), "items": items}
    if len(x) == 0:
        return record(statistic, n=n, note="no score pairs")
    d = np.abs(x - y)
    return record(
        statistic,
        float(np.mean(d == 0)),
        n=n,
        within_one=float(np.mean(d <= 1)),
        method="share of score pairs with equal scores (estimate) and |difference| <= 1 (within_one)",
    )


def scott_pi(x: np.ndarray, y: np.ndarray, *, statistic: str, items: int) -> Record:
    """Scott's pi: exact agreement corrected by the pooled distribution of both sides' values."""
    n = {"pairs": len(x), "items": items}
    if len(x) < 2:
        return record(statistic, n=n, note=f"needs at least 2 score pairs, got {len(x)}")
    _, codes = value_codes(np.concatenate([x, y]))
    counts = np.bincount(codes)
    pe = float(((counts / (2 * len(x))) ** 2).sum())
    po = float(np.mean(x == y))
    if pe == 1:
        return record(statistic, n=n, note="every score is the same value: pi undefined")
    return record(statistic, (po - pe) / (1 - pe), n=n, method="Scott's pi, categories = observed values")


def _counts(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(values, n[item, value]) over the items' present ratings."""
    ok = ~np.isnan(X)
    values, codes = value_codes(X[ok])
    rows = np.nonzero(ok)[0]
    V = len(values)
    counts = np.bincount(rows * V + codes, minlength=len(X) * V).reshape(len(X), V) if V else np.zeros((len(X), 0))
    return values, counts.astype(float)


def fleiss_kappa(X: np.ndarray, *, statistic: str) -> Record:
    """Fleiss' kappa for an (items, raters) matrix with NaN for missing ratings; items with a
    varying number of ratings use each item's own pair count (Fleiss 1971, generalised). With two
    ratings per item it is Scott's pi."""
    X = np.asarray(X, dtype=float)
    m = (~np.isnan(X)).sum(axis=1)
    X = X[m >= 2]
    m = m[m >= 2]
    n = {"items": len(X), "ratings": int(m.sum())}
    if len(X) < 2:
        return record(statistic, n=n, note="needs at least 2 items with 2 or more ratings")
    _, counts = _counts(X)
    p_i = ((counts**2).sum(axis=1) - m) / (m * (m - 1))
    p_bar = float(p_i.mean())
    p_k = counts.sum(axis=0) / m.sum()
    p_e = float((p_k**2).sum())
    if p_e == 1:
        return record(statistic, n=n, note="every rating is the same value: kappa undefined")
    return record(
        statistic,
        (p_bar - p_e) / (1 - p_e),
        n=n,
        method="Fleiss' kappa, categories = observed values; equals Scott's pi with two ratings per item",
    )


def _grid(X: np.ndarray, scale: tuple[float, float]) -> np.ndarray:
    """The scale's categories: integer points, or half points when a mean of two judges is rated."""
    v = X[~np.isnan(X)]
    step = 1.0 if np.allclose(v, np.round(v)) else 0.5
    lo, hi = min(scale[0], float(v.min())), max(scale[1], float(v.max()))
    return np.arange(lo, hi + step / 2, step)


def gwet_ac2(X: np.ndarray, scale: tuple[float, float], *, statistic: str, weights: str = "quadratic") -> Record:
    """Gwet's AC2 (Gwet 2014, ch. 3) for several raters with missing ratings and ordinal weights.

    r_ik: ratings of item i in category k, r_i their sum; r*_ik = sum_l w_kl r_il;
    p_a = mean over items with r_i >= 2 of sum_k r_ik (r*_ik - 1) / (r_i (r_i - 1));
    pi_k = mean over rated items of r_ik / r_i; p_e = T_w / (q (q - 1)) sum_k pi_k (1 - pi_k)
    with T_w the sum of all weights and q the number of scale points; AC2 = (p_a - p_e) / (1 - p_e).
    """
    X = np.asarray(X, dtype=float)
    r_i = (~np.isnan(X)).sum(axis=1)
    n = {"items": int((r_i >= 2).sum()), "ratings": int(r_i.sum())}
    if (r_i >= 2).sum() < 2:
        return record(statistic, n=n, note="needs at least 2 items with 2 or more ratings")
    cats = _grid(X, scale)
    q = len(cats)
    power = WEIGHTS[weights]
    w = 1.0 - (np.abs(cats[:, None] - cats[None, :]) / (cats[-1] - cats[0])) ** power
    values, counts = _counts(X)
    given = counts.sum(axis=0) > 0  # value_codes may list grid points nobody gave
    r = np.zeros((len(X), q))
    r[:, np.searchsorted(cats, values[given])] = counts[:, given]  # observed values sit on the grid
    # einsum, not @: a (items x 10) by (10 x 10) product is too small for BLAS threads, which on a
    # busy machine spin for a core each (the suite's wall time varied 4-18 s with @).
    r_star = np.einsum("ia,ka->ik", r, w)
    two = r_i >= 2
    p_a = float(((r[two] * (r_star[two] - 1)).sum(axis=1) / (r_i[two] * (r_i[two] - 1))).mean())
    rated = r_i >= 1
    pi_k = (r[rated] / r_i[rated][:, None]).mean(axis=0)
    p_e = float(w.sum() / (q * (q - 1)) * (pi_k * (1 - pi_k)).sum())
    return record(
        statistic,
        (p_a - p_e) / (1 - p_e),
        n=n,
        method=f"Gwet's AC2, {weights} weights over {q} scale points {cats[0]:g}-{cats[-1]:g}",
    )


def pearson(x: np.ndarray, y: np.ndarray, *, statistic: str) -> Record:
    from scipy import stats as sps

    ok = ~np.isnan(x) & ~np.isnan(y)
    a, b = x[ok], y[ok]
    n = {"items": len(a)}
    if len(a) < 3:
        return record(statistic, n=n, note=f"needs at least 3 paired items, got {len(a)}")
    if np.all(a == a[0]) or np.all(b == b[0]):
        return record(statistic, n=n, note="scores are constant on one side: correlation undefined")
    res = sps.pearsonr(a, b)
    ci = res.confidence_interval(0.95) if len(a) > 3 else (math.nan, math.nan)
    return record(
        statistic,
        float(res.statistic),
        ci=(float(ci[0]), float(ci[1])),
        ci_method="Fisher z",
        p=float(res.pvalue),
        n=n,
    )


def rmse(x: np.ndarray, y: np.ndarray, *, statistic: str) -> Record:
    ok = ~np.isnan(x) & ~np.isnan(y)
    n = {"items": int(ok.sum())}
    if ok.sum() == 0:
        return record(statistic, n=n, note="no paired scores")
    return record(statistic, float(np.sqrt(np.mean((x[ok] - y[ok]) ** 2))), n=n, method="root mean squared difference")
