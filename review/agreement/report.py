"""Exports of an agreement analysis: a terminal table, JSON, CSV, and a self-contained HTML
report (plotly.js inlined from the plotly package, no CDN, printable to PDF).

Everything here reads the `analyse()` result; charts also read the `Paired` arrays.
"""

from __future__ import annotations

import csv
import datetime as dt
import html
import io
import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from .data import Paired
from .suite import _nanmean

AGREEMENT_JS = Path(__file__).resolve().parents[2] / "static" / "js" / "agreement.js"

LICENSE_NOTE = "MLR-Bench data: chchenhui/mlrbench, MIT licence (see ../shared/mlrbench/LICENSE)."

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
)


def _get(rec: dict[str, Any], field: str | tuple[str, str]) -> Any:
    if isinstance(field, tuple):
        return rec.get(field[0], {}).get(field[1], math.nan)
    return rec.get(field, math.nan)


def _fmt(x: Any, digits: int = 3) -> str:
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
    rows = []
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
    buf.write(f"# pairing={result['pairing']['policy']}; settings=")
    buf.write(json.dumps(clean_json(result["settings"]), sort_keys=True))
    buf.write(f"; meta={json.dumps(clean_json(result['meta']), sort_keys=True)}\n")
    w = csv.DictWriter(buf, fieldnames=CSV_FIELDS, extrasaction="ignore")
    w.writeheader()
    for row in _rows(result):
        w.writerow({k: ("" if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()})
    return buf.getvalue()


def to_table(result: dict[str, Any]) -> str:
    lines = [
        (
            f"pairing: {result['pairing']['policy']}  items: {result['sizes']['items']}  "
            f"human reviews: {result['sizes']['human_reviews']}  judges: "
            f"{', '.join(result['sizes']['judges'])}  bootstrap: "
            f"{result['settings']['bootstrap_resamples']}  TOST margin: "
            f"+/-{result['settings']['tost_margin']}"
        ),
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


# --- HTML ----------------------------------------------------------------------------------


def _figures(p: Paired, result: dict[str, Any], c: int, view: str) -> list[Any]:
    import plotly.graph_objects as go

    crit = p.criteria[c]
    H = p.H[:, :, c]
    J = p.J[:, :, c]
    if view.startswith("judge:") and view[6:] in p.judges:
        j = J[:, p.judges.index(view[6:])]
    else:
        j = _nanmean(J, axis=1)
    hm = _nanmean(H, axis=1)
    hj = np.abs(H - j[:, None]).ravel()
    hj = hj[~np.isnan(hj)]
    layout = {"height": 340, "margin": {"l": 50, "r": 20, "t": 50, "b": 45}}
    dist = go.Figure(
        [
            go.Histogram(x=p.hh_diffs[c], name="|human - human|", opacity=0.6, histnorm="percent"),
            go.Histogram(x=hj, name="|judge - human|", opacity=0.6, histnorm="percent"),
        ],
        layout={
            **layout,
            "barmode": "overlay",
            "title": f"{crit}: the two difference distributions (MLR-Bench test)",
            "xaxis": {"title": "absolute difference"},
            "yaxis": {"title": "% of differences"},
        },
    )
    ok = ~np.isnan(hm) & ~np.isnan(j)
    lo, hi = (
        (
            float(np.nanmin([hm[ok].min(), j[ok].min()])),
            float(max(hm[ok].max(), j[ok].max())),
        )
        if ok.any()
        else (1, 10)
    )
    scatter = go.Figure(
        [
            go.Scatter(
                x=hm[ok],
                y=j[ok],
                mode="markers",
                name="items",
                text=np.asarray(p.items)[ok],
            ),
            go.Scatter(x=[lo, hi], y=[lo, hi], mode="lines", name="y = x", line={"dash": "dot"}),
        ],
        layout={
            **layout,
            "title": f"{crit}: judge vs human mean",
            "xaxis": {"title": "human mean"},
            "yaxis": {"title": view},
        },
    )
    diff = j[ok] - hm[ok]
    avg = (j[ok] + hm[ok]) / 2
    bias = float(diff.mean()) if len(diff) else 0.0
    sd = float(diff.std(ddof=1)) if len(diff) > 1 else 0.0
    ba = go.Figure(
        [
            go.Scatter(
                x=avg,
                y=diff,
                mode="markers",
                name="items",
                text=np.asarray(p.items)[ok],
            )
        ],
        layout={
            **layout,
            "title": f"{crit}: Bland-Altman (bias {bias:+.2f}, limits +/-{1.96 * sd:.2f})",
            "xaxis": {"title": "mean of judge and human mean"},
            "yaxis": {"title": "judge - human mean"},
            "shapes": [
                {
                    "type": "line",
                    "xref": "paper",
                    "x0": 0,
                    "x1": 1,
                    "y0": y,
                    "y1": y,
                    "line": {"dash": dash},
                }
                for y, dash in (
                    (bias, "solid"),
                    (bias + 1.96 * sd, "dash"),
                    (bias - 1.96 * sd, "dash"),
                )
            ],
        },
    )
    sysres = result["systems"][crit][view]["systems"]
    names = [s["system"] for s in sysres]
    systems = go.Figure(
        [
            go.Bar(x=names, y=[s["human_mean"] for s in sysres], name="humans"),
            go.Bar(x=names, y=[s["judge_mean"] for s in sysres], name=view),
        ],
        layout={**layout, "barmode": "group", "title": f"{crit}: per-system means"},
    )
    return [dist, scatter, ba, systems]


def _stat_table(stats: dict[str, Any]) -> str:
    head = "<tr><th>statistic</th><th>estimate</th><th>95% CI</th><th>p</th><th>p (Holm)</th><th>n</th><th>note / details</th></tr>"
    rows = []
    for key, r in stats.items():
        ci = "" if math.isnan(r["ci_low"]) else f"[{_fmt(r['ci_low'])}, {_fmt(r['ci_high'])}]"
        details = r["note"] or "; ".join(
            f"{k}={_fmt(v)}" for k, v in r["extra"].items() if k not in ("method", "reading")
        )
        if r["ci_method"]:
            details += f" (CI: {r['ci_method']})"
        rows.append(
            "<tr>"
            + "".join(
                f"<td>{html.escape(str(x))}</td>"
                for x in (
                    key,
                    _fmt(r["estimate"]),
                    ci,
                    _fmt(r["p_value"], 4),
                    _fmt(r["p_holm"], 4),
                    ", ".join(f"{k}={v}" for k, v in r["n"].items()),
                    details,
                )
            )
            + "</tr>"
        )
    return f"<table>{head}{''.join(rows)}</table>"


def _reading(crit: str, view: dict[str, Any], humans: dict[str, Any], margin: float) -> str:
    mw, sp, tst = (
        view["mlrbench_mann_whitney_u"],
        view["spearman"],
        view["tost_equivalence"],
    )
    sp_h = humans["spearman_h1_h2"]
    parts = []
    if not math.isnan(mw["p_value"]):
        verdict = "no significant difference" if mw["p_value"] >= 0.05 else "a significant difference"
        parts.append(
            f"The MLR-Bench test finds {verdict} (U={_fmt(mw['estimate'])}, p={_fmt(mw['p_value'], 4)}). "
            "A non-significant result is not evidence of agreement."
        )
    wil, bias = view["wilcoxon_signed_rank"], view["bias_judge_minus_humans"]
    if not math.isnan(wil["p_value"]):
        parts.append(
            f"The judge scores {_fmt(bias['estimate'])} points above the human mean on average "
            f"(Wilcoxon signed-rank p={_fmt(wil['p_value'], 4)}, Holm {_fmt(wil['p_holm'], 4)})."
        )
    if not math.isnan(tst["p_value"]):
        eq = "is shown" if tst["extra"].get("equivalent") else "is not shown"
        parts.append(
            f"Equivalence of the judge's excess disagreement within +/-{margin:g} points {eq} "
            f"(TOST p={_fmt(tst['p_value'], 4)})."
        )
    if not math.isnan(sp["estimate"]):
        parts.append(
            f"Judge vs human mean: Spearman {_fmt(sp['estimate'])} [{_fmt(sp['ci_low'])}, "
            f"{_fmt(sp['ci_high'])}]; reviewer vs reviewer: {_fmt(sp_h['estimate'])}."
        )
    return html.escape(" ".join(parts)) or "Not enough data for a reading."


MISSES = (
    "The MLR-Bench test asks whether |judge - human| differences are distributed like "
    "|human - human| ones. It pools differences that are not independent (two per item), "
    "a non-significant p is not evidence of agreement, and two sets of differences can match "
    "while the judge is biased or ranks items differently. The statistics below add the "
    "judge's bias (Wilcoxon), its ranking of items (Spearman, Kendall), reliability "
    "(Krippendorff's alpha, ICC), an equivalence test (TOST) on the per-item excess "
    "disagreement, and the human-human ceiling, with Holm correction across criteria."
)

CSS = """
body{font-family:system-ui,sans-serif;margin:2rem;color:#222;max-width:1200px}
table{border-collapse:collapse;margin:.5rem 0 1.5rem;font-size:.85rem}
td,th{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:#f3f3f3} .charts{display:grid;grid-template-columns:1fr 1fr;gap:.5rem}
.reading{background:#f7f7fb;border-left:4px solid #557;padding:.5rem 1rem}
code{font-size:.85rem} h2{border-bottom:2px solid #333;margin-top:2.5rem}
@media print{body{margin:0;max-width:none}.charts{grid-template-columns:1fr 1fr}
 section.criterion{page-break-before:always} .chart,table,.reading{page-break-inside:avoid}}
"""


def pinned_settings(result: dict[str, Any]) -> dict[str, str]:
    """What a reader needs to recompute the report."""
    s, st, meta = result["sizes"], result["settings"], result["meta"]
    return {
        "pairing policy": result["pairing"]["policy"],
        "pairing rule": result["pairing"]["rule"],
        "rubric version": meta.get("rubric_version", "not given"),
        "judge models": ", ".join(map(str, meta.get("judge_models", s["judges"]))),
        "prompt hashes": ", ".join(map(str, meta.get("prompt_hashes", ["not given"]))),
        "items / systems / human reviews": f"{s['items']} / {s['systems']} / {s['human_reviews']}",
        "criteria": ", ".join(s["criteria"]),
        "judge views": ", ".join(result["views"]),
        "judge scores are means": str(s["judge_scores_are_means"]),
        "settings": json.dumps(clean_json(st), sort_keys=True),
        "sources (sha256)": json.dumps(meta.get("sources_sha256", {}), sort_keys=True),
        "generated": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }


def chart_payload(result: dict[str, Any], paired: Paired) -> list[dict[str, Any]]:
    """[{id, figure}] for every chart (plotly JSON), drawn by static/js/agreement.js."""
    main_view = result["views"][-1]
    out = []
    for c in range(len(paired.criteria)):
        for k, fig in enumerate(_figures(paired, result, c, main_view)):
            out.append({"id": f"agreement-chart-{c}-{k}", "figure": json.loads(fig.to_json())})
    return out


def body_html(result: dict[str, Any]) -> str:
    """The report body (escaped HTML): pinned settings, faults, per criterion a reading, chart
    slots and every statistic. Shared by the file report and the in-app page."""
    esc = html.escape
    margin = result["settings"]["tost_margin"]
    parts = [
        f"<p>{esc(MISSES)}</p>",
        "<table class='pinned'>"
        + "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in pinned_settings(result).items())
        + "</table>",
    ]
    if result["faults"]:
        parts.append(
            f"<h2>Data faults ({len(result['faults'])})</h2>"
            "<table><tr><th>kind</th><th>where</th><th>what was done</th></tr>"
        )
        parts += [
            f"<tr><td>{esc(f['kind'])}</td><td>{esc(f['where'])}</td><td>{esc(f['detail'])}</td></tr>"
            for f in result["faults"]
        ]
        parts.append("</table>")
    main_view = result["views"][-1]
    for c, (crit, block) in enumerate(result["criteria"].items()):
        parts.append(f"<section class='criterion'><h2>{esc(crit)}</h2>")
        parts.append(f"<p class='reading'>{_reading(crit, block['views'][main_view], block['humans'], margin)}</p>")
        parts.append(
            "<div class='charts'>"
            + "".join(f"<div class='chart' id='agreement-chart-{c}-{k}'></div>" for k in range(4))
            + "</div>"
        )
        parts.append("<h3>Reviewers among themselves</h3>" + _stat_table(block["humans"]))
        for view, stats in block["views"].items():
            parts.append(f"<h3>Judge view: {esc(view)}</h3>" + _stat_table(stats))
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
    return "\n".join(parts)


def _inline_script(text: str) -> str:
    return "<script>" + text.replace("</script", "<\\/script") + "</script>"


def to_html(result: dict[str, Any], paired: Paired) -> str:
    """One self-contained file: plotly.js from the plotly package and the page script inlined."""
    from plotly.offline import get_plotlyjs

    charts = json.dumps(clean_json(chart_payload(result, paired))).replace("</", "<\\/")
    return "\n".join(
        [
            "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
            "<title>Judge-human agreement report</title>",
            f"<style>{CSS}</style>",
            _inline_script(get_plotlyjs()),
            "</head><body><h1>Can the LLM judge stand in for expert reviewers?</h1>",
            body_html(result),
            f"<script type='application/json' id='agreement-charts'>{charts}</script>",
            _inline_script(AGREEMENT_JS.read_text(encoding="utf-8")),
            "</body></html>",
        ]
    )
