"""What the judge lab's report templates show (templates/agreement/lab/_*.html), as plain values:
the same tables as the agreement report (agreement/report/context.py). Text and numbers only; the
templates escape every value.
"""

from __future__ import annotations

import math
from typing import Any

from agreement.report.context import confusion, decision_line, fmt, stat_table
from agreement.report.names import name

RATER_NAMES = {
    "percent_agreement": "Exact agreement (share of items), within one point in details",
    "fleiss_kappa": "Fleiss' kappa (two raters)",
    "gwet_ac2": "Gwet's AC2 (two raters)",
    "spearman": "Spearman correlation",
    "kendall": "Kendall's tau-b",
    "pearson": "Pearson correlation",
    "rmse": "RMSE between the raters",
    "mad": "Mean absolute difference",
    "alpha_ordinal": "Krippendorff's alpha, ordinal",
    "alpha_interval": "Krippendorff's alpha, interval",
    "icc_1_1": "ICC(1,1)",
    "icc_2_1": "ICC(2,1), absolute agreement",
    "bias_a_minus_b": "Mean bias (A minus B)",
    "wilcoxon_signed_rank": "Bias test (Wilcoxon signed-rank, A vs B)",
    "decision_at_threshold": "Accept/reject accuracy (B as the reference)",
    "auroc": "AUROC of A's score for B's decision",
    "coverage": "Coverage (items both scored)",
}
RATER_GROUPS = (
    ("Agreement on the scale", ("percent_agreement", "kappa_linear", "kappa_quadratic", "scott_pi", "fleiss_kappa",
                                "gwet_ac2")),
    ("Correlation and error", ("spearman", "kendall", "pearson", "rmse", "mad")),
    ("Reliability", ("alpha_ordinal", "alpha_interval", "icc_1_1", "icc_2_1")),
    ("Bias", ("bias_a_minus_b", "wilcoxon_signed_rank")),
    ("Decision at the threshold", ("decision_at_threshold", "auroc")),
    ("Coverage", ("coverage",)),
)  # fmt: skip


def _slug(text: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in text.lower()).strip("-")


def _num(x: Any) -> float:
    return math.nan if x is None else float(x)


def _systems(block: dict[str, Any]) -> dict[str, Any]:
    tau = block["rank_agreement"]
    return {
        "rows": [
            (
                s["system"],
                fmt(s["judge_mean"]),
                fmt(s["human_mean"]),
                fmt(s["judge_rank"]),
                fmt(s["human_rank"]),
                s["items"],
            )
            for s in block["systems"]
        ],
        "tau": fmt(tau["estimate"]),
        "tau_note": tau["note"],
        "flips": "; ".join(" vs ".join(f["systems"]) for f in block["flips"]) or "none",
    }


def two_rater(result: dict[str, Any]) -> dict[str, Any]:
    """Judge A vs judge B (templates/agreement/lab/_two_rater.html)."""
    a, b = result["raters"]["a"], result["raters"]["b"]
    criteria = []
    for crit, stats in result["criteria"].items():
        anchor = f"pair-{_slug(crit)}"
        d = stats["decision_at_threshold"]
        criteria.append(
            {
                "anchor": anchor,
                "name": crit,
                "table": stat_table(stats, RATER_GROUPS, RATER_NAMES, anchor=anchor),
                "decision": decision_line(d, stats["auroc"]),
                "confusion": confusion(
                    d, cols=(f"B ({b}) accepts", "B rejects"), rows=(f"A ({a}) accepts", "A rejects")
                ),
                "systems": _systems(result["systems"][crit]),
            }
        )
    return {
        "reading": result["reading"],
        "left_out": [(k, name(k), v) for k, v in result["left_out"].items()],
        "criteria": criteria,
    }


def records(recs: dict[str, Any], title: str, anchor: str) -> list[dict[str, Any]]:
    """A table of statistic records keyed by criterion (probes), for report/_stat_table.html."""
    return stat_table(recs, ((title, tuple(recs)),), {k: k for k in recs}, anchor=anchor)


def self_preference_judges(result: dict[str, Any]) -> dict[str, Any]:
    """Each judge's self-preference against the other (templates/agreement/lab/_self_preference.html)."""
    return {
        "note": result.get("note", ""),
        "reading": result.get("reading", ""),
        "judges": [
            {
                "name": judge,
                "family": block["family"],
                "table": records(block["criteria"], "criterion", f"self-{_slug(judge)}"),
            }
            for judge, block in (result.get("judges") or {}).items()
        ],
    }


def comparison(result: dict[str, Any]) -> dict[str, Any]:
    """The gate and every statistic's change (templates/agreement/lab/_comparison.html)."""
    gate = result["gate"]
    rows = []
    for r in result["statistics"]:
        undefined = r["ci_low"] is None or (isinstance(r["ci_low"], float) and math.isnan(r["ci_low"]))
        rows.append(
            {
                "criterion": r["criterion"],
                "statistic": r["statistic"],
                "name": name(r["statistic"]),
                "baseline": fmt(_num(r["baseline"])),
                "candidate": fmt(_num(r["candidate"])),
                "change": fmt(_num(r["change"])),
                "ci": "" if undefined else f"[{fmt(r['ci_low'])}, {fmt(r['ci_high'])}]",
                "resamples": r["resamples_defined"],
            }
        )
    return {
        "gate": {
            "passed": gate["passed"],
            "mode": gate["mode"],
            "margin": fmt(gate["margin"]),
            "statistic": gate["statistic"],
            "statistic_name": name(gate["statistic"]),
            "direction": gate["direction"],
            "criteria": gate["criteria"],
        },
        "rows": rows,
    }


def decision_table(recs: dict[str, dict[str, Any]], truth: str, predicted: str) -> list[dict[str, Any]]:
    """One row per kind: accuracy, precision, recall, FPR, FNR, n, and the confusion matrix
    (templates/agreement/lab/_decision_table.html)."""
    rows = []
    for kind, rec in recs.items():
        e = rec["extra"]
        keys = ("accuracy", "precision", "recall", "false_positive_rate", "false_negative_rate")
        rows.append(
            {
                "kind": kind.replace("_", " "),
                "values": [fmt(_num(e.get(k, math.nan))) for k in keys],
                "items": rec["n"].get("items", 0),
                "confusion": confusion(
                    rec, cols=(f"{truth} yes", f"{truth} no"), rows=(f"{predicted} flags", f"{predicted} does not")
                ),
                "note": rec["note"],
            }
        )
    return rows


def probe_tables(key: str, probe: dict[str, Any]) -> list[list[dict[str, Any]]]:
    """The statistic tables of one bias probe of an experiment, each for report/_stat_table.html."""
    crit = probe.get("criteria") or {}
    if key == "stability":
        return [records(crit, "within-item SD", key)]
    if key == "leniency":
        return [
            records({c: v["shift"] for c, v in crit.items()}, "mean shift (judge - human mean)", key),
            records(
                {c: v["test"] for c, v in crit.items()}, "Wilcoxon signed-rank (Holm across criteria)", f"{key}-test"
            ),
        ]
    if key == "length":
        return [
            records({c: v["slope_per_1000_words"] for c, v in crit.items()}, "slope per 1,000 words", key),
            records({c: v["spearman"] for c, v in crit.items()}, "Spearman (residual vs words)", f"{key}-rho"),
        ]
    if key == "self_preference":
        return [records(crit, f"own family ({probe['judge_family']}) minus the others", key)]
    if key == "position":
        return [
            records(
                {"consistency": probe["consistency"], "first position": probe["first_position_rate"]}, "position", key
            )
        ]
    return []
