"""What the report's templates show, as plain values: the verdict table first, then a table of
contents, coverage, provenance, faults, disagreement tags and one section per criterion. Shared by
the in-app page and the self-contained file (templates/agreement/report/). Everything here reads the
`analyse()` result and returns text and numbers, never markup: the templates escape every value.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

from agreement.report.names import HUMAN_GROUPS, SETTING_NAMES, VIEW_GROUPS, grouped, name

LICENSE_NOTE = "MLR-Bench data: chchenhui/mlrbench, MIT licence (see ../shared/mlrbench/LICENSE)."

MISSES = (
    "The MLR-Bench test asks whether |judge - human| differences are distributed like "
    "|human - human| ones. It pools differences that are not independent (two per item), "
    "a non-significant p is not evidence of agreement, and two sets of differences can match "
    "while the judge is biased or ranks items differently. The verdict above instead rests on the "
    "alternative annotator test (can the judge stand in for a left-out reviewer?) and the judge's "
    "bias; the sections below add ranking (Spearman, Kendall), the kappa family, reliability "
    "(Krippendorff's alpha, ICC), equivalence (TOST), the decision view and the human-human ceiling."
)

ALT_COLUMNS = ("reviewer", "items", "rho_judge", "rho_reviewer", "p", "p_by", "judge_wins", "reviewer_better")


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


def view_label(view: str) -> str:
    return "mean of the judges" if view == "judges_mean" else view.removeprefix("judge:")


# --- verdict -----------------------------------------------------------------------------------


def verdict_context(result: dict[str, Any]) -> dict[str, Any]:
    """The verdict table (templates/agreement/report/_verdict.html): a row per criterion, a cell per view."""
    v = result["verdict"]
    by = {(c["criterion"], c["view"]): c for c in v["cells"]}
    rows = []
    for crit in result["criteria"]:
        cells = []
        for view in result["views"]:
            cell = by[(crit, view)]
            numbers = " · ".join(f"{n['label']} {n['text']}" for n in cell["numbers"])
            cells.append({**cell, "numbers_text": numbers, "test": cell.get("test", "")})
        rows.append({"criterion": crit, "cells": cells})
    s = result["settings"]
    return {
        "views": [view_label(x) for x in result["views"]],
        "rows": rows,
        "epsilon": fmt(s["alt_test_epsilon"]),
        "alpha": fmt(s["alpha"]),
        "threshold": fmt(s["decision_threshold"]),
        "rule_version": v["rule_version"],
        "rule_intro": v["rule"][0],
        "rule_steps": v["rule"][1:],
    }


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
    return text


def stat_table(
    stats: dict[str, Any], groups: tuple, names: dict[str, str] | None = None, anchor: str = "stat"
) -> list[dict[str, Any]]:
    """One row per statistic record, grouped (templates/agreement/report/_stat_table.html);
    `names` overrides the plain names (two-rater reports)."""
    out = []
    for title, keys in grouped(stats, groups):
        rows = []
        for key in keys:
            r = stats[key]
            rows.append(
                {
                    "id": f"{anchor}-{key}",
                    "key": key,
                    "name": (names or {}).get(key) or name(key),
                    "estimate": fmt(r["estimate"]),
                    "ci": "" if math.isnan(r["ci_low"]) else f"[{fmt(r['ci_low'])}, {fmt(r['ci_high'])}]",
                    "p": fmt(r["p_value"], 4),
                    "p_holm": fmt(r["p_holm"], 4),
                    "n": ", ".join(f"{k}={v}" for k, v in r["n"].items()),
                    "details": _details(r),
                }
            )
        out.append({"title": title, "rows": rows})
    return out


def alt_table(rec: dict[str, Any]) -> dict[str, Any]:
    """The alt-test's per-reviewer rows and the reviewers it could not test."""
    per = rec["extra"].get("per_reviewer") or []
    skipped = rec["extra"].get("skipped") or []
    rows = [[fmt(x[k], 4 if k.startswith("p") else 3) for k in ALT_COLUMNS] for x in per]
    text = ", ".join(f"{s['reviewer']} ({s['items']})" for s in skipped[:30])
    more = f" and {len(skipped) - 30} more" if len(skipped) > 30 else ""
    return {
        "rows": rows,
        "skipped": f"{text}{more}" if skipped else "",
        "min_items": rec["extra"].get("min_items_per_reviewer"),
    }


def confusion(
    rec: dict[str, Any],
    cols: tuple[str, str] = ("humans accept", "humans reject"),
    rows: tuple[str, str] = ("judge accepts", "judge rejects"),
) -> dict[str, Any] | None:
    """The confusion matrix of a decision record; `cols` name the reference's outcomes, `rows` the classifier's."""
    c = rec["extra"].get("confusion")
    if not c:
        return None
    return {
        "cols": cols,
        "rows": [
            (rows[0], c["judge_accept_human_accept"], c["judge_accept_human_reject"]),
            (rows[1], c["judge_reject_human_accept"], c["judge_reject_human_reject"]),
        ],
    }


def decision_line(d: dict[str, Any], a: dict[str, Any]) -> str:
    e = d["extra"]
    keys = ("accuracy", "balanced_accuracy", "precision", "recall", "f1", "false_positive_rate", "false_negative_rate")
    parts = [f"{k.replace('_', ' ')} {fmt(e.get(k, math.nan))}" for k in keys]
    parts.append(
        f"AUROC {fmt(a['estimate'])}"
        + (f" [{fmt(a['ci_low'])}, {fmt(a['ci_high'])}]" if not math.isnan(a["ci_low"]) else "")
    )
    note = " ".join(x for x in (d["note"], a["note"]) if x)
    return f"At accept = score >= {fmt(e.get('threshold'))}: {', '.join(parts)}. {note}"


# --- readings and provenance -------------------------------------------------------------------


def reading(view: dict[str, Any], humans: dict[str, Any], margin: float) -> str:
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
    return " ".join(parts) or "Not enough data for a reading."


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


def _faults(faults: list[dict[str, str]], *, plain_kind: bool = False) -> list[tuple[str, str, str]]:
    return [(f["kind"].replace("_", " ") if plain_kind else f["kind"], f["where"], f["detail"]) for f in faults]


def coverage(result: dict[str, Any], progress: dict[str, Any] | None) -> dict[str, Any]:
    cov = result["coverage"]
    text = None
    if progress:
        text = (
            f"Progress: {progress['reviews_submitted']} of {progress['reviews_expected']} reviews submitted; "
            f"{progress['items_fully_reviewed']} of {progress['items']} items fully reviewed; "
            f"{progress['items_judged']} of {progress['items']} items judged"
            + (f"; {progress['judgments_pending']} judgment(s) pending" if progress["judgments_pending"] else "")
            + "."
        )
    return {
        "compared": cov["items_compared"],
        "total": cov["items_total"],
        "open": bool(progress and progress.get("open")),
        "progress": text,
        "left_out": list(cov["left_out"].items()),
        "reasons": _faults(cov["reasons"], plain_kind=True),
    }


def tags(summary: dict[str, Any] | None) -> dict[str, Any] | None:
    """The disagreement tags per criterion and cause, or None where the report has no tags."""
    if not summary:
        return None
    causes = summary["causes"]
    rows = [
        (crit, [counts.get(k, 0) for k in causes], sum(counts.values()))
        for crit, counts in summary["by_criterion"].items()
    ]
    return {"total": summary["total"], "causes": list(causes.values()), "rows": rows}


def toc(result: dict[str, Any], *, tags: bool) -> dict[str, Any]:
    entries = [("verdict", "Verdict"), ("coverage", "Coverage"), ("provenance", "Settings and provenance")]
    if result["faults"]:
        entries.append(("faults", f"Data faults ({len(result['faults'])})"))
    if tags:
        entries.append(("tags", "Disagreement tags"))
    criteria = [
        {"index": c, "name": crit, "views": [(v, view_label(view)) for v, view in enumerate(result["views"])]}
        for c, crit in enumerate(result["criteria"])
    ]
    return {"entries": entries, "criteria": criteria}


def _view_section(result: dict[str, Any], c: int, crit: str, v: int, view: str, stats: dict[str, Any]) -> dict:
    cell = next(x for x in result["verdict"]["cells"] if x["criterion"] == crit and x["view"] == view)
    flips = result["systems"][crit][view]["flips"]
    return {
        "id": f"evidence-{c}-{v}",
        "label": view_label(view),
        "view": view,
        "verdict": cell["verdict"],
        "reason": cell["reason"],
        "alt": alt_table(stats["alt_test"]),
        "decision": decision_line(stats["decision_at_threshold"], stats["auroc"]),
        "confusion": confusion(stats["decision_at_threshold"]),
        "table": stat_table(stats, VIEW_GROUPS),
        "flips": "; ".join(
            f"{a} vs {b}: humans prefer {f['humans']}, judge {f['judge']}" for f in flips for a, b in [f["systems"]]
        ),
    }


def criterion(result: dict[str, Any], c: int) -> dict[str, Any]:
    """One criterion's section: its reading, chart slots, the reviewers' table and one block per judge
    view (templates/agreement/report/_criterion.html); the page fetches it when the section is opened."""
    crit = list(result["criteria"])[c]
    block = result["criteria"][crit]
    return {
        **criterion_stub(result, c),
        "charts": [f"agreement-chart-{c}-{k}" for k in range(4)],
        "humans": stat_table(block["humans"], HUMAN_GROUPS),
        "views": [
            _view_section(result, c, crit, v, view, stats) for v, (view, stats) in enumerate(block["views"].items())
        ],
    }


def criterion_stub(result: dict[str, Any], c: int) -> dict[str, Any]:
    """What the page shows of a criterion before it is opened: its name and the main view's reading."""
    crit = list(result["criteria"])[c]
    block = result["criteria"][crit]
    main_view = result["views"][-1]
    return {
        "index": c,
        "name": crit,
        "reading": reading(block["views"][main_view], block["humans"], result["settings"]["tost_margin"]),
    }


def body(
    result: dict[str, Any],
    *,
    progress: dict[str, Any] | None = None,
    tags_summary: dict[str, Any] | None = None,
    evidence: bool = True,
) -> dict[str, Any]:
    """Everything after the verdict (and the page's settings form): shared by page and file. Without
    `evidence` (the in-app page) each criterion is only its stub; its evidence comes with `criterion`."""
    section = criterion if evidence else criterion_stub
    return {
        "coverage": coverage(result, progress),
        "misses": MISSES,
        "provenance": [(k, v, isinstance(v, list)) for k, v in pinned_settings(result).items()],
        "faults": _faults(result["faults"]),
        "tags": tags(tags_summary),
        "criteria": [section(result, c) for c in range(len(result["criteria"]))],
        "license": LICENSE_NOTE,
    }


def report(
    result: dict[str, Any],
    *,
    progress: dict[str, Any] | None = None,
    tags_summary: dict[str, Any] | None = None,
    evidence: bool = True,
) -> dict[str, Any]:
    """Verdict, contents and body: the context of the report's three templates
    (templates/agreement/report/_verdict.html, _toc.html, _body.html)."""
    return {
        "verdict": verdict_context(result),
        "toc": toc(result, tags=tags_summary is not None),
        "body": body(result, progress=progress, tags_summary=tags_summary, evidence=evidence),
    }
