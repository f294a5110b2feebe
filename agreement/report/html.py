"""The report body in HTML, shared by the in-app page and the self-contained file: the verdict
table first, then a table of contents, coverage, provenance, faults, disagreement tags and one
section per criterion. Everything here reads the `analyse()` result; every value is escaped.
"""

from __future__ import annotations

import datetime as dt
import html
import math
from typing import Any

from agreement.report.names import HUMAN_GROUPS, SETTING_NAMES, VIEW_GROUPS, grouped, name

esc = html.escape

LICENSE_NOTE = "MLR-Bench data: chchenhui/mlrbench, MIT licence (see ../shared/mlrbench/LICENSE)."

CSS = """
body{font-family:system-ui,sans-serif;margin:2rem;color:#222;max-width:1200px}
table{border-collapse:collapse;margin:.5rem 0 1.5rem;font-size:.85rem}
td,th{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:#f3f3f3} .charts{display:grid;grid-template-columns:1fr 1fr;gap:.5rem}
.reading{background:#f7f7fb;border-left:4px solid #557;padding:.5rem 1rem}
code{font-size:.85rem} h2{border-bottom:2px solid #333;margin-top:2.5rem}
[title]{text-decoration:underline dotted #999}
table.verdict td{min-width:11rem} table.verdict td a{display:block;color:inherit;text-decoration:none}
.v-replace{background:#e3f4e1} .v-biased{background:#fff4d6} .v-worse{background:#fbe1e1}
.v-not_shown{background:#eef0f3} .v-numbers{font-size:.78rem;color:#444} .v-reason{font-size:.75rem;color:#666}
tr.group th{background:#e6e9ef;text-align:left} dl.provenance dt{font-weight:600;margin-top:.35rem}
dl.provenance dd{margin-left:1.2rem} nav.toc ol{columns:2} .progress{background:#eef5fb;padding:.5rem 1rem}
@media print{body{margin:0;max-width:none}.charts{grid-template-columns:1fr 1fr}
 section.criterion{page-break-before:always} .chart,table,.reading{page-break-inside:avoid}}
"""

MISSES = (
    "The MLR-Bench test asks whether |judge - human| differences are distributed like "
    "|human - human| ones. It pools differences that are not independent (two per item), "
    "a non-significant p is not evidence of agreement, and two sets of differences can match "
    "while the judge is biased or ranks items differently. The verdict above instead rests on the "
    "alternative annotator test (can the judge stand in for a left-out reviewer?) and the judge's "
    "bias; the sections below add ranking (Spearman, Kendall), the kappa family, reliability "
    "(Krippendorff's alpha, ICC), equivalence (TOST), the decision view and the human-human ceiling."
)


def fmt(x: Any, digits: int = 3) -> str:
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return str(x)
    if isinstance(x, float):
        if math.isnan(x):
            return "-"
        if abs(x) >= 100 or float(x).is_integer():
            return f"{x:g}"
        return f"{x:.{digits}f}"
    return str(x)


def _named(key: str, names: dict[str, str] | None = None) -> str:
    shown = (names or {}).get(key) or name(key)
    return f"<span title='identifier: {esc(key)}'>{esc(shown)}</span>"


def view_label(view: str) -> str:
    return "mean of the judges" if view == "judges_mean" else view.removeprefix("judge:")


# --- verdict -----------------------------------------------------------------------------------


def verdict_html(result: dict[str, Any]) -> str:
    v = result["verdict"]
    views = result["views"]
    by = {(c["criterion"], c["view"]): c for c in v["cells"]}
    head = "<tr><th>criterion</th>" + "".join(f"<th>{esc(view_label(x))}</th>" for x in views) + "</tr>"
    rows = []
    for crit in result["criteria"]:
        cells = []
        for view in views:
            cell = by[(crit, view)]
            nums = " · ".join(f"{esc(n['label'])} {esc(n['text'])}" for n in cell["numbers"])
            cells.append(
                f"<td class='v-{esc(cell['code'])}'><a href='#{esc(cell['anchor'])}' title='{esc(cell['reason'])}'>"
                f"<strong>{esc(cell['verdict'])}</strong><br><span class='v-numbers'>{nums}</span>"
                + f"<br><span class='v-reason'>{esc(cell['reason'])}</span>"
                + f"<br><span class='v-test muted'>decided by: {esc(cell.get('test', ''))}</span>"
                + "</a></td>"
            )
        rows.append(f"<tr><th>{esc(crit)}</th>{''.join(cells)}</tr>")
    rule = "".join(f"<li>{esc(line)}</li>" for line in v["rule"][1:])
    s = result["settings"]
    return (
        "<section id='verdict'><h2>Can the judge replace a reviewer?</h2>"
        f"<table class='verdict'>{head}{''.join(rows)}</table>"
        f"<p class='muted'>Each cell links to its evidence. epsilon = {fmt(s['alt_test_epsilon'])}, "
        f"alpha = {fmt(s['alpha'])}, decision threshold = {fmt(s['decision_threshold'])}.</p>"
        f"<details><summary>The rule: {esc(v['rule_version'])}</summary><p>{esc(v['rule'][0])}</p><ol>{rule}</ol>"
        "</details></section>"
    )


# --- tables ----------------------------------------------------------------------------------------


def _details(r: dict[str, Any]) -> str:
    skip = {"method", "reading", "per_reviewer", "skipped", "confusion", "left_out"}
    parts = [
        f"{k.replace('_', ' ')}={fmt(v)}"
        for k, v in r["extra"].items()
        if k not in skip and not isinstance(v, dict | list)
    ]
    text = r["note"] or "; ".join(parts)
    if r["note"] and parts:
        text += " (" + "; ".join(parts) + ")"
    if r["ci_method"]:
        text += f" (CI: {r['ci_method']})"
    if r["extra"].get("method"):
        text += f" Method: {r['extra']['method']}"
    return esc(text)


def stat_table(stats: dict[str, Any], groups: tuple, names: dict[str, str] | None = None, anchor: str = "stat") -> str:
    """One row per statistic record, grouped; `names` overrides the plain names (two-rater reports)."""
    return _stat_table(stats, groups, names, anchor)


def _stat_table(stats: dict[str, Any], groups: tuple, names: dict[str, str] | None = None, anchor: str = "stat") -> str:
    head = (
        "<tr><th>statistic</th><th>estimate</th><th>95% CI</th><th>p</th><th>p (Holm)</th><th>n</th>"
        "<th>note / details</th></tr>"
    )
    rows = []
    for title, keys in grouped(stats, groups):
        rows.append(f"<tr class='group'><th colspan='7'>{esc(title)}</th></tr>")
        for key in keys:
            r = stats[key]
            ci = "" if math.isnan(r["ci_low"]) else f"[{fmt(r['ci_low'])}, {fmt(r['ci_high'])}]"
            cells = (ci, fmt(r["p_value"], 4), fmt(r["p_holm"], 4), ", ".join(f"{k}={v}" for k, v in r["n"].items()))
            rows.append(
                f"<tr id='{esc(anchor)}-{esc(key)}'><td>{_named(key, names)}</td><td>{esc(fmt(r['estimate']))}</td>"
                + "".join(f"<td>{esc(x)}</td>" for x in cells)
                + f"<td>{_details(r)}</td></tr>"
            )
    return f"<table>{head}{''.join(rows)}</table>"


def _alt_table(rec: dict[str, Any]) -> str:
    per = rec["extra"].get("per_reviewer") or []
    skipped = rec["extra"].get("skipped") or []
    out = []
    if per:
        head = (
            "<tr><th>left-out reviewer</th><th>items</th><th>judge at least as close (rho_f)</th>"
            "<th>reviewer at least as close (rho_h)</th><th>p</th><th>p (BY)</th><th>judge wins</th>"
            "<th>reviewer significantly better</th></tr>"
        )
        body = "".join(
            "<tr>"
            + "".join(
                f"<td>{esc(fmt(x[k], 4 if k.startswith('p') else 3))}</td>"
                for k in (
                    "reviewer",
                    "items",
                    "rho_judge",
                    "rho_reviewer",
                    "p",
                    "p_by",
                    "judge_wins",
                    "reviewer_better",
                )
            )
            + "</tr>"
            for x in per
        )
        out.append(f"<table class='alt-test'>{head}{body}</table>")
    if skipped:
        text = ", ".join(f"{s['reviewer']} ({s['items']})" for s in skipped[:30])
        more = f" and {len(skipped) - 30} more" if len(skipped) > 30 else ""
        out.append(
            f"<p class='muted'>Reviewers with fewer than {rec['extra']['min_items_per_reviewer']} items, not tested "
            f"(items): {esc(text)}{more}.</p>"
        )
    return "".join(out)


def confusion_html(
    rec: dict[str, Any],
    cols: tuple[str, str] = ("humans accept", "humans reject"),
    rows: tuple[str, str] = ("judge accepts", "judge rejects"),
) -> str:
    """The confusion matrix of a decision record; `cols` name the reference's outcomes, `rows` the classifier's."""
    c = rec["extra"].get("confusion")
    if not c:
        return ""
    return (
        f"<table class='confusion'><tr><th></th><th>{esc(cols[0])}</th><th>{esc(cols[1])}</th></tr>"
        f"<tr><th>{esc(rows[0])}</th><td>{c['judge_accept_human_accept']}</td><td>{c['judge_accept_human_reject']}</td></tr>"
        f"<tr><th>{esc(rows[1])}</th><td>{c['judge_reject_human_accept']}</td><td>{c['judge_reject_human_reject']}</td></tr>"
        "</table>"
    )


def _confusion(rec: dict[str, Any]) -> str:
    return confusion_html(rec)


def _decision_line(d: dict[str, Any], a: dict[str, Any]) -> str:
    e = d["extra"]
    keys = ("accuracy", "balanced_accuracy", "precision", "recall", "f1", "false_positive_rate", "false_negative_rate")
    parts = [f"{k.replace('_', ' ')} {fmt(e.get(k, math.nan))}" for k in keys]
    parts.append(
        f"AUROC {fmt(a['estimate'])}"
        + (f" [{fmt(a['ci_low'])}, {fmt(a['ci_high'])}]" if not math.isnan(a["ci_low"]) else "")
    )
    note = " ".join(x for x in (d["note"], a["note"]) if x)
    return f"<p>At accept = score &gt;= {esc(fmt(e.get('threshold')))}: {esc(', '.join(parts))}. {esc(note)}</p>"


# --- readings and provenance -------------------------------------------------------------------


def _reading(view: dict[str, Any], humans: dict[str, Any], margin: float) -> str:
    mw, sp, tst = view["mlrbench_mann_whitney_u"], view["spearman"], view["tost_equivalence"]
    alt, like = view["alt_test"], view["human_likeness_z"]
    parts = []
    if not math.isnan(alt["estimate"]):
        parts.append(
            f"Alt-test: the judge replaces {fmt(alt['estimate'], 2)} of the tested reviewers "
            f"(passes at 0.5; rho {fmt(alt['extra']['rho'], 2)})."
        )
    else:
        parts.append(f"Alt-test: {alt['note']}.")
    if not math.isnan(like["estimate"]):
        parts.append(f"Human-likeness z = {fmt(like['estimate'], 2)} ({like['extra']['label']}).")
    wil, bias = view["wilcoxon_signed_rank"], view["bias_judge_minus_humans"]
    if not math.isnan(wil["p_value"]):
        parts.append(
            f"The judge scores {fmt(bias['estimate'])} points above the human mean on average "
            f"(Wilcoxon signed-rank p={fmt(wil['p_value'], 4)}, Holm {fmt(wil['p_holm'], 4)})."
        )
    if not math.isnan(tst["p_value"]):
        eq = "is shown" if tst["extra"].get("equivalent") else "is not shown"
        parts.append(
            f"Equivalence of the judge's excess disagreement within +/-{margin:g} points {eq} "
            f"(TOST p={fmt(tst['p_value'], 4)})."
        )
    if not math.isnan(sp["estimate"]):
        parts.append(
            f"Judge vs human mean: Spearman {fmt(sp['estimate'])} [{fmt(sp['ci_low'])}, {fmt(sp['ci_high'])}]; "
            f"reviewer vs reviewer: {fmt(humans['spearman_h1_h2']['estimate'])}."
        )
    if not math.isnan(mw["p_value"]):
        verdict = "no significant difference" if mw["p_value"] >= 0.05 else "a significant difference"
        parts.append(
            f"The MLR-Bench test finds {verdict} (U={fmt(mw['estimate'])}, p={fmt(mw['p_value'], 4)}); "
            "a non-significant result is not evidence of agreement."
        )
    return esc(" ".join(parts)) or "Not enough data for a reading."


def pinned_settings(result: dict[str, Any]) -> dict[str, Any]:
    """What a reader needs to recompute the report (values are strings, or lists of strings)."""
    s, st, meta = result["sizes"], result["settings"], result["meta"]
    settings = [
        f"{SETTING_NAMES.get(k, k)}: {', '.join(map(str, v)) if isinstance(v, list) else fmt(v)}" for k, v in st.items()
    ]
    sources = [f"{k}: sha256 {v}" for k, v in meta.get("sources_sha256", {}).items()]
    return {
        "campaign": meta.get("campaign", "files"),
        "pairing policy": result["pairing"]["policy"],
        "pairing rule": result["pairing"]["rule"],
        "verdict rule": result["verdict"]["rule_version"],
        "rubric version": meta.get("rubric_version", "not given"),
        "judge models": [str(m) for m in meta.get("judge_models", s["judges"])],
        "prompt hashes": [str(h) for h in meta.get("prompt_hashes", ["not given"])],
        "items / systems / human reviews": f"{s['items']} / {s['systems']} / {s['human_reviews']}",
        "criteria": ", ".join(s["criteria"]),
        "judge views": ", ".join(view_label(v) for v in result["views"]),
        "judge scores are means": fmt(bool(s["judge_scores_are_means"])),
        "settings": settings,
        "sources": sources or ["not given"],
        "generated": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }


def provenance_html(result: dict[str, Any]) -> str:
    items = []
    for k, v in pinned_settings(result).items():
        value = "<ul>" + "".join(f"<li>{esc(x)}</li>" for x in v) + "</ul>" if isinstance(v, list) else esc(v)
        items.append(f"<dt>{esc(k)}</dt><dd>{value}</dd>")
    return f"<dl class='provenance'>{''.join(items)}</dl>"


def _fault_rows(faults: list[dict[str, str]], *, plain_kind: bool = False) -> str:
    return "".join(
        f"<tr><td>{esc(f['kind'].replace('_', ' ') if plain_kind else f['kind'])}</td><td>{esc(f['where'])}</td>"
        f"<td>{esc(f['detail'])}</td></tr>"
        for f in faults
    )


def coverage_html(result: dict[str, Any], progress: dict[str, Any] | None) -> str:
    cov = result["coverage"]
    reasons = "".join(f"<li>{esc(k)}: {v} item(s)</li>" for k, v in cov["left_out"].items())
    head = f"<p>{cov['items_compared']} of {cov['items_total']} items are compared."
    if progress and progress.get("open"):
        head += " The campaign is open: items still waiting for reviews or judgments are progress, not faults."
    head += "</p>"
    parts = [head]
    if progress:
        parts.append(
            "<p class='progress'>"
            + esc(
                f"Progress: {progress['reviews_submitted']} of {progress['reviews_expected']} reviews submitted; "
                f"{progress['items_fully_reviewed']} of {progress['items']} items fully reviewed; "
                f"{progress['items_judged']} of {progress['items']} items judged"
                + (f"; {progress['judgments_pending']} judgment(s) pending" if progress["judgments_pending"] else "")
                + "."
            )
            + "</p>"
        )
    if reasons:
        parts.append(f"<ul>{reasons}</ul>")
    if cov["reasons"]:
        rows = _fault_rows(cov["reasons"], plain_kind=True)
        parts.append(
            f"<details><summary>Items not compared ({len(cov['reasons'])})</summary><table>{rows}</table></details>"
        )
    return "<section id='coverage'><h2>Coverage</h2>" + "".join(parts) + "</section>"


def tags_html(tags: dict[str, Any] | None) -> str:
    if not tags:
        return ""
    if not tags["total"]:
        return "<section id='tags'><h2>Disagreement tags</h2><p>No disagreement has been tagged yet.</p></section>"
    causes = tags["causes"]
    head = "<tr><th>criterion</th>" + "".join(f"<th>{esc(c)}</th>" for c in causes.values()) + "<th>total</th></tr>"
    rows = "".join(
        f"<tr><th>{esc(crit)}</th>"
        + "".join(f"<td>{counts.get(k, 0)}</td>" for k in causes)
        + f"<td>{sum(counts.values())}</td></tr>"
        for crit, counts in tags["by_criterion"].items()
    )
    return f"<section id='tags'><h2>Disagreement tags ({tags['total']})</h2><table>{head}{rows}</table></section>"


def toc_html(result: dict[str, Any], *, tags: bool) -> str:
    entries = [("verdict", "Verdict"), ("coverage", "Coverage"), ("provenance", "Settings and provenance")]
    if result["faults"]:
        entries.append(("faults", f"Data faults ({len(result['faults'])})"))
    if tags:
        entries.append(("tags", "Disagreement tags"))
    items = [f"<li><a href='#{a}'>{esc(t)}</a></li>" for a, t in entries]
    for c, crit in enumerate(result["criteria"]):
        subs = "".join(
            f"<li><a href='#evidence-{c}-{v}'>{esc(view_label(view))}</a></li>"
            for v, view in enumerate(result["views"])
        )
        items.append(
            f"<li><a href='#crit-{c}'>{esc(crit)}</a><ul><li><a href='#crit-{c}-humans'>reviewers</a></li>{subs}</ul></li>"
        )
    return f"<nav class='toc' id='toc'><h2>Contents</h2><ol>{''.join(items)}</ol></nav>"


def body_html(
    result: dict[str, Any], *, progress: dict[str, Any] | None = None, tags: dict[str, Any] | None = None
) -> str:
    """Everything after the verdict (and the page's settings form): shared by page and file."""
    margin = result["settings"]["tost_margin"]
    parts = [
        coverage_html(result, progress),
        f"<section id='provenance'><h2>Settings and provenance</h2><p>{esc(MISSES)}</p>{provenance_html(result)}</section>",
    ]
    if result["faults"]:
        rows = _fault_rows(result["faults"])
        parts.append(
            f"<section id='faults'><h2>Data faults ({len(result['faults'])})</h2>"
            f"<table><tr><th>kind</th><th>where</th><th>what was done</th></tr>{rows}</table></section>"
        )
    parts.append(tags_html(tags))
    main_view = result["views"][-1]
    for c, (crit, block) in enumerate(result["criteria"].items()):
        parts.append(f"<section class='criterion' id='crit-{c}'><h2>{esc(crit)}</h2>")
        parts.append(f"<p class='reading'>{_reading(block['views'][main_view], block['humans'], margin)}</p>")
        parts.append(
            "<div class='charts'>"
            + "".join(f"<div class='chart' id='agreement-chart-{c}-{k}'></div>" for k in range(4))
            + "</div>"
        )
        parts.append(
            f"<h3 id='crit-{c}-humans'>Reviewers among themselves</h3>" + _stat_table(block["humans"], HUMAN_GROUPS)
        )
        for v, (view, stats) in enumerate(block["views"].items()):
            parts.append(
                f"<h3 id='evidence-{c}-{v}'>Judge view: {esc(view_label(view))} <small>({esc(view)})</small></h3>"
            )
            cell = next(x for x in result["verdict"]["cells"] if x["criterion"] == crit and x["view"] == view)
            parts.append(
                f"<p class='reading'><strong>Verdict: {esc(cell['verdict'])}</strong> - {esc(cell['reason'])}.</p>"
            )
            parts.append(_alt_table(stats["alt_test"]))
            parts.append(
                _decision_line(stats["decision_at_threshold"], stats["auroc"])
                + _confusion(stats["decision_at_threshold"])
            )
            parts.append(_stat_table(stats, VIEW_GROUPS))
            flips = result["systems"][crit][view]["flips"]
            if flips:
                text = "; ".join(
                    f"{a} vs {b}: humans prefer {f['humans']}, judge {f['judge']}"
                    for f in flips
                    for a, b in [f["systems"]]
                )
                parts.append(f"<p>Ranking flips (humans vs judge): {esc(text)}</p>")
        parts.append("</section>")
    parts.append(f"<p><small>{esc(LICENSE_NOTE)}</small></p>")
    return "\n".join(p for p in parts if p)
