"""The verdict: one plain answer per criterion and judge view to "can this judge replace a
reviewer?", with the numbers that decide it. The rule is versioned and printed with every
report; change RULE_VERSION whenever RULE changes.
"""

from __future__ import annotations

import math
from typing import Any

RULE_VERSION = "verdict rule v1 (2025-06)"

REPLACE = "can replace a reviewer"
BIASED = "agrees but biased"
WORSE = "worse than a second reviewer"
NOT_SHOWN = "not shown"

RULE = (
    "Alt-test = the alternative annotator test (Calderon, Reichart & Dror 2025) at cost margin epsilon, "
    "Benjamini-Yekutieli across reviewers at alpha; bias = Wilcoxon signed-rank test of judge minus "
    "human mean, Holm-corrected across criteria. In order, the first that applies:",
    f"1. '{NOT_SHOWN}' when the alt-test cannot run (too few items per reviewer, or too few items with "
    "two reviews): the cell says what is missing.",
    f"2. '{REPLACE}' when the judge passes the alt-test (winning rate >= 0.5) and its bias is not "
    "significant (Holm p >= alpha).",
    f"3. '{BIASED}' when the bias is significant and the judge passes the alt-test as it scores or once "
    "its mean bias is subtracted from its scores.",
    f"4. '{WORSE}' when, for at least half of the tested reviewers, the reviewer agrees with the remaining "
    "reviewers significantly more often than the judge does (the reverse one-sided test, BY at alpha).",
    f"5. '{NOT_SHOWN}' otherwise: the judge neither passes nor is shown to be worse; more items or "
    "reviewers are needed.",
)


def _num(label: str, value: float, digits: int = 2, signed: bool = False) -> dict[str, Any]:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        text = "-"
    else:
        text = f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"
    return {"label": label, "value": value, "text": text}


def decide(view: dict[str, Any], alpha: float) -> dict[str, Any]:
    """The verdict of one judge view of one criterion, from its records."""
    alt = view["alt_test"]
    shifted = view["alt_test_bias_corrected"]
    wil = view["wilcoxon_signed_rank"]
    bias = view["bias_judge_minus_humans"]["estimate"]
    p_bias = wil["p_holm"] if not math.isnan(wil["p_holm"]) else wil["p_value"]
    numbers = [
        _num("winning rate", alt["estimate"]),
        _num("rho", alt["extra"].get("rho", math.nan)),
        _num("bias", bias, signed=True),
        _num("bias p (Holm)", p_bias, 3),
    ]
    if math.isnan(alt["estimate"]):
        return {"verdict": NOT_SHOWN, "code": "not_shown", "reason": alt["note"], "numbers": numbers[2:], "step": 1}
    biased = not math.isnan(p_bias) and p_bias < alpha
    passed = bool(alt["extra"].get("passed"))
    if passed and not biased:
        reason = f"passes the alt-test and its bias ({bias:+.2f}) is not significant"
        return {"verdict": REPLACE, "code": "replace", "reason": reason, "numbers": numbers, "step": 2}
    if biased and (passed or shifted["extra"].get("passed")):
        how = "as it scores" if passed else f"once its bias of {bias:+.2f} is subtracted"
        reason = f"passes the alt-test {how}, but scores {bias:+.2f} points off the human mean (significant)"
        nums = [*numbers[2:], _num("winning rate, bias removed", shifted["estimate"]), numbers[0]]
        return {"verdict": BIASED, "code": "biased", "reason": reason, "numbers": nums, "step": 3}
    worse = alt["extra"].get("worse_rate", math.nan)
    if not math.isnan(worse) and worse >= 0.5:
        reason = "reviewers agree with each other significantly more often than with the judge"
        nums = [_num("reviewers better", worse), numbers[0], numbers[1]]
        return {"verdict": WORSE, "code": "worse", "reason": reason, "numbers": nums, "step": 4}
    return {
        "verdict": NOT_SHOWN,
        "code": "not_shown",
        "reason": "the judge neither passes the alt-test nor is shown worse than a reviewer",
        "numbers": numbers,
        "step": 5,
    }


def verdict_table(criteria: dict[str, Any], views: list[str], alpha: float) -> dict[str, Any]:
    cells = []
    for c, (crit, block) in enumerate(criteria.items()):
        for v, view in enumerate(views):
            cells.append(
                {"criterion": crit, "view": view, "anchor": f"evidence-{c}-{v}", **decide(block["views"][view], alpha)}
            )
    return {"rule_version": RULE_VERSION, "rule": list(RULE), "cells": cells}
