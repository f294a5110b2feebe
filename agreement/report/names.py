"""Plain names for the statistics' identifiers, and the groups the report shows them in.

The identifier stays the key in JSON and CSV (and the tooltip on the page); readers see the name.
"""

from __future__ import annotations

NAMES = {
    # replacement and human-likeness
    "alt_test": "Alt-test winning rate",
    "alt_test_bias_corrected": "Alt-test winning rate, judge's mean bias removed",
    "human_likeness_z": "Human-likeness z-score",
    # bias
    "wilcoxon_signed_rank": "Bias test (Wilcoxon signed-rank)",
    "bias_judge_minus_humans": "Mean bias (judge minus human mean)",
    "tost_equivalence": "Equivalence test of the excess disagreement (TOST)",
    "excess_disagreement": "Excess disagreement (judge-reviewer minus reviewer-reviewer distance)",
    # plain agreement and the kappa family
    "percent_agreement": "Exact agreement (share of pairs), within one point in details",
    "kappa_linear": "Cohen's kappa, linear weights",
    "kappa_quadratic": "Cohen's kappa, quadratic weights",
    "scott_pi": "Scott's pi",
    "fleiss_kappa_with_judge": "Fleiss' kappa, reviewers and judge",
    "gwet_ac2_with_judge": "Gwet's AC2, reviewers and judge",
    "percent_agreement_human_human": "Exact agreement between reviewers, within one point in details",
    "kappa_linear_human_human": "Cohen's kappa between reviewers, linear weights",
    "kappa_quadratic_human_human": "Cohen's kappa between reviewers, quadratic weights",
    "scott_pi_human_human": "Scott's pi between reviewers",
    "fleiss_kappa": "Fleiss' kappa (reviewers)",
    "gwet_ac2": "Gwet's AC2 (reviewers)",
    # correlation and error
    "spearman": "Spearman correlation with the human mean",
    "kendall": "Kendall's tau-b with the human mean",
    "pearson": "Pearson correlation with the human mean",
    "rmse": "RMSE against the human mean",
    "mad_judge_human_mean": "Mean absolute difference from the human mean",
    "ceiling": "Gap to the reviewer-reviewer ceiling (Spearman)",
    "spearman_h1_h2": "Spearman correlation, reviewer 1 vs 2",
    "kendall_h1_h2": "Kendall's tau-b, reviewer 1 vs 2",
    "pearson_h1_h2": "Pearson correlation, reviewer 1 vs 2",
    "rmse_h1_h2": "RMSE, reviewer 1 vs 2",
    "mad_human_human": "Mean absolute difference between reviewers",
    # reliability
    "alpha_ordinal": "Krippendorff's alpha, ordinal (reviewers)",
    "alpha_interval": "Krippendorff's alpha, interval (reviewers)",
    "alpha_ordinal_with_judge": "Krippendorff's alpha, ordinal, reviewers and judge",
    "alpha_interval_with_judge": "Krippendorff's alpha, interval, reviewers and judge",
    "icc_1_1": "ICC(1,1), reviewer 1 vs 2",
    "icc_1_1_with_judge": "ICC(1,1), reviewers and judge",
    "icc_2_1_judge_vs_human_mean": "ICC(2,1), judge vs human mean",
    # MLR-Bench's test
    "mlrbench_mann_whitney_u": "MLR-Bench test (Mann-Whitney U of the differences)",
    "mlrbench_human_human_differences": "Mean reviewer-reviewer difference (MLR-Bench pairs)",
    # decision view
    "decision_at_threshold": "Accept/reject accuracy at the threshold",
    "auroc": "AUROC of the judge's score for the human decision",
    "coverage": "Coverage (items compared of all items)",
}

VIEW_GROUPS = (
    ("Replacement", ("alt_test", "alt_test_bias_corrected", "human_likeness_z")),
    ("Bias", ("wilcoxon_signed_rank", "bias_judge_minus_humans", "excess_disagreement", "tost_equivalence")),
    (
        "Agreement on the scale",
        (
            "percent_agreement",
            "kappa_linear",
            "kappa_quadratic",
            "scott_pi",
            "fleiss_kappa_with_judge",
            "gwet_ac2_with_judge",
        ),
    ),  # fmt: skip
    ("Correlation and error", ("spearman", "kendall", "pearson", "rmse", "mad_judge_human_mean", "ceiling")),
    (
        "Reliability",
        ("alpha_ordinal_with_judge", "alpha_interval_with_judge", "icc_1_1_with_judge", "icc_2_1_judge_vs_human_mean"),
    ),  # fmt: skip
    ("Decision at the threshold", ("decision_at_threshold", "auroc")),
    ("MLR-Bench's test", ("mlrbench_mann_whitney_u",)),
    ("Coverage", ("coverage",)),
)

HUMAN_GROUPS = (
    ("Agreement on the scale", ("percent_agreement_human_human", "kappa_linear_human_human",
                                "kappa_quadratic_human_human", "scott_pi_human_human", "fleiss_kappa", "gwet_ac2")),
    ("Correlation and error", ("spearman_h1_h2", "kendall_h1_h2", "pearson_h1_h2", "rmse_h1_h2", "mad_human_human",
                               "mlrbench_human_human_differences")),
    ("Reliability", ("alpha_ordinal", "alpha_interval", "icc_1_1")),
)  # fmt: skip

SETTING_NAMES = {
    "bootstrap_resamples": "bootstrap resamples",
    "bootstrap_seed": "bootstrap seed",
    "tost_margin": "TOST margin (points)",
    "alpha": "significance level alpha",
    "alt_test_epsilon": "alt-test cost margin epsilon",
    "alt_test_min_items": "alt-test: items a reviewer needs",
    "decision_threshold": "decision threshold (accept when score >=)",
    "confidence": "confidence level",
    "holm_families": "Holm-corrected tests",
    "holm_across": "Holm correction across",
    "scipy": "scipy",
    "numpy": "numpy",
    "python": "Python",
}


def name(key: str) -> str:
    return NAMES.get(key, key.replace("_", " "))


def grouped(stats: dict, groups: tuple) -> list[tuple[str, list[str]]]:
    """(group title, keys present) in display order; keys no group names go last."""
    out, seen = [], set()
    for title, keys in groups:
        present = [k for k in keys if k in stats]
        seen.update(present)
        if present:
            out.append((title, present))
    rest = [k for k in stats if k not in seen]
    if rest:
        out.append(("Other", rest))
    return out
