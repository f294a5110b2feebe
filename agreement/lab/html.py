"""HTML fragments of the judge lab's reports (escaped; the same tables as the agreement report)."""

from __future__ import annotations

import math
from typing import Any

from agreement.report.html import _decision_line, confusion_html, esc, fmt, stat_table
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


def two_rater_html(result: dict[str, Any]) -> str:
    a, b = result["raters"]["a"], result["raters"]["b"]
    parts = [f"<p class='reading'>{esc(result['reading'])}</p>"]
    left = "".join(f"<li><code>{esc(k)}</code> ({esc(name(k))}): {esc(v)}</li>" for k, v in result["left_out"].items())
    parts.append(
        f"<details><summary>Statistics of the suite that need more than two raters</summary><ul>{left}</ul></details>"
    )
    for crit, stats in result["criteria"].items():
        anchor = f"pair-{_slug(crit)}"
        d = stats["decision_at_threshold"]
        parts.append(
            f"<section class='criterion' id='{esc(anchor)}'><h2>{esc(crit)}</h2>"
            + stat_table(stats, RATER_GROUPS, RATER_NAMES, anchor=anchor)
            + _decision_line(d, stats["auroc"])
            + confusion_html(d, cols=(f"B ({b}) accepts", "B rejects"), rows=(f"A ({a}) accepts", "A rejects"))
            + _systems_html(result["systems"][crit], a, b)
            + "</section>"
        )
    return "".join(parts)


def _systems_html(block: dict[str, Any], a: str, b: str) -> str:
    rows = "".join(
        f"<tr><th>{esc(s['system'])}</th><td>{esc(fmt(s['judge_mean']))}</td><td>{esc(fmt(s['human_mean']))}</td>"
        f"<td>{esc(fmt(s['judge_rank']))}</td><td>{esc(fmt(s['human_rank']))}</td><td>{s['items']}</td></tr>"
        for s in block["systems"]
    )
    tau = block["rank_agreement"]
    flips = "; ".join(" vs ".join(f["systems"]) for f in block["flips"]) or "none"
    return (
        "<h3>Per model</h3><table><tr><th>model</th><th>A mean</th><th>B mean</th><th>A rank</th><th>B rank</th>"
        f"<th>items</th></tr>{rows}</table><p class='muted'>Rank agreement (Kendall's tau over models): "
        f"{esc(fmt(tau['estimate']))} {esc(tau['note'])}. Pairs ordered differently: {esc(flips)}.</p>"
    )


def records_html(records: dict[str, Any], title: str, anchor: str) -> str:
    """A table of statistic records keyed by criterion (probes)."""
    return stat_table(records, ((title, tuple(records)),), {k: k for k in records}, anchor=anchor)


def self_preference_judges_html(result: dict[str, Any]) -> str:
    if not result.get("judges"):
        return f"<p class='muted'>{esc(result.get('note', ''))}</p>"
    parts = [f"<p class='reading'>{esc(result['reading'])}</p>"]
    for judge, block in result["judges"].items():
        parts.append(f"<h3>{esc(judge)} <span class='muted'>(family {esc(block['family'])})</span></h3>")
        parts.append(records_html(block["criteria"], "criterion", f"self-{_slug(judge)}"))
    return "".join(parts)


def comparison_html(result: dict[str, Any]) -> str:
    gate = result["gate"]
    cells = "".join(
        f"<tr class='{'v-replace' if c['passed'] else 'v-worse'}'><th>{esc(c['criterion'])}</th>"
        f"<td>{'pass' if c['passed'] else 'fail'}</td><td>{esc(c['reason'])}</td></tr>"
        for c in gate["criteria"]
    )
    head = (
        f"<section id='gate'><h2>Gate: {'PASSED' if gate['passed'] else 'FAILED'}</h2>"
        f"<p>{esc(gate['mode'])} within {esc(fmt(gate['margin']))} on <code>{esc(gate['statistic'])}</code> "
        f"({esc(name(gate['statistic']))}; {esc(gate['direction'])} is better), every criterion.</p>"
        f"<table class='verdict'>{cells}</table></section>"
    )
    rows = []
    for r in result["statistics"]:
        ci = (
            ""
            if r["ci_low"] is None or (isinstance(r["ci_low"], float) and math.isnan(r["ci_low"]))
            else (f"[{fmt(r['ci_low'])}, {fmt(r['ci_high'])}]")
        )
        rows.append(
            f"<tr><th>{esc(r['criterion'])}</th><td title='{esc(r['statistic'])}'>{esc(name(r['statistic']))}</td>"
            f"<td>{esc(fmt(_num(r['baseline'])))}</td><td>{esc(fmt(_num(r['candidate'])))}</td>"
            f"<td>{esc(fmt(_num(r['change'])))}</td><td>{esc(ci)}</td><td>{r['resamples_defined']}</td></tr>"
        )
    table = (
        "<section id='changes'><h2>Every statistic: baseline, candidate, change (candidate - baseline)</h2>"
        "<table><tr><th>criterion</th><th>statistic</th><th>baseline</th><th>candidate</th><th>change</th>"
        f"<th>95% CI of the change</th><th>resamples defined</th></tr>{''.join(rows)}</table></section>"
    )
    return head + table


def _num(x: Any) -> float:
    return math.nan if x is None else float(x)


def decision_table_html(records: dict[str, dict[str, Any]], truth: str, predicted: str) -> str:
    """One row per kind: accuracy, precision, recall, FPR, FNR, n, and the confusion matrix."""
    rows = []
    for kind, rec in records.items():
        e = rec["extra"]
        values = [
            e.get(k, math.nan)
            for k in ("accuracy", "precision", "recall", "false_positive_rate", "false_negative_rate")
        ]
        rows.append(
            f"<tr><th>{esc(kind.replace('_', ' '))}</th>"
            + "".join(f"<td>{esc(fmt(_num(v)))}</td>" for v in values)
            + f"<td>{rec['n'].get('items', 0)}</td><td>{confusion_html(rec, cols=(f'{truth} yes', f'{truth} no'), rows=(f'{predicted} flags', f'{predicted} does not'))}"
            f"{esc(rec['note'])}</td></tr>"
        )
    return (
        "<table class='flags'><tr><th>kind</th><th>accuracy</th><th>precision</th><th>recall</th><th>FPR</th>"
        f"<th>FNR</th><th>papers</th><th>confusion</th></tr>{''.join(rows)}</table>"
    )
