"""Pairing policies: which human rows are compared with which.

`strict` (default) is vectorised so the benchmark can include it; `mlrbench` mirrors the
MLR-Bench authors' notebook (human_eval/compute_agreement_score.ipynb) row for row, faults
included, so that its numbers can be reproduced and contrasted with the strict ones.
"""

from __future__ import annotations

import numpy as np

from agreement.data.containers import AgreementData, Fault, Paired

STRICT_RULE = (
    "strict: when one reviewer has several rows for the same item, all of those rows are set "
    "aside (nothing tells which one is genuine; a duplicate is most likely a mislabelled review "
    "of another item). Items left with fewer than two distinct reviewers, or without any judge "
    "score, are set aside from every comparison, so that the human-human ceiling and the judge "
    "comparison are measured on the same items. Human-human differences: every pair of distinct "
    "reviewers of an item; human-judge differences: every kept human review against the judge."
)

MLRBENCH_RULE = (
    "mlrbench: the MLR-Bench authors' analysis as released. Per item and per pair of distinct "
    "reviewers, human-human differences are taken row by row when both reviewers have the same "
    "number of rows for that item, and the pair contributes nothing otherwise; human-judge "
    "differences are taken over every human row (duplicates included) against the judges' mean "
    "for its item. Items with a single review still count on the human-judge side."
)

POLICIES = ("strict", "mlrbench")


def _judged_items(data: AgreementData) -> np.ndarray:
    """Items with at least one judge score on any criterion."""
    return ~np.all(np.isnan(data.judge_scores), axis=(1, 2))


def _item_faults(data: AgreementData, judged: np.ndarray, reviewed: np.ndarray) -> list[Fault]:
    faults: list[Fault] = []
    for i in np.flatnonzero(reviewed & ~judged):
        faults.append(
            Fault(
                "no_judge_score",
                data.items[i],
                "human reviews but no judge score: set aside",
            )
        )
    for i in np.flatnonzero(judged & ~reviewed):
        faults.append(
            Fault(
                "no_human_review",
                data.items[i],
                "judge scores but no human review: set aside",
            )
        )
    return faults


def _pack(
    n_items: int, item_of_row: np.ndarray, scores: np.ndarray, order_key: np.ndarray, reviewer: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Left-pack rows into H[item, slot, criterion], slots in `order_key` order per item, and
    R[item, slot]: the reviewer (index into the data's reviewer codes) of each slot, -1 empty."""
    n_crit = scores.shape[1]
    if len(item_of_row) == 0:
        return np.full((n_items, 0, n_crit), np.nan), np.full((n_items, 0), -1, dtype=np.int64)
    order = np.lexsort((order_key, item_of_row))
    s_items = item_of_row[order]
    counts = np.bincount(s_items, minlength=n_items)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    slot = np.arange(len(order)) - starts[s_items]
    H = np.full((n_items, int(counts.max()), n_crit), np.nan)
    H[s_items, slot] = scores[order]
    R = np.full((n_items, int(counts.max())), -1, dtype=np.int64)
    R[s_items, slot] = reviewer[order]
    return H, R


def _reviewer_codes(data: AgreementData) -> tuple[tuple[str, ...], np.ndarray]:
    names, codes = np.unique(data.human_reviewer, return_inverse=True)
    return tuple(str(n) for n in names), codes.reshape(-1).astype(np.int64)


def _all_pair_diffs(H: np.ndarray) -> list[np.ndarray]:
    """|h_a - h_b| for every pair of filled slots a < b, per criterion."""
    n_slots = H.shape[1]
    out = []
    for c in range(H.shape[2]):
        parts = [np.abs(H[:, a, c] - H[:, b, c]) for a in range(n_slots) for b in range(a + 1, n_slots)]
        d = np.concatenate(parts) if parts else np.empty(0)
        out.append(d[~np.isnan(d)])
    return out


def pair_strict(data: AgreementData) -> Paired:
    n_items = len(data.items)
    reviewer_names, rev_codes = _reviewer_codes(data)
    key = data.human_item.astype(np.int64) * (int(rev_codes.max(initial=0)) + 1) + rev_codes
    _, inv, counts = np.unique(key, return_inverse=True, return_counts=True)
    dup = counts[inv.reshape(-1)] > 1
    faults = list(data.faults)
    seen: set[int] = set()
    for r in np.flatnonzero(dup):
        g = int(inv.reshape(-1)[r])
        if g in seen:
            continue
        seen.add(g)
        rows = np.flatnonzero(inv.reshape(-1) == g)
        faults.append(
            Fault(
                "duplicate_review",
                data.items[data.human_item[r]],
                f"reviewer {data.human_reviewer[r]} has {len(rows)} rows "
                f"({', '.join(data.human_where[x] for x in rows)}): all set aside",
            )
        )
    keep = ~dup
    n_reviewers = np.bincount(data.human_item[keep], minlength=n_items)
    judged = _judged_items(data)
    reviewed = np.bincount(data.human_item, minlength=n_items) > 0
    faults += _item_faults(data, judged, reviewed)
    for i in np.flatnonzero(reviewed & (n_reviewers < 2)):
        faults.append(
            Fault(
                "single_review",
                data.items[i],
                f"{int(n_reviewers[i])} usable review(s) after the duplicate rule: set aside",
            )
        )
    included = judged & (n_reviewers >= 2)
    new_index = np.cumsum(included) - 1
    rows = keep & included[data.human_item]
    H, R = _pack(
        int(included.sum()),
        new_index[data.human_item[rows]],
        data.human_scores[rows],
        np.flatnonzero(rows),
        rev_codes[rows],
    )
    return Paired(
        policy="strict",
        rule=STRICT_RULE,
        criteria=data.criteria,
        items=tuple(np.asarray(data.items, dtype=object)[included]),
        item_system=tuple(np.asarray(data.item_system, dtype=object)[included]),
        H=H,
        J=data.judge_scores[included],
        judges=data.judges,
        judge_is_mean=data.judge_is_mean,
        hh_diffs=_all_pair_diffs(H),
        faults=faults,
        meta=dict(data.meta),
        R=R,
        reviewers=reviewer_names,
        items_total=n_items,
    )


def pair_mlrbench(data: AgreementData) -> Paired:
    n_items = len(data.items)
    judged = _judged_items(data)
    reviewed = np.bincount(data.human_item, minlength=n_items) > 0
    faults = list(data.faults) + _item_faults(data, judged, reviewed)
    included = judged & reviewed
    new_index = np.cumsum(included) - 1
    rows = included[data.human_item]
    row_ids = np.flatnonzero(rows)
    reviewer_names, rev_codes = _reviewer_codes(data)
    H, R = _pack(
        int(included.sum()),
        new_index[data.human_item[rows]],
        data.human_scores[rows],
        row_ids,
        rev_codes[rows],
    )
    # The authors' rule, per item and reviewer pair, in file order (a loop over items, as the
    # notebook does; only the file command uses this policy).
    by_item: dict[int, dict[str, list[int]]] = {}
    for r in row_ids:
        by_item.setdefault(int(data.human_item[r]), {}).setdefault(str(data.human_reviewer[r]), []).append(int(r))
    n_crit = len(data.criteria)
    hh: list[list[np.ndarray]] = [[] for _ in range(n_crit)]
    for item, groups in by_item.items():
        reviewers = list(groups)
        for a in range(len(reviewers)):
            for b in range(a + 1, len(reviewers)):
                ra, rb = groups[reviewers[a]], groups[reviewers[b]]
                if len(ra) != len(rb):
                    faults.append(
                        Fault(
                            "unequal_rows",
                            data.items[item],
                            f"reviewers {reviewers[a]} ({len(ra)} rows) and {reviewers[b]} "
                            f"({len(rb)} rows): pair contributes no human-human difference",
                        )
                    )
                    continue
                d = np.abs(data.human_scores[ra] - data.human_scores[rb])
                for c in range(n_crit):
                    hh[c].append(d[:, c])
        if len(reviewers) < 2:
            faults.append(
                Fault(
                    "single_review",
                    data.items[item],
                    "one reviewer: no human-human difference, still compared with the judge",
                )
            )
    hh_diffs = []
    for c in range(n_crit):
        d = np.concatenate(hh[c]) if hh[c] else np.empty(0)
        hh_diffs.append(d[~np.isnan(d)])
    return Paired(
        policy="mlrbench",
        rule=MLRBENCH_RULE,
        criteria=data.criteria,
        items=tuple(np.asarray(data.items, dtype=object)[included]),
        item_system=tuple(np.asarray(data.item_system, dtype=object)[included]),
        H=H,
        J=data.judge_scores[included],
        judges=data.judges,
        judge_is_mean=data.judge_is_mean,
        hh_diffs=hh_diffs,
        faults=faults,
        meta=dict(data.meta),
        R=R,
        reviewers=reviewer_names,
        items_total=n_items,
    )


def pair(data: AgreementData, policy: str = "strict") -> Paired:
    if policy == "strict":
        return pair_strict(data)
    if policy == "mlrbench":
        return pair_mlrbench(data)
    raise ValueError(f"unknown pairing policy {policy!r}; choose one of {', '.join(POLICIES)}")
