"""Exports of an agreement analysis: a terminal table, JSON, CSV, and a self-contained HTML
report (templates/agreement/report/standalone.html: the vendored plotly.js, the page script and the
report's stylesheet from static/ inlined, no URL outside the file, printable to PDF). The HTML body
is the in-app page's (agreement/report/context.py and its templates), the charts charts.py's.

Everything here reads the `analyse()` result; charts also read the `Paired` arrays.
"""

from __future__ import annotations

import io
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
from django.contrib.staticfiles import finders
from django.template.loader import render_to_string
from django.utils.safestring import SafeString, mark_safe

from agreement.data.containers import Paired
from agreement.report import context
from agreement.report.charts import chart_payload
from agreement.report.context import fmt as _fmt
from benchmark.csv_tables import CsvDictWriter, CsvWriter

PLOTLY_JS = "vendor/plotly.min.js"  # `manage.py vendor_static` copies it from the plotly package
AGREEMENT_JS = "js/agreement.js"
REPORT_CSS = "css/agreement_report.css"

# Columns of the terminal table: (header, view key, field or callable)
TABLE_STATS = (
    ("MW U", "mlrbench_mann_whitney_u", "estimate"),
    ("MW p", "mlrbench_mann_whitney_u", "p_value"),
    ("n hh", "mlrbench_mann_whitney_u", ("n", "human_human")),
    ("n hj", "mlrbench_mann_whitney_u", ("n", "human_judge")),
    ("r_rb", "mlrbench_mann_whitney_u", ("extra", "rank_biserial")),
    ("Wilc p", "wilcoxon_signed_rank", "p_value"),
    ("bias", "bias_judge_minus_humans", "estimate"),
    ("rho", "spearman", "estimate"),
    ("tau", "kendall", "estimate"),
    ("a_int+J", "alpha_interval_with_judge", "estimate"),
    ("ICC2,1", "icc_2_1_judge_vs_human_mean", "estimate"),
    ("MAD", "mad_judge_human_mean", "estimate"),
    ("excess", "excess_disagreement", "estimate"),
    ("TOST p", "tost_equivalence", "p_value"),
    ("alt w", "alt_test", "estimate"),
    ("alt rho", "alt_test", ("extra", "rho")),
    ("qwk", "kappa_quadratic", "estimate"),
    ("exact", "percent_agreement", "estimate"),
    ("AUROC", "auroc", "estimate"),
)


def _get(rec: dict[str, Any], field: str | tuple[str, str]) -> Any:
    if isinstance(field, tuple):
        return rec.get(field[0], {}).get(field[1], math.nan)
    return rec.get(field, math.nan)


def clean_json(obj: Any) -> Any:
    """NaN/inf -> null and numpy scalars -> Python, so the JSON is strict."""
    if isinstance(obj, dict):
        return {str(k): clean_json(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [clean_json(v) for v in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def to_json(result: dict[str, Any]) -> str:
    return json.dumps(clean_json(result), indent=2, allow_nan=False)


def _rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    # The verdict first, as everywhere: one row per criterion and judge view.
    rows = [
        {
            "criterion": c["criterion"],
            "view": c["view"],
            "key": "verdict",
            "statistic": c["verdict"],
            "note": c["reason"],
            "extra": json.dumps(
                clean_json({"rule_version": result["verdict"]["rule_version"], "numbers": c["numbers"]})
            ),
        }
        for c in result["verdict"]["cells"]
    ]
    for crit, block in result["criteria"].items():
        groups = [("humans", block["humans"])] + list(block["views"].items())
        for group, stats in groups:
            for key, rec in stats.items():
                rows.append(
                    {
                        "criterion": crit,
                        "view": group,
                        "key": key,
                        "statistic": rec["statistic"],
                        "estimate": rec["estimate"],
                        "ci_low": rec["ci_low"],
                        "ci_high": rec["ci_high"],
                        "ci_method": rec["ci_method"],
                        "p_value": rec["p_value"],
                        "p_holm": rec["p_holm"],
                        "n": json.dumps(rec["n"], sort_keys=True),
                        "note": rec["note"],
                        "extra": json.dumps(clean_json(rec["extra"]), sort_keys=True),
                    }
                )
        for view, sysres in result["systems"][crit].items():
            for s in sysres["systems"]:
                rows.append(
                    {
                        "criterion": crit,
                        "view": view,
                        "key": f"system:{s['system']}",
                        "statistic": "system_means",
                        "estimate": s["judge_mean"] - s["human_mean"],
                        "n": json.dumps({"items": s["items"]}),
                        "extra": json.dumps(clean_json(s), sort_keys=True),
                    }
                )
    return rows


CSV_FIELDS = (
    *(
        "criterion",
        "view",
        "key",
        "statistic",
        "estimate",
        "ci_low",
        "ci_high",
        "ci_method",
    ),
    *("p_value", "p_holm", "n", "note", "extra"),
)


def to_csv(result: dict[str, Any]) -> str:
    buf = io.StringIO()
    # The provenance line is one quoted cell: its JSON holds names from users (campaign, judges),
    # and written raw a comma in one would start a new spreadsheet cell, a formula if `=` follows.
    settings = json.dumps(clean_json(result["settings"]), sort_keys=True)
    meta = json.dumps(clean_json(result["meta"]), sort_keys=True)
    CsvWriter(buf).writerow([f"# pairing={result['pairing']['policy']}; settings={settings}; meta={meta}"])
    w = CsvDictWriter(buf, fieldnames=CSV_FIELDS, extrasaction="ignore")
    w.writeheader()
    for row in _rows(result):
        w.writerow({k: ("" if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()})
    return buf.getvalue()


def verdict_lines(result: dict[str, Any]) -> list[str]:
    """The verdict table in plain text: one line per criterion and judge view, then the rule."""
    v = result["verdict"]
    width = max((len(c["criterion"]) + len(c["view"]) for c in v["cells"]), default=10) + 3
    lines = [f"verdict ({v['rule_version']}):"]
    for c in v["cells"]:
        nums = ", ".join(f"{n['label']} {n['text']}" for n in c["numbers"])
        lines.append(f"  {(c['criterion'] + ' / ' + c['view']).ljust(width)} {c['verdict']:<30} {nums}; {c['reason']}")
    lines += [f"  {line}" for line in v["rule"]]
    return lines


def to_table(result: dict[str, Any]) -> str:
    lines = [
        (
            f"pairing: {result['pairing']['policy']}  items: {result['sizes']['items']}  "
            f"human reviews: {result['sizes']['human_reviews']}  judges: "
            f"{', '.join(result['sizes']['judges'])}  bootstrap: "
            f"{result['settings']['bootstrap_resamples']}  TOST margin: "
            f"+/-{result['settings']['tost_margin']}  alt-test epsilon: "
            f"{result['settings']['alt_test_epsilon']}  threshold: {result['settings']['decision_threshold']}"
        ),
        "",
        *verdict_lines(result),
        "",
    ]
    heads = ["criterion", "view"] + [h for h, _, _ in TABLE_STATS]
    body = []
    for crit, block in result["criteria"].items():
        for view, stats in block["views"].items():
            body.append([crit, view] + [_fmt(_get(stats[k], f)) for _, k, f in TABLE_STATS])
        hb = block["humans"]
        body.append(
            [crit, "humans only"]
            + ["" for _ in TABLE_STATS[:7]]
            + [
                _fmt(hb["spearman_h1_h2"]["estimate"]),
                _fmt(hb["kendall_h1_h2"]["estimate"]),
            ]
            + [_fmt(hb["alpha_interval"]["estimate"]), _fmt(hb["icc_1_1"]["estimate"])]
            + [_fmt(hb["mad_human_human"]["estimate"]), "", ""]
            + ["", "", _fmt(hb["kappa_quadratic_human_human"]["estimate"])]
            + [_fmt(hb["percent_agreement_human_human"]["estimate"]), ""]
        )
    widths = [max(len(str(r[i])) for r in [heads, *body]) for i in range(len(heads))]
    for r in [heads, *body]:
        lines.append("  ".join(str(c).rjust(w) for c, w in zip(r, widths, strict=True)))
    notes = sorted(
        {
            f"{crit}/{view}/{k}: {rec['note']}"
            for crit, block in result["criteria"].items()
            for view, stats in [("humans", block["humans"]), *block["views"].items()]
            for k, rec in stats.items()
            if rec["note"]
        }
    )
    if notes:
        lines += ["", "notes:"] + [f"  {n}" for n in notes]
    if result["faults"]:
        lines += ["", f"data faults ({len(result['faults'])}):"]
        lines += [f"  [{f['kind']}] {f['where']}: {f['detail']}" for f in result["faults"]]
    cov = result["coverage"]
    lines += ["", f"coverage: {cov['items_compared']} of {cov['items_total']} items compared"]
    lines += [f"  [{f['kind']}] {f['where']}: {f['detail']}" for f in cov["reasons"]]
    lines += [
        "",
        (
            "MW = MLR-Bench two-sided Mann-Whitney U (U of the human-human sample); r_rb > 0: "
            "judge further from humans; rho/tau: judge vs human mean; humans-only row: "
            "reviewer 1 vs 2."
        ),
        f"rule: {result['pairing']['rule']}",
    ]
    return "\n".join(lines)


def static_text(path: str) -> str:
    """A file of static/ as text, for embedding in the self-contained report. plotly.js is vendored
    by `manage.py vendor_static`; where that has not run, the same file comes from the installed
    plotly package (never from the network)."""
    found = finders.find(path)
    if found is None and path == PLOTLY_JS:
        import plotly

        found = str(Path(plotly.__file__).parent / "package_data" / "plotly.min.js")
    if found is None:
        raise FileNotFoundError(f"static file {path} not found")
    return Path(found).read_text(encoding="utf-8")


def _raw_text(text: str, element: str) -> SafeString:
    """Text placed inside a <script> or <style> element, which HTML does not parse as markup (so it
    must not be entity-escaped): only the sequence that would end the element early is broken."""
    return mark_safe(text.replace(f"</{element}", f"<\\/{element}"))  # noqa: S308 - raw text, not markup


def to_html(
    result: dict[str, Any], paired: Paired | list[dict[str, Any]], *, tags: dict[str, Any] | None = None
) -> str:
    """One self-contained file (templates/agreement/report/standalone.html). `paired` gives the
    charts, or is the chart payload itself (the app caches it)."""
    payload = paired if isinstance(paired, list) else chart_payload(result, paired)
    return render_to_string(
        "agreement/report/standalone.html",
        {
            "report": context.report(result, tags_summary=tags),
            "css": _raw_text(static_text(REPORT_CSS), "style"),
            "plotly_js": _raw_text(static_text(PLOTLY_JS), "script"),
            "page_js": _raw_text(static_text(AGREEMENT_JS), "script"),
            "charts": clean_json(payload),
        },
    )
