"""Agreement statistics on dense arrays, vectorised over items.

Every function returns a *record* (a plain dict, JSON-ready) and never raises on bad data:
too few items, constant scores, all-tied differences or missing values give a record whose
`note` says why the estimate is missing. Confidence intervals are 95 % unless stated and say
how they were computed in `ci_method`.

Choices (stated once here and again in every record):
- Mann-Whitney U: scipy's two-sided test with its default method, exactly as the MLR-Bench
  notebook calls it, with the human-human differences as the first sample; U is the first
  sample's U; rank-biserial r = 1 - 2U/(n1 n2), positive when judge-human differences are
  larger.
- Spearman and Kendall (tau-b) CIs: Fisher z with the Fieller-Hartley-Pearson (1957) standard
  errors sqrt(1.06/(n-3)) and sqrt(0.437/(n-4)).
- Krippendorff's alpha: own coincidence-matrix computation (ordinal ranks over the observed
  values, interval squared differences), checked against the `krippendorff` package.
- ICC: Shrout-Fleiss ICC(1,1) (one-way random, single rater: reviewers differ across items) and
  ICC(2,1) (two-way random, absolute agreement, single rater), F-based CIs as in pingouin.
- Bootstrap: percentile intervals over items resampled with replacement (B resamples, seeded).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from agreement.stats.resample import ResampledMeans

Record = dict[str, Any]
# float(scipy.stats.norm.ppf(0.975)), written out so that importing this module does not load scipy
# (issue 20); tests/test_import_footprint.py checks that the two agree.
Z975 = 1.959963984540054


def record(
    statistic: str,
    estimate: float = math.nan,
    *,
    ci: tuple[float, float] = (math.nan, math.nan),
    ci_method: str = "",
    p: float = math.nan,
    n: dict[str, int] | None = None,
    note: str = "",
    **extra: Any,
) -> Record:
    return {
        "statistic": statistic,
        "estimate": _f(estimate),
        "ci_low": _f(ci[0]),
        "ci_high": _f(ci[1]),
        "ci_method": ci_method,
        "p_value": _f(p),
        "p_holm": math.nan,
        "n": n or {},
        "note": note,
        "extra": {k: (_f(v) if isinstance(v, float | np.floating) else v) for k, v in extra.items()},
    }


def _f(x: Any) -> float:
    try:
        return float(x)
    except (TypeError, ValueError):
        return math.nan


def _clean(*arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """Drop positions where any array is NaN (pairwise-complete)."""
    mask = np.ones(len(arrays[0]), dtype=bool)
    for a in arrays:
        mask &= ~np.isnan(a)
    return tuple(np.asarray(a, dtype=float)[mask] for a in arrays)


# --- bootstrap ---------------------------------------------------------------------------


class Bootstrap:
    """Resample weights W[b, i] (how often item i is drawn in resample b), built once per
    analysis so every statistic of every criterion is resampled over the same item draws; a
    NaN-aware mean over a resample is then one matrix-vector product."""

    def __init__(self, n_items: int, n_boot: int, seed: int = 0, *, defer: bool = False) -> None:
        self.n_boot = n_boot
        self.seed = seed
        # defer=True: mean_record leaves its interval to flush(), which resamples every
        # statistic of the analysis in one matrix product instead of one per record.
        self.defer = defer
        self.pending: list[tuple[Record, np.ndarray]] = []
        if n_boot <= 0 or n_items == 0:
            self.W = None
            return
        rng = np.random.default_rng(seed)
        idx = rng.integers(0, n_items, size=(n_boot, n_items))
        offsets = (np.arange(n_boot) * n_items)[:, None]
        flat = np.bincount((idx + offsets).ravel(), minlength=n_boot * n_items)
        self.W = flat.reshape(n_boot, n_items).astype(np.float64)

    @property
    def method(self) -> str:
        return f"bootstrap percentile, B={self.n_boot}, items resampled, seed={self.seed}"

    def mean_ci(self, values: np.ndarray) -> tuple[float, float]:
        return self.mean_cis(values[:, None])[0]

    def mean_cis(self, V: np.ndarray) -> list[tuple[float, float]]:
        """Percentile intervals of the NaN-aware means of each column of V (items, k)."""
        if self.W is None:
            return [(math.nan, math.nan)] * V.shape[1]
        ok = ~np.isnan(V)
        num = self.W @ np.where(ok, V, 0.0)
        den = self.W @ ok.astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            means = num / den
        out = []
        for col in means.T:
            col = col[np.isfinite(col)]
            if len(col) == 0:
                out.append((math.nan, math.nan))
                continue
            lo, hi = np.percentile(col, [2.5, 97.5])
            out.append((float(lo), float(hi)))
        return out

    def flush(self) -> None:
        """Fill in the intervals of every deferred mean_record."""
        if not self.pending:
            return
        V = np.column_stack([v for _, v in self.pending])
        for (rec, _), (lo, hi) in zip(self.pending, self.mean_cis(V), strict=True):
            rec["ci_low"], rec["ci_high"] = lo, hi
        self.pending = []


def mean_record(
    statistic: str,
    values: np.ndarray,
    boot: Bootstrap | None,
    *,
    min_n: int = 3,
    **extra: Any,
) -> Record:
    """Mean of per-item values with a t interval, or a bootstrap one when resampling is on."""
    from scipy import stats as sps

    v = values[~np.isnan(values)]
    n = {"items": len(v)}
    if len(v) < min_n:
        return record(statistic, n=n, note=f"needs at least {min_n} items, got {len(v)}", **extra)
    m = float(v.mean())
    sd = float(v.std(ddof=1))
    if boot is not None and boot.W is not None:
        if boot.defer:
            rec = record(statistic, m, ci_method=boot.method, n=n, **extra)
            boot.pending.append((rec, np.asarray(values, dtype=float)))
            return rec
        return record(statistic, m, ci=boot.mean_ci(values), ci_method=boot.method, n=n, **extra)
    half = float(sps.t.ppf(0.975, len(v) - 1)) * sd / math.sqrt(len(v))
    return record(statistic, m, ci=(m - half, m + half), ci_method="t interval", n=n, **extra)


# --- tests ---------------------------------------------------------------------------------


def mann_whitney(hh: np.ndarray, hj: np.ndarray) -> Record:
    """The MLR-Bench test: |human-human| (first sample) vs |judge-human| differences."""
    from scipy import stats as sps

    hh = hh[~np.isnan(hh)]
    hj = hj[~np.isnan(hj)]
    n = {"human_human": len(hh), "human_judge": len(hj)}
    name = "mlrbench_mann_whitney_u"
    if len(hh) < 3 or len(hj) < 3:
        return record(name, n=n, note="needs at least 3 differences in each group")
    both = np.concatenate([hh, hj])
    if np.all(both == both[0]):
        return record(name, n=n, note="all differences are equal: the test is undefined")
    res = sps.mannwhitneyu(hh, hj, alternative="two-sided")
    u1 = float(res.statistic)
    n1n2 = len(hh) * len(hj)
    return record(
        name,
        u1,
        p=float(res.pvalue),
        n=n,
        rank_biserial=1.0 - 2.0 * u1 / n1n2,
        mean_human_human=float(hh.mean()),
        mean_human_judge=float(hj.mean()),
        median_human_human=float(np.median(hh)),
        median_human_judge=float(np.median(hj)),
        ties=bool(len(np.unique(both)) < len(both)),
        method="scipy.stats.mannwhitneyu two-sided, default method; U of human-human sample",
    )


EXACT_FLIPS_MAX_N = 16  # 2^16 sign patterns x 16 ranks: a few milliseconds, exact at any tie pattern


def _signed_rank_p(d: np.ndarray) -> tuple[float, float, str]:
    """(T+, two-sided p, method) of the signed-rank test on nonzero differences `d`.

    The method is chosen here, never left to scipy's `auto`: on small samples with ties that
    falls back to a 9,999-resample permutation test, which was 96% of the agreement page's time.
    - no ties and n <= 50: scipy's exact null distribution;
    - ties and n <= 16: exact, by enumerating all 2^n sign patterns of the mid-ranks (the same
      conditional distribution scipy's permutation fallback samples from, without sampling);
    - otherwise: scipy's normal approximation with the tie correction.
    """
    from scipy import stats as sps

    n = len(d)
    ties = len(np.unique(np.abs(d))) < n
    if not ties and n <= 50:
        res = sps.wilcoxon(d, zero_method="wilcox", alternative="two-sided", method="exact")
        return float(res.statistic), float(res.pvalue), "exact (no ties)"
    if n <= EXACT_FLIPS_MAX_N:
        ranks = sps.rankdata(np.abs(d))
        t_plus = float(ranks[d > 0].sum())
        patterns = (np.arange(2**n)[:, None] >> np.arange(n)[None, :]) & 1
        null = np.einsum("pn,n->p", patterns, ranks)
        eps = 1e-9 * max(1.0, float(ranks.sum()))
        p = 2.0 * min(float(np.mean(null >= t_plus - eps)), float(np.mean(null <= t_plus + eps)))
        return t_plus, min(p, 1.0), f"exact over all 2^{n} sign patterns (ties)"
    res = sps.wilcoxon(d, zero_method="wilcox", alternative="two-sided", method="approx")
    return float(res.statistic), float(res.pvalue), "normal approximation with tie correction"


def wilcoxon_bias(judge: np.ndarray, human_mean: np.ndarray) -> Record:
    """Paired signed-rank test of judge - human mean (does the judge score higher/lower?)."""
    j, h = _clean(judge, human_mean)
    d = j - h
    name = "wilcoxon_signed_rank"
    n = {"items": len(d), "nonzero": int(np.count_nonzero(d))}
    if len(d) < 3:
        return record(name, n=n, note=f"needs at least 3 paired items, got {len(d)}")
    if np.count_nonzero(d) == 0:
        return record(name, n=n, note="all differences are zero: the test is undefined")
    nz = d[d != 0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stat, p, how = _signed_rank_p(nz)
    # scipy reports min(T+, T-) for the two-sided test; kept as `statistic`. The estimate is the
    # test's own location estimate, Hodges-Lehmann (the median of the Walsh averages), which sits
    # beside the median difference on the same scale (issue 29: "estimate 0" beside "median 2").
    total = len(nz) * (len(nz) + 1) / 2.0
    return record(
        name,
        hodges_lehmann(d),
        p=p,
        n=n,
        signed_rank_statistic=min(stat, total - stat),
        median_difference=float(np.median(d)),
        method=f"signed-rank test, zero differences dropped (wilcox), two-sided; p: {how}; "
        "estimate: Hodges-Lehmann (median of the Walsh averages)",
    )


def hodges_lehmann(d: np.ndarray) -> float:
    """The one-sample Hodges-Lehmann estimate: the median of (d_i + d_j) / 2 over all i <= j.

    Scores sit on a grid, so n differences take few distinct values u: the n(n+1)/2 Walsh
    averages are then counted over the u(u+1)/2 pairs of distinct values instead of listed
    (1,000 items: 500,500 averages, about 100 value pairs). The same averages, the same median."""
    d = np.asarray(d, dtype=float)
    values, counts = np.unique(d, return_counts=True)
    if len(values) > len(d) // 2:
        i, k = np.triu_indices(len(d))
        return float(np.median((d[i] + d[k]) / 2.0))
    i, k = np.triu_indices(len(values))
    walsh = (values[i] + values[k]) / 2.0
    # pairs i < j of items with values a < b: c_a c_b; pairs i <= j within one value: c_a (c_a + 1) / 2
    weight = np.where(i == k, counts[i] * (counts[i] + 1) // 2, counts[i] * counts[k])
    order = np.argsort(walsh, kind="stable")
    walsh, cum = walsh[order], np.cumsum(weight[order])
    total = int(cum[-1])

    def at(position: int) -> float:  # the average at 0-based position of the sorted list
        return float(walsh[np.searchsorted(cum, position, side="right")])

    if total % 2:
        return at(total // 2)
    return (at(total // 2 - 1) + at(total // 2)) / 2.0


def correlation(x: np.ndarray, y: np.ndarray, kind: str) -> Record:
    """Spearman rho or Kendall tau-b with a Fisher-z interval."""
    from scipy import stats as sps

    a, b = _clean(x, y)
    n = {"items": len(a)}
    need = 4 if kind == "spearman" else 5
    if len(a) < 3:
        return record(kind, n=n, note=f"needs at least 3 paired items, got {len(a)}")
    if np.all(a == a[0]) or np.all(b == b[0]):
        return record(kind, n=n, note="scores are constant on one side: correlation undefined")
    if kind == "spearman":
        r, p = sps.spearmanr(a, b)
        var = 1.06 / (len(a) - 3) if len(a) >= need else math.nan
    else:
        r, p = sps.kendalltau(a, b)
        var = 0.437 / (len(a) - 4) if len(a) >= need else math.nan
    r = float(r)
    ci = (math.nan, math.nan)
    note = ""
    if math.isnan(var):
        note = f"CI needs at least {need} items"
    else:
        z = math.atanh(max(min(r, 1 - 1e-12), -1 + 1e-12))
        half = Z975 * math.sqrt(var)
        ci = (math.tanh(z - half), math.tanh(z + half))
    return record(
        kind,
        r,
        ci=ci,
        ci_method="Fisher z, Fieller-Hartley-Pearson SE",
        p=float(p),
        n=n,
        note=note,
    )


# --- Krippendorff's alpha ------------------------------------------------------------------


def krippendorff_alpha(matrix: np.ndarray, level: str) -> Record:
    """Alpha for a (units, raters) matrix with NaN for missing ratings.

    Built from the coincidence matrix o[c, k] = sum_u n_uck / (m_u - 1) over the observed
    values; `ordinal` uses the rank-based metric over the observed values, `interval` squared
    differences.
    """
    name = f"krippendorff_alpha_{level}"
    X = np.asarray(matrix, dtype=float)
    m_u = np.sum(~np.isnan(X), axis=1)
    X = X[m_u >= 2]
    m_u = m_u[m_u >= 2]
    n_pairable = int(m_u.sum())
    n = {"units": len(X), "pairable_values": n_pairable}
    if len(X) < 2 or n_pairable < 4:
        return record(name, n=n, note="needs at least 2 units with 2 or more ratings")
    values, codes = np.unique(X[~np.isnan(X)], return_inverse=True)
    V = len(values)
    if V < 2:
        return record(name, n=n, note="all ratings are equal: alpha undefined (no variation)")
    unit_of = np.repeat(np.arange(len(X)), m_u)
    counts = np.zeros((len(X), V))
    np.add.at(counts, (unit_of, codes.reshape(-1)), 1.0)
    w = 1.0 / (m_u - 1.0)
    # einsum, not @: tiny (values x values) result; BLAS threads only contend for a busy CPU.
    weighted = counts * w[:, None]
    o = np.einsum("uc,uk->ck", weighted, counts) - np.diag(weighted.sum(axis=0))
    n_c = o.sum(axis=0)
    if level == "ordinal":
        cum = np.concatenate(([0.0], np.cumsum(n_c)))
        # delta(c, k) = (sum_{g=c..k} n_g - (n_c + n_k) / 2)^2 for c <= k, symmetric
        lo = np.minimum.outer(np.arange(V), np.arange(V))
        hi = np.maximum.outer(np.arange(V), np.arange(V))
        delta = (cum[hi + 1] - cum[lo] - (n_c[lo] + n_c[hi]) / 2.0) ** 2
    elif level == "interval":
        delta = np.subtract.outer(values, values) ** 2
    else:
        raise ValueError(f"unknown level {level!r}")
    d_o = float((o * delta).sum())
    d_e = float((np.outer(n_c, n_c) * delta).sum())
    if d_e == 0:
        return record(name, n=n, note="no variation in the ratings: alpha undefined")
    alpha = 1.0 - (n_c.sum() - 1.0) * d_o / d_e
    return record(name, alpha, n=n, method="coincidence matrix over observed values")


# --- ICC -----------------------------------------------------------------------------------


def icc(matrix: np.ndarray, form: str) -> Record:
    """ICC(1,1) or ICC(2,1) on complete rows of an (items, raters) matrix."""
    from scipy import stats as sps

    name = {"1,1": "icc_1_1", "2,1": "icc_2_1"}[form]
    X = np.asarray(matrix, dtype=float)
    X = X[~np.any(np.isnan(X), axis=1)]
    n_items, k = X.shape
    n = {"items": int(n_items), "raters": int(k)}
    if n_items < 3 or k < 2:
        return record(name, n=n, note=f"needs at least 3 complete items and 2 raters, got {n}")
    grand = X.mean()
    ss_rows = k * float(((X.mean(axis=1) - grand) ** 2).sum())
    ss_cols = n_items * float(((X.mean(axis=0) - grand) ** 2).sum())
    ss_total = float(((X - grand) ** 2).sum())
    if ss_total == 0:
        return record(name, n=n, note="all scores are equal: ICC undefined")
    msr = ss_rows / (n_items - 1)
    msw = (ss_total - ss_rows) / (n_items * (k - 1))
    msc = ss_cols / (k - 1)
    mse = (ss_total - ss_rows - ss_cols) / ((n_items - 1) * (k - 1))
    forms = {
        "1,1": "ICC(1,1) one-way random, single rater",
        "2,1": "ICC(2,1) two-way random, absolute agreement",
    }
    if (msw if form == "1,1" else mse) <= 1e-12 * max(ss_total, 1.0):
        # No residual variance (the raters agree exactly, or for ICC(2,1) differ by a constant): the
        # F-based interval, which divides by that variance, does not exist. Python floats raise on
        # division by zero, so this case is decided before any division.
        value = (
            1.0
            if form == "1,1" or msc <= 1e-12 * max(ss_total, 1.0)
            else float((msr - mse) / (msr + (k - 1) * mse + k * (msc - mse) / n_items))
        )
        return record(
            name,
            value,
            n=n,
            note="no residual variance (the raters agree, up to a constant for ICC(2,1)): no F interval",
            form=forms[form],
        )
    with np.errstate(divide="ignore", invalid="ignore"):
        if form == "1,1":
            value = (msr - msw) / (msr + (k - 1) * msw)
            f1 = msr / msw
            df1, df2 = n_items - 1, n_items * (k - 1)
            fl = f1 / sps.f.ppf(0.975, df1, df2)
            fu = f1 * sps.f.ppf(0.975, df2, df1)
            ci = ((fl - 1) / (fl + k - 1), (fu - 1) / (fu + k - 1))
        else:
            value = (msr - mse) / (msr + (k - 1) * mse + k * (msc - mse) / n_items)
            fj = msc / mse
            vn = (k - 1) * (n_items - 1) * (k * value * fj + n_items * (1 + (k - 1) * value) - k * value) ** 2
            vd = (n_items - 1) * k**2 * value**2 * fj**2 + (n_items * (1 + (k - 1) * value) - k * value) ** 2
            v = vn / vd
            f2u = sps.f.ppf(0.975, n_items - 1, v)
            f2l = sps.f.ppf(0.975, v, n_items - 1)
            base = k * msc + (k * n_items - k - n_items) * mse
            ci = (
                n_items * (msr - f2u * mse) / (f2u * base + n_items * msr),
                n_items * (f2l * msr - mse) / (base + n_items * f2l * msr),
            )
    return record(
        name,
        float(value),
        ci=ci,
        ci_method="F distribution (Shrout-Fleiss)",
        n=n,
        form=forms[form],
    )


# --- equivalence, multiplicity, systems ----------------------------------------------------


def tost(
    values: np.ndarray,
    margin: float,
    alpha: float = 0.05,
    *,
    n_boot: int = 0,
    seed: int = 0,
    resampled: ResampledMeans | None = None,
) -> Record:
    """Two one-sided t tests that the mean of `values` lies within (-margin, +margin).

    With `n_boot`, also the (1 - 2 alpha) percentile interval of the mean with items resampled:
    equivalence is then shown when that interval lies inside the margins, non-equivalence when it
    lies wholly outside them, and otherwise `more_items_needed` says about how many more items
    would narrow the interval enough to decide (its half-width shrinks as 1 / sqrt(n)).
    `resampled` (one per analysis, with B = n_boot and the same seed) shares the item draws
    between the calls of one analysis instead of drawing them again in each."""
    from scipy import stats as sps

    v = values[~np.isnan(values)]
    n = {"items": len(v)}
    name = "tost_equivalence"
    if len(v) < 3:
        return record(name, n=n, note=f"needs at least 3 items, got {len(v)}", margin=margin)
    m = float(v.mean())
    se = float(v.std(ddof=1)) / math.sqrt(len(v))
    df = len(v) - 1
    if se == 0:
        p = 0.0 if abs(m) < margin else 1.0
        return record(
            name,
            m,
            p=p,
            n=n,
            margin=margin,
            note="no variation: decided by the mean alone",
            equivalent=bool(p < alpha),
            outside=bool(abs(m) > margin),
            more_items_needed=0,
        )
    p_low = float(sps.t.sf((m + margin) / se, df))
    p_high = float(sps.t.cdf((m - margin) / se, df))
    p = max(p_low, p_high)
    t90 = float(sps.t.ppf(1 - alpha, df)) * se
    ci, ci_method = (m - t90, m + t90), f"{100 * (1 - 2 * alpha):g}% t interval (TOST)"
    if n_boot > 0:
        if resampled is None or (resampled.n_boot, resampled.seed) != (n_boot, seed):
            resampled = ResampledMeans(n_boot, seed)
        ordered = np.sort(v)  # the same interval whatever order the items come in (file or campaign)
        means = resampled.means(ordered)
        ci = (float(np.quantile(means, alpha)), float(np.quantile(means, 1 - alpha)))
        ci_method = (
            f"{100 * (1 - 2 * alpha):g}% bootstrap percentile interval, items resampled, B={n_boot}, seed={seed}"
        )
    equivalent = -margin < ci[0] and ci[1] < margin
    outside = ci[0] > margin or ci[1] < -margin
    half = (ci[1] - ci[0]) / 2
    gap = abs(abs(m) - margin)  # how far the mean is from the margin: the half-width that would decide
    if equivalent or outside:
        needed = 0
    elif gap == 0 or half == 0:
        needed = None  # the mean sits on the margin: no study size decides
    else:
        needed = max(1, math.ceil(len(v) * (half / gap) ** 2) - len(v))
    return record(
        name,
        m,
        ci=ci,
        ci_method=ci_method,
        p=p,
        n=n,
        margin=margin,
        alpha=alpha,
        p_lower=p_low,
        p_upper=p_high,
        equivalent=bool(equivalent),
        outside=bool(outside),
        more_items_needed=needed,
    )


def holm(pvalues: np.ndarray) -> np.ndarray:
    """Holm step-down adjusted p-values; NaN entries stay NaN and do not count."""
    p = np.asarray(pvalues, dtype=float)
    out = np.full_like(p, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    m = len(ok)
    if m == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    adj = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out[order] = np.minimum(adj, 1.0)
    return out


def system_means(human_mean: np.ndarray, judge: np.ndarray, item_system: np.ndarray) -> dict[str, Any]:
    """Per-system means by humans and by the judge, ranks (1 = best) and flipped pairs."""
    from scipy import stats as sps

    systems, codes = np.unique(item_system, return_inverse=True)
    codes = codes.reshape(-1)

    def means(v: np.ndarray) -> np.ndarray:
        ok = ~np.isnan(v)
        s = np.bincount(codes[ok], weights=v[ok], minlength=len(systems))
        c = np.bincount(codes[ok], minlength=len(systems))
        with np.errstate(invalid="ignore", divide="ignore"):
            return s / c

    hm, jm = means(human_mean), means(judge)
    h_rank = sps.rankdata(-np.nan_to_num(hm, nan=-np.inf))
    j_rank = sps.rankdata(-np.nan_to_num(jm, nan=-np.inf))
    flips = []
    for a in range(len(systems)):
        for b in range(a + 1, len(systems)):
            sh, sj = np.sign(hm[a] - hm[b]), np.sign(jm[a] - jm[b])
            if sh != sj:
                flips.append(
                    {
                        "systems": [str(systems[a]), str(systems[b])],
                        "humans": "tie" if sh == 0 else ("first" if sh > 0 else "second"),
                        "judge": "tie" if sj == 0 else ("first" if sj > 0 else "second"),
                    }
                )
    tau = record("kendall_tau_systems")
    if len(systems) >= 3:
        tau = correlation(hm, jm, "kendall")
        tau["statistic"] = "kendall_tau_systems"
    else:
        tau["note"] = "needs at least 3 systems"
    return {
        "systems": [
            {
                "system": str(s),
                "human_mean": _f(hm[i]),
                "judge_mean": _f(jm[i]),
                "human_rank": _f(h_rank[i]),
                "judge_rank": _f(j_rank[i]),
                "items": int(np.sum(codes == i)),
            }
            for i, s in enumerate(systems)
        ],
        "flips": flips,
        "rank_agreement": tau,
    }
