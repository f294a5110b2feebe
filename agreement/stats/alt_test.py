"""Leave-one-reviewer-out statistics: the alternative annotator test and human-likeness.

Alt-test (Calderon, Reichart and Dror, ACL 2025, "The Alternative Annotator Test for
LLM-as-a-Judge"), following the authors' reference code (nitaytech/AltTest, `alt_test`):
- items with at least two human scores and a judge score are kept (min_humans_per_instance=2);
- for each reviewer j with at least `min_items` such items (the authors' default 30, below which
  the t-test's normality is in doubt; fewer are skipped and listed), on each item i of j:
  the alignment of a rater with the *remaining* reviewers of i is minus the RMSE of its score
  against theirs (the authors' `neg_rmse` for numeric scores);
  W_f = 1 if the judge aligns at least as well as j, W_h = 1 if j aligns at least as well as the
  judge (a tie counts for both);
- H0: rho_f <= rho_h - epsilon, tested by a one-sample t-test that mean(W_h - W_f) < epsilon
  (`ttest_1samp(d, epsilon, alternative="less")`); Benjamini-Yekutieli across the reviewers at
  q = alpha;
- winning rate omega = rejected / tested; the judge passes when omega >= 0.5; the average
  advantage probability rho = mean over tested reviewers of rho_f = mean(W_f).
Also reported (for the verdict), on the same indicators: the reverse one-sided test that the
reviewer beats the judge (mean(W_h - W_f) > 0), BY-corrected the same way.

Human-likeness (after "Judge's Verdict", 2025): for each reviewer r with enough items shared
with other reviewers, the quadratic-weighted kappa of r against the other reviewers of the same
items, and of the judge against those same reviewers on those items. The judge's z-score is
(mean judge kappa - mean reviewer kappa) / sd of the reviewer kappas: |z| <= 1 human-like,
z > 1 agrees with reviewers more than a typical reviewer does, z < -1 less than one does.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from agreement.stats.core import Record, record
from agreement.stats.kappa import grouped_kappa

ALT_MIN_ITEMS = 30  # the authors' min_instances_per_human
LIKENESS_MIN_ITEMS = 10
LIKENESS_MIN_REVIEWERS = 3


def benjamini_yekutieli(p: np.ndarray, q: float) -> tuple[np.ndarray, np.ndarray]:
    """(adjusted p-values, rejected) by the Benjamini-Yekutieli procedure under arbitrary dependence:
    scipy's `false_discovery_control(method="by")`, rejecting where the adjusted p is <= q (the same
    decisions as the step-up rule)."""
    from scipy.stats import false_discovery_control

    p = np.asarray(p, dtype=float)
    if len(p) == 0:
        return np.empty(0), np.empty(0, dtype=bool)
    adj = np.asarray(false_discovery_control(p, method="by"), dtype=float)
    return adj, adj <= q


def _unique_reviewer_slots(R: np.ndarray, present: np.ndarray) -> tuple[np.ndarray, bool]:
    """Present slots, keeping only a reviewer's first slot on an item (duplicates exist only
    under the mlrbench pairing, which keeps a reviewer's repeated rows)."""
    keep = present.copy()
    dup = False
    for s in range(1, R.shape[1]):
        for t in range(s):
            same = keep[:, s] & keep[:, t] & (R[:, s] == R[:, t])
            if same.any():
                dup = True
                keep[same, s] = False
    return keep, dup


def _indicators(H: np.ndarray, R: np.ndarray, j: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, bool]:
    """Per (item, reviewer) comparison: reviewer index, W_f, W_h; items kept; duplicates seen."""
    rev, _, wf, wh, kept, dup = _indicators_by_item(H, R, j)
    return rev, wf, wh, kept, dup


def _indicators_by_item(
    H: np.ndarray, R: np.ndarray, j: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int, bool]:
    """As `_indicators`, with each comparison's item index too."""
    present = ~np.isnan(H) & (R >= 0)
    present, dup = _unique_reviewer_slots(R, present)
    n_h = present.sum(axis=1)
    kept = (n_h >= 2) & ~np.isnan(j)
    Hs = np.where(present, H, 0.0)
    sums, sq = Hs.sum(axis=1), (Hs**2).sum(axis=1)
    revs, items, wf, wh = [], [], [], []
    for s in range(H.shape[1]):
        rows = kept & present[:, s]
        if not rows.any():
            continue
        items.append(np.flatnonzero(rows))
        h = H[rows, s]
        n_o = n_h[rows] - 1
        o_sum, o_sq = sums[rows] - h, sq[rows] - h**2
        # mean over the remaining reviewers o of (x - o)^2 = x^2 - 2 x mean(o) + mean(o^2)
        o_mean, o_msq = o_sum / n_o, o_sq / n_o
        mse_h = h**2 - 2 * h * o_mean + o_msq
        jj = j[rows]
        mse_f = jj**2 - 2 * jj * o_mean + o_msq
        tol = 1e-9  # the same RMSE computed two ways must tie
        revs.append(R[rows, s])
        wf.append((mse_f <= mse_h + tol).astype(float))
        wh.append((mse_h <= mse_f + tol).astype(float))
    if not revs:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty, np.empty(0), np.empty(0), int(kept.sum()), dup
    return (
        np.concatenate(revs),
        np.concatenate(items),
        np.concatenate(wf),
        np.concatenate(wh),
        int(kept.sum()),
        dup,
    )


def alt_test_combined(
    H: np.ndarray, R: np.ndarray, j: np.ndarray, *, epsilon: float, alpha: float, statistic: str = "alt_test_combined"
) -> Record:
    """The alternative annotator test for small studies (the authors' advice below 30 items per
    annotator): the reviewers pooled into one combined annotator and the t-test replaced by the
    Wilcoxon signed-rank test. Per item, d_i = the mean over its reviewers of W_h - W_f (the same
    leave-one-out indicators as `alt_test`); one value per item, so items are the independent
    units. H0: mean advantage of a reviewer over the judge >= epsilon, rejected by a one-sided
    signed-rank test of d_i - epsilon < 0 (the judge passes); the reverse one-sided test of d_i > 0
    says a reviewer beats the judge (worse)."""
    from scipy import stats as sps

    _, item, wf, wh, n_kept, dup = _indicators_by_item(H, R, j)
    base = {
        "epsilon": epsilon,
        "alpha": alpha,
        "method": "Calderon, Reichart & Dror (2025), small-sample variant: reviewers combined into one "
        "annotator, per-item mean of W_h - W_f, one-sided Wilcoxon signed-rank tests",
    }
    if not len(item):
        return record(
            statistic, n={"items": 0}, note="needs items with at least two human scores and a judge score", **base
        )
    counts = np.bincount(item, minlength=H.shape[0])
    used = counts > 0
    d = (np.bincount(item, weights=wh - wf, minlength=H.shape[0])[used]) / counts[used]
    n = {"items": int(used.sum()), "comparisons": int(len(item))}
    if len(d) < 6:
        return record(
            statistic, n=n, note=f"needs at least 6 items with two reviews and a judge score, got {len(d)}", **base
        )

    def one_sided(x: np.ndarray, alternative: str) -> float:
        x = x[x != 0]
        if len(x) == 0:
            return 1.0
        ties = len(np.unique(np.abs(x))) < len(x)
        method = "approx" if ties or len(x) > 50 else "exact"
        return float(sps.wilcoxon(x, alternative=alternative, zero_method="wilcox", method=method).pvalue)

    p_pass = one_sided(d - epsilon, "less")
    p_worse = one_sided(d, "greater")
    return record(
        statistic,
        float(d.mean()),
        p=p_pass,
        n=n,
        note="a reviewer with several rows on an item counts once (the first row)" if dup else "",
        passed=bool(p_pass < alpha),
        p_worse=p_worse,
        worse=bool(p_worse < alpha),
        rho_judge=float(wf.mean()),
        rho_reviewer=float(wh.mean()),
        reading="estimate = mean over items of (reviewer beats judge) - (judge beats reviewer); the judge "
        "passes when it is significantly below epsilon, is worse when significantly above 0",
        **base,
    )


def _t_tail(
    mean: np.ndarray, sd: np.ndarray, n: np.ndarray, constant: np.ndarray, popmean: float, alternative: str
) -> np.ndarray:
    """scipy's `ttest_1samp(d, popmean, alternative=...)` p-values for many samples given their
    means, sds and sizes: the same t statistic and t(n-1) tail, computed for all reviewers at
    once. A constant sample has no variance: its t is +/-inf, so the mean alone decides."""
    from scipy import stats as sps

    with np.errstate(invalid="ignore", divide="ignore"):
        t = (mean - popmean) / (sd / np.sqrt(n))
        p = sps.t.cdf(t, n - 1) if alternative == "less" else sps.t.sf(t, n - 1)
    hit = (mean < popmean) if alternative == "less" else (mean > popmean)
    return np.where(constant, np.where(hit, 0.0, 1.0), p)


def alt_test(
    H: np.ndarray,
    R: np.ndarray,
    j: np.ndarray,
    reviewers: tuple[str, ...],
    *,
    epsilon: float,
    alpha: float,
    min_items: int = ALT_MIN_ITEMS,
    statistic: str = "alt_test",
) -> Record:
    rev, wf, wh, n_kept, dup = _indicators(H, R, j)
    base = {
        "epsilon": epsilon,
        "q_fdr": alpha,
        "min_items_per_reviewer": min_items,
        "scoring": "minus RMSE against the remaining reviewers of the item (the authors' neg_rmse)",
        "method": "Calderon, Reichart & Dror (ACL 2025): leave one reviewer out, one-sided t-test of "
        "mean(W_h - W_f) < epsilon per reviewer, Benjamini-Yekutieli across reviewers",
    }
    stats = _reviewer_stats(rev, wf, wh, n_reviewers=len(reviewers), epsilon=epsilon)
    per, skipped = _reviewer_rows(stats, reviewers, min_items=min_items)
    n = {"items": n_kept, "reviewers_tested": len(per), "reviewers_skipped": len(skipped)}
    note = "a reviewer with several rows on an item counts once (the first row)" if dup else ""
    if n_kept == 0:
        return record(statistic, n=n, note="needs items with at least two human scores and a judge score", **base)
    if not per:
        return _too_few_items(statistic, n=n, skipped=skipped, min_items=min_items, base=base)
    p_by, rejected = benjamini_yekutieli(np.array([x["p"] for x in per]), alpha)
    pw_by, worse = benjamini_yekutieli(np.array([x["p_worse"] for x in per]), alpha)
    for x, a, rj, aw, w in zip(per, p_by, rejected, pw_by, worse, strict=True):
        x.update(p_by=float(a), judge_wins=bool(rj), p_worse_by=float(aw), reviewer_better=bool(w))
    omega = float(rejected.mean())
    return record(
        statistic,
        omega,
        n=n,
        note=note,
        rho=float(np.mean([x["rho_judge"] for x in per])),
        passed=bool(omega >= 0.5),
        worse_rate=float(worse.mean()),
        per_reviewer=per,
        skipped=skipped,
        reading="estimate = winning rate omega (share of reviewers the judge replaces); passes at >= 0.5; "
        "rho = average advantage probability (compare judges by it)",
        **base,
    )


class _ReviewerStats(NamedTuple):
    present: np.ndarray  # reviewer indices with at least one kept item
    cnt: np.ndarray
    rho_f: np.ndarray
    rho_h: np.ndarray
    p_less: np.ndarray
    p_worse: np.ndarray
    constant: np.ndarray


def _reviewer_stats(
    rev: np.ndarray, wf: np.ndarray, wh: np.ndarray, *, n_reviewers: int, epsilon: float
) -> _ReviewerStats:
    """Both one-sided t-tests of d = W_h - W_f for every reviewer, vectorised."""
    # Per reviewer at once (a large study has hundreds): counts, mean and sd of d = W_h - W_f.
    # Reviewer indices are small integers: group by bincount, no sort.
    n_all = max(n_reviewers, int(rev.max()) + 1 if len(rev) else 0)
    cnt_all = np.bincount(rev, minlength=n_all)
    present = np.flatnonzero(cnt_all)
    slot = np.full(n_all, -1, dtype=np.int64)
    slot[present] = np.arange(len(present))
    group = slot[rev]
    g = len(present)
    d = wh - wf
    cnt = cnt_all[present].astype(float)
    total = np.bincount(group, weights=d, minlength=g)
    mean = total / np.maximum(cnt, 1)
    sq = np.bincount(group, weights=d * d, minlength=g)  # d is -1, 0 or 1: also sum |d|
    constant = (sq == 0) | ((np.abs(total) == sq) & (sq == cnt))
    rho_f = np.bincount(group, weights=wf, minlength=g) / np.maximum(cnt, 1)
    rho_h = np.bincount(group, weights=wh, minlength=g) / np.maximum(cnt, 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        sd = np.sqrt(np.maximum(sq - cnt * mean**2, 0.0) / (cnt - 1))
    p_less = _t_tail(mean, sd, cnt, constant, epsilon, "less")
    p_worse = _t_tail(mean, sd, cnt, constant, 0.0, "greater")
    return _ReviewerStats(present, cnt, rho_f, rho_h, p_less, p_worse, constant)


def _reviewer_rows(
    stats: _ReviewerStats, reviewers: tuple[str, ...], *, min_items: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(tested reviewers' rows, skipped reviewers with too few items for the t-test)."""
    present, cnt, rho_f, rho_h, p_less, p_worse, constant = stats
    per: list[dict[str, Any]] = []
    skipped = []
    for k, r in enumerate(present.tolist()):
        name = reviewers[r] if 0 <= r < len(reviewers) else str(r)
        if cnt[k] < min_items:
            skipped.append({"reviewer": name, "items": int(cnt[k])})
            continue
        per.append(
            {
                "reviewer": name,
                "items": int(cnt[k]),
                "rho_judge": float(rho_f[k]),
                "rho_reviewer": float(rho_h[k]),
                "p": float(p_less[k]),
                "p_worse": float(p_worse[k]),
                "note": "no variation: decided by the mean" if constant[k] else "",
            }
        )
    return per, skipped


def _too_few_items(
    statistic: str, *, n: dict[str, int], skipped: list[dict[str, Any]], min_items: int, base: dict[str, Any]
) -> Record:
    """No reviewer has enough items: say how many the best-covered one has rather than give a rate."""
    most = max(skipped, key=lambda s: s["items"]) if skipped else {"items": 0, "reviewer": "-"}
    return record(
        statistic,
        n=n,
        note=(
            f"needs at least {min_items} items per reviewer (the authors' minimum for the t-test); "
            f"the most any reviewer has is {most['items']} ({len(skipped)} reviewer(s) skipped)"
        ),
        skipped=skipped,
        **base,
    )


def human_likeness(
    H: np.ndarray,
    R: np.ndarray,
    j: np.ndarray,
    reviewers: tuple[str, ...],
    scale: tuple[float, float],
    *,
    min_items: int = LIKENESS_MIN_ITEMS,
    min_reviewers: int = LIKENESS_MIN_REVIEWERS,
) -> Record:
    name = "human_likeness_z"
    present = ~np.isnan(H) & (R >= 0)
    present, _ = _unique_reviewer_slots(R, present)
    ok_item = ~np.isnan(j) & (present.sum(axis=1) >= 2)
    # (reviewer's score, judge's score, other reviewer's score) per reviewer, over shared items
    own, jud, other, who = [], [], [], []
    k = H.shape[1]
    for s in range(k):
        for t in range(k):
            if s == t:
                continue
            m = ok_item & present[:, s] & present[:, t]
            own.append(H[m, s])
            other.append(H[m, t])
            jud.append(j[m])
            who.append(R[m, s])
    method = (
        "per reviewer: quadratic-weighted kappa against the other reviewers of the same items, and the "
        "judge's on the same pairs; z = (mean judge kappa - mean reviewer kappa) / sd of reviewer kappas"
    )
    if not own:
        return record(name, n={"reviewers": 0}, note="needs items with two or more reviews", method=method)
    own_a, jud_a, other_a, who_a = map(np.concatenate, (own, jud, other, who))
    present, group = np.unique(who_a, return_inverse=True)
    group = group.reshape(-1)
    k_rev, pairs = grouped_kappa(own_a, other_a, group, len(present), scale, 2)
    k_judge, _ = grouped_kappa(jud_a, other_a, group, len(present), scale, 2)
    per = [
        {
            "reviewer": reviewers[r] if 0 <= r < len(reviewers) else str(r),
            "pairs": int(c),
            "kappa_reviewer": float(a),
            "kappa_judge": float(b),
        }
        for r, c, a, b in zip(present.tolist(), pairs.tolist(), k_rev.tolist(), k_judge.tolist(), strict=True)
        if c >= min_items
    ]
    per = [x for x in per if not (math.isnan(x["kappa_reviewer"]) or math.isnan(x["kappa_judge"]))]
    n = {"reviewers": len(per)}
    if len(per) < min_reviewers:
        return record(
            name,
            n=n,
            note=(
                f"needs at least {min_reviewers} reviewers with {min_items} or more score pairs shared with "
                f"other reviewers; found {len(per)}"
            ),
            method=method,
        )
    hk = np.array([x["kappa_reviewer"] for x in per])
    jk = np.array([x["kappa_judge"] for x in per])
    sd = float(hk.std(ddof=1))
    if sd == 0:
        return record(name, n=n, note="every reviewer agrees equally well: no spread to scale by", method=method)
    z = (float(jk.mean()) - float(hk.mean())) / sd
    label = "human-like" if abs(z) <= 1 else ("more consistent than a typical reviewer" if z > 1 else "less human-like")
    return record(
        name,
        z,
        n=n,
        judge_mean_kappa=float(jk.mean()),
        reviewer_mean_kappa=float(hk.mean()),
        reviewer_sd_kappa=sd,
        label=label,
        per_reviewer=per,
        method=method,
    )
