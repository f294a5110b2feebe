"""The decision view: the judge as a classifier of the humans' accept/reject decision.

At a threshold t set by the admin (e.g. Overall >= 6 = accept), an item is accepted by the
humans when the mean of its reviewers' scores is >= t, and by the judge when the judge's score
is >= t. Reported: accuracy, balanced accuracy, precision, recall, F1, false-positive and
false-negative rates, the confusion matrix, and AUROC of the judge's continuous score against
the human decision (ties count one half, as in sklearn's roc_auc_score) with a Hanley-McNeil
(1982) interval.
"""

from __future__ import annotations

import math

import numpy as np

from agreement.stats.core import Z975, Record, record


def _ratio(a: float, b: float) -> float:
    return a / b if b else math.nan


def decision(human_mean: np.ndarray, judge: np.ndarray, threshold: float) -> Record:
    ok = ~np.isnan(human_mean) & ~np.isnan(judge)
    truth = human_mean[ok] >= threshold
    pred = judge[ok] >= threshold
    n = {"items": int(ok.sum()), "human_accepts": int(truth.sum()), "human_rejects": int((~truth).sum())}
    name = "decision_at_threshold"
    if ok.sum() == 0:
        return record(name, n=n, note="no item has both a human mean and a judge score", threshold=threshold)
    tp = int((truth & pred).sum())
    tn = int((~truth & ~pred).sum())
    fp = int((~truth & pred).sum())
    fn = int((truth & ~pred).sum())
    recall = _ratio(tp, tp + fn)
    specificity = _ratio(tn, tn + fp)
    precision = _ratio(tp, tp + fp)
    f1 = _ratio(2 * tp, 2 * tp + fp + fn)
    note = ""
    if truth.all() or not truth.any():
        note = f"the humans {'accept' if truth.all() else 'reject'} every item at this threshold: rates on the other class are undefined"
    return record(
        name,
        _ratio(tp + tn, len(truth)),
        n=n,
        note=note,
        threshold=threshold,
        accuracy=_ratio(tp + tn, len(truth)),
        balanced_accuracy=(recall + specificity) / 2
        if not (math.isnan(recall) or math.isnan(specificity))
        else math.nan,
        precision=precision,
        recall=recall,
        f1=f1,
        false_positive_rate=_ratio(fp, fp + tn),
        false_negative_rate=_ratio(fn, fn + tp),
        confusion={
            "judge_accept_human_accept": tp,
            "judge_accept_human_reject": fp,
            "judge_reject_human_accept": fn,
            "judge_reject_human_reject": tn,
        },  # fmt: skip
        reading="estimate = accuracy; accept = score >= threshold (humans: the mean of their scores)",
    )


def auroc(human_mean: np.ndarray, judge: np.ndarray, threshold: float) -> Record:
    from scipy import stats as sps

    ok = ~np.isnan(human_mean) & ~np.isnan(judge)
    truth = human_mean[ok] >= threshold
    score = judge[ok]
    n1, n0 = int(truth.sum()), int((~truth).sum())
    n = {"items": int(ok.sum()), "human_accepts": n1, "human_rejects": n0}
    name = "auroc"
    if n1 == 0 or n0 == 0:
        return record(
            name, n=n, note="needs items the humans accept and items they reject at this threshold", threshold=threshold
        )
    ranks = sps.rankdata(score)
    a = (float(ranks[truth].sum()) - n1 * (n1 + 1) / 2) / (n1 * n0)
    q1, q2 = a / (2 - a), 2 * a * a / (1 + a)
    se = math.sqrt(max(a * (1 - a) + (n1 - 1) * (q1 - a * a) + (n0 - 1) * (q2 - a * a), 0.0) / (n1 * n0))
    return record(
        name,
        a,
        ci=(max(0.0, a - Z975 * se), min(1.0, a + Z975 * se)),
        ci_method="Hanley-McNeil standard error",
        n=n,
        threshold=threshold,
        reading="probability that the judge scores a human-accepted item above a human-rejected one (ties 1/2)",
    )
