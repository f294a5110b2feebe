"""Benchmark: the full agreement suite on 10,000 items x 5 criteria x (2 humans + 2 judges).

Run: python bench/agreement.py [--items N] [--repeat R]

Target (DESIGN.md): <= 3 s for the whole suite without bootstrap. The scores are synthetic
(a latent quality per item plus reviewer/judge noise and a judge bias) and are used only to
time the code; they are never shown as results of anything.

Compared in the same run with the obvious alternative: the MLR-Bench notebook's per-item loop
(pandas groupby + iterrows) for the difference vectors, and pingouin / krippendorff package
calls for ICC and alpha, checking that both give the same numbers.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from review.agreement import stats as st
from review.agreement.data import AgreementData
from review.agreement.pairing import pair_strict
from review.agreement.suite import analyse

CRITERIA = ("Novelty", "Clarity", "Soundness", "Significance", "Overall")


def synthetic(n_items: int, seed: int = 1) -> AgreementData:
    rng = np.random.default_rng(seed)
    n_crit = len(CRITERIA)
    quality = rng.normal(5.5, 1.5, (n_items, 1, n_crit))
    humans = np.clip(np.rint(quality + rng.normal(0, 1.2, (n_items, 2, n_crit))), 1, 10)
    bias = np.array([0.8, -0.4])[None, :, None]
    judges = np.clip(np.rint(quality + bias + rng.normal(0, 1.0, (n_items, 2, n_crit))), 1, 10)
    humans[rng.random(humans.shape) < 0.01] = np.nan  # a few missing scores
    reviewers = rng.integers(0, 200, (n_items, 2))
    reviewers[:, 1] = (reviewers[:, 0] + 1 + rng.integers(0, 198, n_items)) % 200
    return AgreementData(
        criteria=CRITERIA,
        items=tuple(f"item{i}" for i in range(n_items)),
        item_system=tuple(f"system{i % 20}" for i in range(n_items)),
        human_item=np.repeat(np.arange(n_items), 2),
        human_reviewer=reviewers.ravel().astype(str),
        human_scores=humans.reshape(n_items * 2, n_crit),
        human_where=tuple(f"row{i}" for i in range(n_items * 2)),
        judges=("judge_a", "judge_b"),
        judge_scores=judges,
    )


def timed(fn, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def notebook_loop(data: AgreementData) -> tuple[dict[str, list], dict[str, list]]:
    """The MLR-Bench notebook's approach: a DataFrame, groupby per paper, iterrows."""
    import pandas as pd

    judge_mean = np.nanmean(data.judge_scores, axis=1)
    df = pd.DataFrame(data.human_scores, columns=[f"{c}_human" for c in CRITERIA])
    df["reviewer_id"] = data.human_reviewer
    df["item"] = data.human_item
    for c, crit in enumerate(CRITERIA):
        df[f"{crit}_llm"] = judge_mean[data.human_item, c]
    hh: dict[str, list] = {c: [] for c in CRITERIA}
    hj: dict[str, list] = {c: [] for c in CRITERIA}
    for _, group in df.groupby("item"):
        reviewers = group["reviewer_id"].unique()
        if len(reviewers) >= 2:
            scores = [group[group["reviewer_id"] == r] for r in reviewers]
            for a in range(len(scores)):
                for b in range(a + 1, len(scores)):
                    for crit in CRITERIA:
                        v1, v2 = (
                            scores[a][f"{crit}_human"].values,
                            scores[b][f"{crit}_human"].values,
                        )
                        if len(v1) == len(v2):
                            hh[crit].extend(np.abs(v1 - v2))
        for _, row in group.iterrows():
            for crit in CRITERIA:
                hj[crit].append(abs(row[f"{crit}_human"] - row[f"{crit}_llm"]))
    return hh, hj


def package_calls(paired) -> dict[str, float]:
    """ICC via pingouin and alpha via the krippendorff package, as a straightforward
    implementation would call them (per criterion and judge view)."""
    import krippendorff
    import pandas as pd
    import pingouin as pg

    out: dict[str, float] = {}
    jm = np.nanmean(paired.J, axis=1)
    views = [("judge_a", paired.J[:, 0]), ("judge_b", paired.J[:, 1]), ("mean", jm)]
    n = len(paired.items)
    for c, crit in enumerate(CRITERIA):
        H = paired.H[:, :, c]
        for name, J in views:
            M = np.column_stack([H[:, 0], H[:, 1], J[:, c]])
            long = pd.DataFrame(
                {
                    "t": np.repeat(np.arange(n), 3),
                    "r": np.tile([0, 1, 2], n),
                    "s": M.ravel(),
                }
            )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                icc = pg.intraclass_corr(long, "t", "r", "s", nan_policy="omit").set_index("Type")
            out[f"{crit}/{name}/icc11"] = float(icc.loc["ICC(1,1)", "ICC"])
            for level in ("ordinal", "interval"):
                out[f"{crit}/{name}/alpha_{level}"] = float(
                    krippendorff.alpha(reliability_data=M.T, level_of_measurement=level)
                )
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    data = synthetic(args.items)
    print(f"{args.items} items x {len(CRITERIA)} criteria x (2 humans + 2 judges); "
          f"3 judge views (each judge, their mean); median of {args.repeat} runs")  # fmt: skip

    t_pair, paired = timed(lambda: pair_strict(data), args.repeat)
    t_suite, result = timed(lambda: analyse(paired), args.repeat)
    t_boot, result_b = timed(lambda: analyse(paired, n_boot=1000), max(1, args.repeat // 2))
    print(f"strict pairing (vectorised)                     {t_pair:8.3f} s")
    print(f"full suite, no bootstrap                        {t_suite:8.3f} s   (target <= 3 s)")
    print(f"pairing + suite, no bootstrap                   {t_pair + t_suite:8.3f} s")
    print(f"full suite, 1,000 bootstrap resamples           {t_boot:8.3f} s")

    t_loop, (hh, hj) = timed(lambda: notebook_loop(data), 1)
    ours_hh = sum(len(d) for d in paired.hh_diffs)
    print(f"alternative: notebook per-item loop, diffs only {t_loop:8.3f} s   "
          f"({t_loop / t_pair:.0f}x our pairing; {sum(map(len, hh.values()))} with NaN vs {ours_hh} NaN-dropped "
          "human-human differences)")  # fmt: skip
    ref_u = st.mann_whitney(np.asarray(hh["Overall"], dtype=float), np.asarray(hj["Overall"], dtype=float))["estimate"]
    ours_u = result["criteria"]["Overall"]["views"]["judges_mean"]["mlrbench_mann_whitney_u"]
    print(f"  same Mann-Whitney U on Overall: loop {ref_u:.1f} vs ours {ours_u['estimate']:.1f}")

    t_pkg, ref = timed(lambda: package_calls(paired), 1)
    t_own, _ = timed(
        lambda: [
            (st.icc(np.column_stack([paired.H[:, 0, c], paired.H[:, 1, c], J[:, c]]), "1,1"),
             st.krippendorff_alpha(np.column_stack([paired.H[:, :, c], J[:, c]]), "ordinal"),
             st.krippendorff_alpha(np.column_stack([paired.H[:, :, c], J[:, c]]), "interval"))
            for c in range(len(CRITERIA))
            for J in (paired.J[:, 0], paired.J[:, 1], np.nanmean(paired.J, axis=1))
        ],
        args.repeat,
    )  # fmt: skip
    print(f"alternative: pingouin ICC + krippendorff alpha  {t_pkg:8.3f} s   "
          f"(ours for the same 15 x (ICC, 2 alphas): {t_own:.3f} s, {t_pkg / t_own:.0f}x)")  # fmt: skip
    worst = 0.0
    for c, crit in enumerate(CRITERIA):
        J = np.nanmean(paired.J, axis=1)[:, c]
        M = np.column_stack([paired.H[:, 0, c], paired.H[:, 1, c], J])
        for level in ("ordinal", "interval"):
            ours = st.krippendorff_alpha(M, level)["estimate"]
            worst = max(worst, abs(ours - ref[f"{crit}/mean/alpha_{level}"]))
    print(f"  largest |alpha ours - krippendorff package| over criteria: {worst:.2e}")
    mad = result_b["criteria"]["Overall"]["views"]["judges_mean"]["mad_judge_human_mean"]
    print(f"  e.g. Overall MAD {mad['estimate']:.3f} [{mad['ci_low']:.3f}, {mad['ci_high']:.3f}]"
          f" ({mad['ci_method']})")  # fmt: skip


if __name__ == "__main__":
    main()
