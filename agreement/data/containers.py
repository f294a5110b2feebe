"""Neutral containers for human-vs-judge agreement analysis.

The loaders (files) and, later, the review/judge apps both produce an `AgreementData`; a
pairing policy (pairing.py) turns it into a `Paired` set of dense arrays that the statistics
work on. Keeping the two apart is what lets the MLR-Bench reproduction and the strict analysis
share every statistic while differing only in which rows they pair.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Fault:
    """One data problem found while loading or pairing, with what was done about it."""

    kind: str  # e.g. "duplicate_review", "single_review", "no_judge_score", "bad_value"
    where: str  # file/row/item the problem is in
    detail: str  # what is wrong and what the rule did with it

    def as_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "where": self.where, "detail": self.detail}


@dataclass
class AgreementData:
    """Items, their systems, human review rows (long format) and judge scores (wide).

    `human_scores` and `judge_scores` hold NaN where a score is missing.
    """

    criteria: tuple[str, ...]
    items: tuple[str, ...]
    item_system: tuple[str, ...]
    human_item: np.ndarray  # (n_rows,) int index into items
    human_reviewer: np.ndarray  # (n_rows,) reviewer ids as str
    human_scores: np.ndarray  # (n_rows, n_criteria) float
    human_where: tuple[str, ...]  # per row: "file:line" for fault messages
    judges: tuple[str, ...]
    judge_scores: np.ndarray  # (n_items, n_judges, n_criteria) float
    judge_is_mean: bool = False  # True when the source gave only the judges' mean per item
    meta: dict[str, Any] = field(default_factory=dict)
    faults: list[Fault] = field(default_factory=list)

    def __post_init__(self) -> None:
        n_rows = len(self.human_item)
        if self.human_scores.shape != (n_rows, len(self.criteria)):
            raise ValueError("human_scores must be (n_rows, n_criteria)")
        if len(self.human_reviewer) != n_rows or len(self.human_where) != n_rows:
            raise ValueError("human_reviewer/human_where must have one entry per row")
        expect = (len(self.items), len(self.judges), len(self.criteria))
        if self.judge_scores.shape != expect:
            raise ValueError(f"judge_scores must be {expect}, got {self.judge_scores.shape}")
        if len(self.item_system) != len(self.items):
            raise ValueError("item_system must have one entry per item")


@dataclass
class Paired:
    """Dense arrays after a pairing policy; what every statistic reads.

    H[i, r, c]: the r-th human score of item i on criterion c (left-packed, NaN padded).
    J[i, k, c]: judge k's score of item i on criterion c.
    hh_diffs[c]: the |human - human| differences the policy pairs for the MLR-Bench test.
    R[i, r]: the reviewer of slot r of item i (index into `reviewers`), -1 for an empty slot;
    what the leave-one-reviewer-out statistics (alt-test, human-likeness) group by.
    """

    policy: str
    rule: str
    criteria: tuple[str, ...]
    items: tuple[str, ...]
    item_system: tuple[str, ...]
    H: np.ndarray
    J: np.ndarray
    judges: tuple[str, ...]
    judge_is_mean: bool
    hh_diffs: list[np.ndarray]
    faults: list[Fault]
    meta: dict[str, Any] = field(default_factory=dict)
    R: np.ndarray | None = None
    reviewers: tuple[str, ...] = ()
    items_total: int = 0  # items in the data before the policy set any aside (coverage)

    def reviewer_slots(self) -> np.ndarray:
        """R, or one distinct pseudo-reviewer per slot when the source gave no identities."""
        if self.R is not None:
            return self.R
        n, k = self.H.shape[:2]
        return np.where(np.all(np.isnan(self.H), axis=2), -1, np.arange(k)[None, :].repeat(n, axis=0))
