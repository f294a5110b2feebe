"""The report's charts as plain plotly JSON (data + layout dicts), drawn in the browser by
static/js/agreement.js with the vendored plotly.js.

Built as dicts rather than through plotly.graph_objects: the figure objects validate every
property on construction, which cost ~0.3 s for the 20 charts of a 30-item campaign; the dicts
are the same JSON plotly.js receives.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agreement.data.containers import Paired
from agreement.stats.suite import _nanmean

LAYOUT = {"height": 340, "margin": {"l": 50, "r": 20, "t": 50, "b": 45}}


def _list(a: np.ndarray) -> list[Any]:
    return [None if isinstance(x, float) and x != x else x for x in np.asarray(a).tolist()]


def _layout(title: str, **extra: Any) -> dict[str, Any]:
    return {**LAYOUT, "title": {"text": title}, **extra}


def _axis(title: str) -> dict[str, Any]:
    return {"title": {"text": title}}


def figures(p: Paired, result: dict[str, Any], c: int, view: str) -> list[dict[str, Any]]:
    crit = p.criteria[c]
    H = p.H[:, :, c]
    J = p.J[:, :, c]
    j = J[:, p.judges.index(view[6:])] if view.startswith("judge:") and view[6:] in p.judges else _nanmean(J, axis=1)
    hm = _nanmean(H, axis=1)
    hj = np.abs(H - j[:, None]).ravel()
    hj = hj[~np.isnan(hj)]
    dist = {
        "data": [
            {"type": "histogram", "x": _list(p.hh_diffs[c]), "name": "|human - human|", "opacity": 0.6,
             "histnorm": "percent"},
            {"type": "histogram", "x": _list(hj), "name": "|judge - human|", "opacity": 0.6, "histnorm": "percent"},
        ],
        "layout": _layout(f"{crit}: the two difference distributions (MLR-Bench test)", barmode="overlay",
                          xaxis=_axis("absolute difference"), yaxis=_axis("% of differences")),
    }  # fmt: skip
    ok = ~np.isnan(hm) & ~np.isnan(j)
    lo, hi = (float(min(hm[ok].min(), j[ok].min())), float(max(hm[ok].max(), j[ok].max()))) if ok.any() else (1, 10)
    labels = np.asarray(p.items, dtype=object)[ok].tolist()
    scatter = {
        "data": [
            {"type": "scatter", "x": _list(hm[ok]), "y": _list(j[ok]), "mode": "markers", "name": "items",
             "text": labels},
            {"type": "scatter", "x": [lo, hi], "y": [lo, hi], "mode": "lines", "name": "y = x",
             "line": {"dash": "dot"}},
        ],
        "layout": _layout(f"{crit}: judge vs human mean", xaxis=_axis("human mean"), yaxis=_axis(view)),
    }  # fmt: skip
    diff = j[ok] - hm[ok]
    avg = (j[ok] + hm[ok]) / 2
    bias = float(diff.mean()) if len(diff) else 0.0
    sd = float(diff.std(ddof=1)) if len(diff) > 1 else 0.0
    lines = [(bias, "solid"), (bias + 1.96 * sd, "dash"), (bias - 1.96 * sd, "dash")]
    ba = {
        "data": [{"type": "scatter", "x": _list(avg), "y": _list(diff), "mode": "markers", "name": "items",
                  "text": labels}],
        "layout": _layout(
            f"{crit}: Bland-Altman (bias {bias:+.2f}, limits +/-{1.96 * sd:.2f})",
            xaxis=_axis("mean of judge and human mean"), yaxis=_axis("judge - human mean"),
            shapes=[{"type": "line", "xref": "paper", "x0": 0, "x1": 1, "y0": y, "y1": y, "line": {"dash": dash}}
                    for y, dash in lines],
        ),
    }  # fmt: skip
    sysres = result["systems"][crit][view]["systems"]
    names = [s["system"] for s in sysres]
    systems = {
        "data": [
            {"type": "bar", "x": names, "y": _list(np.array([s["human_mean"] for s in sysres], dtype=float)),
             "name": "humans"},
            {"type": "bar", "x": names, "y": _list(np.array([s["judge_mean"] for s in sysres], dtype=float)),
             "name": view},
        ],
        "layout": _layout(f"{crit}: per-system means", barmode="group"),
    }  # fmt: skip
    return [dist, scatter, ba, systems]


def chart_payload(result: dict[str, Any], paired: Paired) -> list[dict[str, Any]]:
    """[{id, figure}] for every chart, drawn by static/js/agreement.js."""
    main_view = result["views"][-1]
    return [
        {"id": f"agreement-chart-{c}-{k}", "figure": fig}
        for c in range(len(paired.criteria))
        for k, fig in enumerate(figures(paired, result, c, main_view))
    ]
