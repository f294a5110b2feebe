"""The alt-test re-derived by hand on a small table (the authors' procedure, step by step),
Benjamini-Yekutieli, human-likeness, and the verdict rule on constructed cases of each outcome."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from agreement.data.containers import AgreementData
from agreement.data.pairing import pair
from agreement.stats.alt_test import alt_test, alt_test_combined, benjamini_yekutieli, human_likeness
from agreement.stats.suite import analyse
from agreement.stats.verdict import (
    BIASED,
    BIASED_ONLY,
    NOT_SHOWN,
    REPLACE,
    SMALL_STUDY,
    UNDERPOWERED,
    WORSE,
    decide,
)

# item -> {reviewer: score}; judge score per item. Items 6 and 7 have one review only.
TABLE = {
    0: {"ann": 5, "bob": 6, "cy": 5},
    1: {"ann": 7, "bob": 7},
    2: {"ann": 3, "cy": 4},
    3: {"bob": 8, "cy": 6, "ann": 7},
    4: {"ann": 2, "bob": 4, "cy": 3},
    5: {"bob": 6, "cy": 6},
    6: {"ann": 9},
    7: {"cy": 1},
    8: {"ann": 6, "bob": 5, "cy": 8},
    9: {"ann": 4, "bob": 4, "cy": 5},
}
JUDGE = {0: 5, 1: 6, 2: 4, 3: 7, 4: 3, 5: 7, 6: 8, 7: 2, 8: 6, 9: 4}
NAMES = ("ann", "bob", "cy")


def _arrays(table: dict, judge: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = len(table)
    H = np.full((n, 3), np.nan)
    R = np.full((n, 3), -1, dtype=np.int64)
    for i, revs in table.items():
        for s, (who, score) in enumerate(revs.items()):
            H[i, s], R[i, s] = score, NAMES.index(who)
    return H, R, np.array([judge[i] for i in range(n)], dtype=float)


def _by_hand(table: dict, judge: dict, epsilon: float, q: float, min_items: int) -> dict:
    """The procedure as the paper describes it, on plain dicts."""
    keep = [i for i, revs in table.items() if len(revs) >= 2 and i in judge]
    out = {}
    for h in NAMES:
        mine = [i for i in keep if h in table[i]]
        if len(mine) < min_items:
            continue
        w_judge, w_human = [], []
        for i in mine:
            rest = [v for who, v in table[i].items() if who != h]
            human_align = -math.sqrt(sum((table[i][h] - v) ** 2 for v in rest) / len(rest))
            judge_align = -math.sqrt(sum((judge[i] - v) ** 2 for v in rest) / len(rest))
            w_judge.append(1 if judge_align >= human_align else 0)
            w_human.append(1 if human_align >= judge_align else 0)
        d = [a - b for a, b in zip(w_human, w_judge, strict=True)]
        p = sps.ttest_1samp(d, epsilon, alternative="less").pvalue
        out[h] = {"p": float(p), "rho": sum(w_judge) / len(w_judge), "items": len(mine)}
    # Benjamini-Yekutieli step-up, written out.
    m = len(out)
    c_m = sum(1 / k for k in range(1, m + 1))
    ranked = sorted(out, key=lambda h: out[h]["p"])
    last = 0
    for k, h in enumerate(ranked, start=1):
        if out[h]["p"] <= k / m * q / c_m:
            last = k
    winners = set(ranked[:last])
    return {
        "omega": len(winners) / m,
        "rho": sum(x["rho"] for x in out.values()) / m,
        "winners": winners,
        "per": out,
    }


@pytest.mark.parametrize("epsilon", [0.1, 0.2, 0.5])
def test_it_matches_the_alt_test_worked_by_hand(epsilon) -> None:
    H, R, j = _arrays(TABLE, JUDGE)
    rec = alt_test(H, R, j, NAMES, epsilon=epsilon, alpha=0.05, min_items=4)
    ref = _by_hand(TABLE, JUDGE, epsilon, 0.05, 4)
    assert rec["estimate"] == pytest.approx(ref["omega"])
    assert rec["extra"]["rho"] == pytest.approx(ref["rho"])
    per = {x["reviewer"]: x for x in rec["extra"]["per_reviewer"]}
    assert set(per) == set(ref["per"])
    for h, x in ref["per"].items():
        assert per[h]["items"] == x["items"]
        assert per[h]["rho_judge"] == pytest.approx(x["rho"])
        assert per[h]["p"] == pytest.approx(x["p"])
    assert {h for h, x in per.items() if x["judge_wins"]} == ref["winners"]
    assert rec["extra"]["passed"] == (ref["omega"] >= 0.5)
    assert rec["n"]["items"] == 8  # the two single-review items are left out


def test_it_works_with_two_humans_per_item() -> None:
    kept = [i for i, revs in TABLE.items() if len(revs) >= 2]
    two = {n: dict(list(TABLE[i].items())[:2]) for n, i in enumerate(kept)}
    judge = {n: JUDGE[i] for n, i in enumerate(kept)}
    H, R, j = _arrays(two, judge)
    rec = alt_test(H, R, j, NAMES, epsilon=0.2, alpha=0.05, min_items=3)
    ref = _by_hand(two, judge, 0.2, 0.05, 3)
    assert rec["n"]["reviewers_tested"] == len(ref["per"]) >= 2
    assert rec["estimate"] == pytest.approx(ref["omega"]) and rec["extra"]["rho"] == pytest.approx(ref["rho"])


def test_it_says_when_reviewers_have_fewer_items_than_it_needs() -> None:
    H, R, j = _arrays(TABLE, JUDGE)
    rec = alt_test(H, R, j, NAMES, epsilon=0.1, alpha=0.05)  # the authors' 30
    assert math.isnan(rec["estimate"])
    assert "needs at least 30 items per reviewer" in rec["note"] and "the most any reviewer has is 7" in rec["note"]
    assert rec["n"]["reviewers_skipped"] == 3
    # One human per item: nothing to leave one out of.
    single = alt_test(H[:, :1], R[:, :1], j, NAMES, epsilon=0.1, alpha=0.05, min_items=1)
    assert "at least two human scores" in single["note"]


def test_it_decides_a_tie_free_constant_difference_by_its_mean() -> None:
    """Judge identical to every reviewer: every comparison ties, d = 0 throughout, no variance."""
    H = np.tile(np.array([[4.0, 4.0, 4.0]]), (6, 1))
    R = np.tile(np.array([[0, 1, 2]]), (6, 1))
    rec = alt_test(H, R, np.full(6, 4.0), NAMES, epsilon=0.1, alpha=0.05, min_items=5)
    assert rec["estimate"] == 1.0 and rec["extra"]["rho"] == 1.0
    assert all("decided by the mean" in x["note"] for x in rec["extra"]["per_reviewer"])


def test_it_adjusts_like_benjamini_yekutieli() -> None:
    p = np.array([0.001, 0.02, 0.03, 0.2])
    adj, rejected = benjamini_yekutieli(p, 0.05)
    c = 1 + 1 / 2 + 1 / 3 + 1 / 4
    raw = [p[0] * 4 * c / 1, p[1] * 4 * c / 2, p[2] * 4 * c / 3, p[3] * 4 * c / 4]
    expect = np.minimum.accumulate(np.array(raw)[::-1])[::-1].clip(max=1)
    assert adj == pytest.approx(expect)
    assert rejected.tolist() == (expect <= 0.05).tolist()


# --- constructed campaigns -------------------------------------------------------------------------


def _campaign(judge: str, n_items: int = 60, seed: int = 0) -> AgreementData:
    """Three reviewers score every item: quality + noise; the judge as asked."""
    rng = np.random.default_rng(seed)
    quality = rng.uniform(2.5, 8.5, n_items)
    humans = np.clip(np.rint(quality[:, None] + rng.normal(0, 1.0, (n_items, 3))), 1, 10)
    if judge == "close":  # closer to the reviewers' consensus than any one reviewer is
        j = np.clip(np.rint(humans.mean(axis=1)), 1, 10)
    elif judge == "shifted":  # the same, two points too generous
        j = np.clip(np.rint(humans.mean(axis=1)) + 2, 1, 10)
    elif judge == "random":
        j = rng.integers(1, 11, n_items).astype(float)
    else:
        raise ValueError(judge)
    return AgreementData(
        criteria=("Overall",),
        items=tuple(f"i{i}" for i in range(n_items)),
        item_system=tuple("s" for _ in range(n_items)),
        human_item=np.repeat(np.arange(n_items), 3),
        human_reviewer=np.tile(np.array(NAMES), n_items),
        human_scores=humans.reshape(-1, 1),
        human_where=tuple(f"r{k}" for k in range(n_items * 3)),
        judges=("judge",),
        judge_scores=j.reshape(n_items, 1, 1),
    )


def _cell(data: AgreementData, **kw) -> dict:
    result = analyse(pair(data, "strict"), **kw)
    (cell,) = result["verdict"]["cells"]
    return cell


def test_the_verdict_says_can_replace_for_a_judge_that_sits_at_the_consensus() -> None:
    cell = _cell(_campaign("close"))
    assert cell["verdict"] == REPLACE and cell["step"] == 2
    assert [n["label"] for n in cell["numbers"]][:2] == ["winning rate", "rho"]


def test_the_verdict_says_agrees_but_biased_for_a_shifted_judge() -> None:
    cell = _cell(_campaign("shifted"))
    assert cell["verdict"] == BIASED and cell["step"] == 3
    bias = next(n for n in cell["numbers"] if n["label"] == "bias")
    assert bias["value"] == pytest.approx(2.0, abs=0.3)


def test_the_verdict_says_worse_for_a_judge_that_guesses() -> None:
    cell = _cell(_campaign("random"))
    assert cell["verdict"] == WORSE and cell["step"] == 4


def test_a_small_study_is_decided_by_the_combined_test_and_tost_and_says_so() -> None:
    # 12 items: no reviewer reaches the per-reviewer test's 30, so the small-study tests decide.
    close = _cell(_campaign("close", n_items=12))
    assert close["test"] == SMALL_STUDY and close["verdict"] in (REPLACE, UNDERPOWERED)
    guessing = _cell(_campaign("random", n_items=12))
    assert guessing["test"] == SMALL_STUDY and guessing["verdict"] in (WORSE, UNDERPOWERED)
    shifted = _cell(_campaign("shifted", n_items=12))
    assert shifted["verdict"] in (BIASED, BIASED_ONLY, WORSE) and "off the human mean" in shifted["reason"]


def test_an_underpowered_cell_says_how_many_more_items_would_decide() -> None:
    view = _records(omega=math.nan, passed=False, worse=math.nan, p_bias=0.4)
    view["alt_test"]["note"] = "needs at least 30 items per reviewer"
    view["alt_test_combined"] = _rec(0.1, p=0.3, passed=False, worse=False, p_worse=0.5)
    view["tost_equivalence"] = _rec(
        0.3, ci=(-0.1, 0.7), margin=0.5, equivalent=False, outside=False, more_items_needed=42
    )
    cell = decide(view, alpha=0.05)
    assert cell["verdict"] == UNDERPOWERED and cell["step"] == 5
    assert "about 42 more items would decide it" in cell["reason"]
    view["tost_equivalence"] = _rec(
        0.1, ci=(-0.2, 0.3), margin=0.5, equivalent=True, outside=False, more_items_needed=0
    )
    view["alt_test_combined"] = _rec(-0.2, p=0.01, passed=True, worse=False, p_worse=0.9)
    assert decide(view, alpha=0.05)["verdict"] == REPLACE
    view["tost_equivalence"] = _rec(1.4, ci=(0.9, 1.9), margin=0.5, equivalent=False, outside=True, more_items_needed=0)
    view["alt_test_combined"] = _rec(0.4, p=0.9, passed=False, worse=False, p_worse=0.2)
    worse = decide(view, alpha=0.05)
    assert worse["verdict"] == WORSE and "above the ±0.5 margin" in worse["reason"]


def test_the_combined_test_pools_reviewers_per_item() -> None:
    H, R, j = _arrays(TABLE, JUDGE)
    rec = alt_test_combined(H, R, j, epsilon=0.1, alpha=0.05)
    # Items with two or more reviews and a judge score: 0, 1, 2, 3, 4, 5, 8, 9.
    assert rec["n"]["items"] == 8
    d = []
    for i in (0, 1, 2, 3, 4, 5, 8, 9):
        per = []
        for who, score in TABLE[i].items():
            rest = [v for w, v in TABLE[i].items() if w != who]
            human = -math.sqrt(sum((score - v) ** 2 for v in rest) / len(rest))
            judge = -math.sqrt(sum((JUDGE[i] - v) ** 2 for v in rest) / len(rest))
            per.append((human >= judge) - (judge >= human))
        d.append(sum(per) / len(per))
    assert rec["estimate"] == pytest.approx(np.mean(d))
    x = np.array(d) - 0.1
    x = x[x != 0]
    assert rec["p_value"] == pytest.approx(sps.wilcoxon(x, alternative="less", method="approx").pvalue)


def _rec(est: float, *, p: float = math.nan, ci: tuple[float, float] = (math.nan, math.nan), **extra) -> dict:
    return {
        "estimate": est, "p_value": p, "p_holm": math.nan, "note": "", "ci_low": ci[0], "ci_high": ci[1],
        "extra": extra,
    }  # fmt: skip


def _records(omega: float, passed: bool, worse: float, p_bias: float, shifted: bool = False) -> dict:
    def rec(est: float, **extra) -> dict:
        return _rec(est, **extra)

    return {
        "alt_test": rec(omega, passed=passed, rho=0.6, worse_rate=worse),
        "alt_test_bias_corrected": rec(omega, passed=shifted),
        "alt_test_combined": rec(math.nan),
        "tost_equivalence": rec(math.nan),
        "wilcoxon_signed_rank": {**rec(1.0), "p_value": p_bias, "p_holm": p_bias},
        "bias_judge_minus_humans": rec(0.3),
    }


def test_the_verdict_says_not_shown_when_the_evidence_is_inconclusive() -> None:
    cell = decide(_records(omega=0.34, passed=False, worse=0.0, p_bias=0.4), alpha=0.05)
    assert cell["verdict"] == NOT_SHOWN and cell["step"] == 5
    # A bias that is not significant does not make a failing judge "biased".
    assert decide(_records(0.0, False, 0.0, 0.4, shifted=True), alpha=0.05)["step"] == 5
    # Significant bias but passing as it scores: agrees but biased.
    assert decide(_records(0.67, True, 0.0, 0.001), alpha=0.05)["verdict"] == BIASED


def test_human_likeness_places_the_judge_in_the_reviewers_distribution() -> None:
    p = pair(_campaign("close", n_items=40), "strict")
    H, R, j = p.H[:, :, 0], p.reviewer_slots(), p.J[:, 0, 0]
    rec = human_likeness(H, R, j, p.reviewers, (1.0, 10.0))
    per = rec["extra"]["per_reviewer"]
    assert len(per) == 3
    hk = np.array([x["kappa_reviewer"] for x in per])
    jk = np.array([x["kappa_judge"] for x in per])
    assert rec["estimate"] == pytest.approx((jk.mean() - hk.mean()) / hk.std(ddof=1))
    assert rec["estimate"] > 1 and rec["extra"]["label"] == "more consistent than a typical reviewer"
    few = human_likeness(H[:3], R[:3], j[:3], p.reviewers, (1.0, 10.0))  # 6 pairs each
    assert "needs at least 3 reviewers with 10 or more score pairs" in few["note"]


@pytest.mark.parametrize("n_items", [2, 4, 6, 9])
def test_every_statistic_of_a_tiny_campaign_gives_a_number_or_says_why_not(n_items) -> None:
    """Fewer than 10 items: nothing raises, and no statistic is a silent blank."""
    result = analyse(pair(_campaign("close", n_items=n_items), "strict"), n_boot=50)
    block = result["criteria"]["Overall"]
    for group in (block["humans"], *block["views"].values()):
        for key, rec in group.items():
            assert not math.isnan(rec["estimate"]) or rec["note"], (n_items, key)
    (cell,) = result["verdict"]["cells"]
    assert cell["verdict"] in (NOT_SHOWN, UNDERPOWERED, REPLACE) and cell["reason"]
    if n_items < 6:  # the small-study tests need six items with two reviews
        assert cell["verdict"] == NOT_SHOWN and "30 items per reviewer" in cell["reason"]


def test_scipys_by_rejects_exactly_what_the_step_up_rule_rejects() -> None:
    rng = np.random.default_rng(3)
    for _ in range(200):
        p = rng.uniform(0, 0.1, rng.integers(1, 12))
        m, c = len(p), sum(1 / k for k in range(1, len(p) + 1))
        order = np.argsort(p)
        below = [k for k in range(m) if p[order[k]] <= (k + 1) / m * 0.05 / c]
        expect = np.zeros(m, dtype=bool)
        if below:
            expect[order[: below[-1] + 1]] = True
        assert benjamini_yekutieli(p, 0.05)[1].tolist() == expect.tolist()


def test_it_decides_bias_by_the_holm_corrected_p_not_the_raw_one() -> None:
    """Raw p 0.02 is significant at 0.05; Holm across three criteria makes it 0.06, which is not."""
    records = _records(omega=0.67, passed=True, worse=0.0, p_bias=0.02)
    records["wilcoxon_signed_rank"]["p_holm"] = 0.06
    cell = decide(records, alpha=0.05)
    assert cell["verdict"] == REPLACE and cell["step"] == 2
    assert next(n for n in cell["numbers"] if n["label"] == "bias p (Holm)")["value"] == 0.06


def _three_criteria(seed: int, bumped: float, n_items: int = 60) -> AgreementData:
    """Three criteria; the judge sits at the consensus but adds a point on a share of criterion A's items."""
    rng = np.random.default_rng(seed)
    quality = rng.uniform(2.5, 8.5, (n_items, 3))
    humans = np.clip(np.rint(quality[:, None, :] + rng.normal(0, 1.0, (n_items, 3, 3))), 1, 10)
    j = np.clip(np.rint(humans.mean(axis=1)), 1, 10)
    bump = rng.random(n_items) < bumped
    j[bump, 0] = np.clip(j[bump, 0] + 1, 1, 10)
    return AgreementData(
        criteria=("A", "B", "C"),
        items=tuple(f"i{i}" for i in range(n_items)),
        item_system=tuple("s" for _ in range(n_items)),
        human_item=np.repeat(np.arange(n_items), 3),
        human_reviewer=np.tile(np.array(NAMES), n_items),
        human_scores=humans.reshape(-1, 3),
        human_where=tuple(f"r{k}" for k in range(n_items * 3)),
        judges=("judge",),
        judge_scores=j.reshape(n_items, 1, 3),
    )


def test_the_verdict_holm_corrects_the_bias_test_across_criteria() -> None:
    """Criterion A's bias is significant alone (raw p < 0.05) but not once corrected for three
    criteria: the verdict must say 'can replace', and the p it shows is the corrected one."""
    result = analyse(pair(_three_criteria(seed=4, bumped=0.2), "strict"), n_boot=50)
    views = result["criteria"]["A"]["views"]
    wil = views[next(iter(views))]["wilcoxon_signed_rank"]
    raw = [result["criteria"][c]["views"][next(iter(views))]["wilcoxon_signed_rank"]["p_value"] for c in "ABC"]
    assert wil["p_value"] < 0.05 <= wil["p_holm"]
    assert wil["p_holm"] == pytest.approx(min(1.0, 3 * min(raw)))
    cell = next(c for c in result["verdict"]["cells"] if c["criterion"] == "A")
    assert cell["verdict"] == REPLACE, cell
    assert next(n for n in cell["numbers"] if n["label"] == "bias p (Holm)")["value"] == wil["p_holm"]
