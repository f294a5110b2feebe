"""The verdict: one plain answer per criterion and judge view to "can this judge replace a
reviewer?", with the numbers that decide it. The rule is versioned and printed with every
report; change RULE_VERSION whenever RULE changes.
"""

from __future__ import annotations

import math
from typing import Any

RULE_VERSION = "verdict rule v2 (2026-12): small studies decide by the combined-annotator test and TOST"

REPLACE = "can replace a reviewer"
BIASED = "agrees but biased"
WORSE = "worse than a second reviewer"
NOT_SHOWN = "not shown"
UNDERPOWERED = "underpowered"
BIASED_ONLY = "cannot replace: biased"

PER_REVIEWER = "alt-test per reviewer"
SMALL_STUDY = "combined-annotator Wilcoxon alt-test + TOST (item bootstrap)"

RULE = (
    "Large studies (at least one reviewer with the alt-test's minimum of items): the alternative annotator "
    "test (Calderon, Reichart & Dror 2025) per reviewer at cost margin epsilon, Benjamini-Yekutieli across "
    "reviewers at alpha. Small studies (no reviewer has that many items): the authors' small-sample variant, "
    "the reviewers combined into one annotator and a one-sided Wilcoxon signed-rank test per direction, "
    "together with an equivalence test (TOST) of the excess disagreement |judge - human| - |human - human| "
    "against the margin, with a bootstrap interval resampled by item. Bias = Wilcoxon signed-rank test of "
    "judge minus human mean, Holm-corrected across criteria. Each cell names the test that decided. "
    "In order, the first that applies:",
    f"1. '{NOT_SHOWN}' when no test can run (no item with two human scores and a judge score, or too few "
    "such items): the cell says what is missing.",
    f"2. '{REPLACE}' when the judge passes (per reviewer: winning rate >= 0.5; small study: the combined "
    "test passes and the TOST interval lies within the margin) and its bias is not significant (Holm p >= alpha).",
    f"3. '{BIASED}' when the bias is significant and the judge passes as it scores or once its mean bias is "
    "subtracted (small study: the combined test passes).",
    f"4. '{WORSE}' when reviewers agree with each other significantly more than with the judge (per reviewer: "
    "for at least half of the tested reviewers, BY at alpha; small study: the reverse combined test is "
    "significant, or the TOST interval lies wholly above the margin).",
    f"5. '{BIASED_ONLY}' when the bias is significant and no test shows agreement; '{UNDERPOWERED}' otherwise: "
    "the evidence decides neither way. Both say about how many more items would decide it (from the TOST "
    "interval's width, which shrinks as 1 / sqrt(items)).",
    "MLR-Bench's notebook compares |LLM - human| with |human - human| by a Mann-Whitney U test and reads a "
    "p-value above 0.05 as agreement. A test that fails to find a difference is not evidence of agreement: "
    "a small study fails to find most differences. It is shown as evidence, never used for the verdict.",
)


def _num(label: str, value: float, digits: int = 2, signed: bool = False) -> dict[str, Any]:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        text = "-"
    else:
        text = f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"
    return {"label": label, "value": value, "text": text}


def _bias(view: dict[str, Any]) -> tuple[float, float]:
    wil = view["wilcoxon_signed_rank"]
    p_bias = wil["p_holm"] if not math.isnan(wil["p_holm"]) else wil["p_value"]
    return view["bias_judge_minus_humans"]["estimate"], p_bias


def _decision_numbers(view: dict[str, Any]) -> list[dict[str, Any]]:
    """The decision view (accept or not at the threshold) and rank agreement, as evidence."""
    out = []
    if "spearman" in view:
        out.append(_num("Spearman", view["spearman"]["estimate"]))
    if "kappa_quadratic" in view:
        out.append(_num("kappa (quadratic)", view["kappa_quadratic"]["estimate"]))
    if "auroc" in view:
        out.append(_num("AUROC", view["auroc"]["estimate"]))
    return out


def decide(view: dict[str, Any], alpha: float) -> dict[str, Any]:
    """The verdict of one judge view of one criterion, from its records."""
    alt = view["alt_test"]
    if not math.isnan(alt["estimate"]):
        return _per_reviewer(view, alpha)
    return _small_study(view, alpha)


def _per_reviewer(view: dict[str, Any], alpha: float) -> dict[str, Any]:
    alt = view["alt_test"]
    shifted = view["alt_test_bias_corrected"]
    bias, p_bias = _bias(view)
    numbers = [
        _num("winning rate", alt["estimate"]),
        _num("rho", alt["extra"].get("rho", math.nan)),
        _num("bias", bias, signed=True),
        _num("bias p (Holm)", p_bias, 3),
    ]
    cell = {"test": PER_REVIEWER}
    biased = not math.isnan(p_bias) and p_bias < alpha
    passed = bool(alt["extra"].get("passed"))
    if passed and not biased:
        reason = f"passes the alt-test and its bias ({bias:+.2f}) is not significant"
        return {**cell, "verdict": REPLACE, "code": "replace", "reason": reason, "numbers": numbers, "step": 2}
    if biased and (passed or shifted["extra"].get("passed")):
        how = "as it scores" if passed else f"once its bias of {bias:+.2f} is subtracted"
        reason = f"passes the alt-test {how}, but scores {bias:+.2f} points off the human mean (significant)"
        nums = [*numbers[2:], _num("winning rate, bias removed", shifted["estimate"]), numbers[0]]
        return {**cell, "verdict": BIASED, "code": "biased", "reason": reason, "numbers": nums, "step": 3}
    worse = alt["extra"].get("worse_rate", math.nan)
    if not math.isnan(worse) and worse >= 0.5:
        reason = "reviewers agree with each other significantly more often than with the judge"
        nums = [_num("reviewers better", worse), numbers[0], numbers[1]]
        return {**cell, "verdict": WORSE, "code": "worse", "reason": reason, "numbers": nums, "step": 4}
    small = _small_study(view, alpha)  # the per-reviewer test is inconclusive: the pooled evidence may decide
    if small["code"] not in ("not_shown", "underpowered", "biased_only"):
        return {**small, "reason": f"the per-reviewer alt-test is inconclusive; {small['reason']}"}
    reason = "the judge neither passes the alt-test nor is shown worse than a reviewer"
    if small["code"] == "underpowered":
        reason = f"{reason}; pooled over items, {small['reason']}"
        return {
            **cell,
            "verdict": UNDERPOWERED,
            "code": "underpowered",
            "reason": reason,
            "numbers": numbers,
            "step": 5,
        }
    return {**cell, "verdict": NOT_SHOWN, "code": "not_shown", "reason": reason, "numbers": numbers, "step": 5}


def _small_study(view: dict[str, Any], alpha: float) -> dict[str, Any]:
    combined = view.get("alt_test_combined")
    tost = view["tost_equivalence"]
    bias, p_bias = _bias(view)
    cell = {"test": SMALL_STUDY}
    if combined is None or math.isnan(combined["estimate"]) or math.isnan(tost["estimate"]):
        missing = (combined or {}).get("note") or tost["note"] or view["alt_test"]["note"]
        reason = f"{view['alt_test']['note']}; the small-study tests cannot run either: {missing}".strip("; ")
        return {**cell, "verdict": NOT_SHOWN, "code": "not_shown", "reason": reason, "numbers": [], "step": 1}
    extra, t = combined["extra"], tost["extra"]
    lo, hi = tost["ci_low"], tost["ci_high"]
    margin = t.get("margin", math.nan)
    numbers = [
        _num("combined p (passes)", combined["p_value"], 3),
        _num("excess disagreement", tost["estimate"], signed=True),
        {"label": "90% CI", "value": [lo, hi], "text": f"[{lo:+.2f}, {hi:+.2f}] vs ±{margin:g}"},
        _num("bias", bias, signed=True),
        _num("bias p (Holm)", p_bias, 3),
        *_decision_numbers(view),
    ]
    biased = not math.isnan(p_bias) and p_bias < alpha
    passed = bool(extra.get("passed"))
    equivalent = bool(t.get("equivalent"))
    if passed and equivalent and not biased:
        reason = (
            f"the combined test passes and the judge's excess disagreement ({tost['estimate']:+.2f}) is within "
            f"±{margin:g} of the reviewers' own; its bias ({bias:+.2f}) is not significant"
        )
        return {**cell, "verdict": REPLACE, "code": "replace", "reason": reason, "numbers": numbers, "step": 2}
    if biased and passed:
        reason = f"the combined test passes, but the judge scores {bias:+.2f} points off the human mean (significant)"
        return {**cell, "verdict": BIASED, "code": "biased", "reason": reason, "numbers": numbers, "step": 3}
    if extra.get("worse") or t.get("outside") and tost["estimate"] > 0:
        why = []
        if extra.get("worse"):
            why.append(f"reviewers beat the judge significantly often (p = {extra['p_worse']:.3f})")
        if t.get("outside") and tost["estimate"] > 0:
            why.append(
                f"the judge disagrees with reviewers by {tost['estimate']:+.2f} points more than they disagree with "
                f"each other (interval [{lo:+.2f}, {hi:+.2f}], above the ±{margin:g} margin)"
            )
        if biased:
            why.append(f"and scores {bias:+.2f} points off the human mean (significant)")
        reason = "; ".join(why)
        return {**cell, "verdict": WORSE, "code": "worse", "reason": reason, "numbers": numbers, "step": 4}
    needed = t.get("more_items_needed")
    more = f"about {needed} more items would decide it" if needed else "no study size would decide it at this margin"
    rest = f"{more} (excess disagreement {tost['estimate']:+.2f}, interval [{lo:+.2f}, {hi:+.2f}])"
    if biased:
        reason = (
            f"scores {bias:+.2f} points off the human mean (significant, Holm p = {p_bias:.3g}), so it cannot stand "
            f"in for a reviewer as it scores; whether it agrees once that is subtracted is underpowered: {rest}"
        )
        return {**cell, "verdict": BIASED_ONLY, "code": "biased_only", "reason": reason, "numbers": numbers, "step": 5}
    reason = f"underpowered: {rest}"
    return {**cell, "verdict": UNDERPOWERED, "code": "underpowered", "reason": reason, "numbers": numbers, "step": 5}


def verdict_table(criteria: dict[str, Any], views: list[str], alpha: float) -> dict[str, Any]:
    cells = []
    for c, (crit, block) in enumerate(criteria.items()):
        for v, view in enumerate(views):
            cells.append(
                {"criterion": crit, "view": view, "anchor": f"evidence-{c}-{v}", **decide(block["views"][view], alpha)}
            )
    return {"rule_version": RULE_VERSION, "rule": list(RULE), "cells": cells}
