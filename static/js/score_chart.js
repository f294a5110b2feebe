// Score over steps, as a small SVG line chart (no plotly: a few dozen points do not need 3 MB).
// Series come from a json_script #score-series: [{label, points: [[step, value, kind], ...]}].
// window.scoreChart(container, series) redraws, so the run page can add live points; the
// container's data-label names the chart, data-lines-only draws lines without dots.
(function () {
  "use strict";
  const NS = "http://www.w3.org/2000/svg";
  const COLOURS = ["#2458c6", "#b35400"]; // both >= 4.5:1 on white: legend and axis text take them
  const W = 640, H = 220, PAD = { left: 56, right: 12, top: 12, bottom: 28 };

  function node(tag, attrs, text) {
    const n = document.createElementNS(NS, tag);
    for (const key in attrs) n.setAttribute(key, attrs[key]);
    if (text !== undefined) n.textContent = text;
    return n;
  }

  // Numbers people read at a glance (axis labels and hover text): 1.47k and 2.3M, not 1.47e+3;
  // small costs as decimals.
  function short(value) {
    const abs = Math.abs(value);
    if (abs >= 1e6) return Number((value / 1e6).toPrecision(3)) + "M";
    if (abs >= 1e3) return Number((value / 1e3).toPrecision(3)) + "k";
    if (abs > 0 && abs < 0.001) return String(Number(value.toPrecision(2)));
    return String(Number(value.toPrecision(4)));
  }

  function draw(container, series) {
    container.textContent = "";
    const all = series.flatMap((s) => s.points);
    if (!all.length) {
      // data-empty="" says nothing: the card says it once for both of its charts.
      const empty = "empty" in container.dataset ? container.dataset.empty : "No scored step yet.";
      if (empty) container.appendChild(document.createTextNode(empty));
      return;
    }
    const xs = all.map((p) => p[0]), ys = all.map((p) => p[1]);
    let [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
    if (x0 === x1) { x0 -= 1; x1 += 1; }
    if (y0 === y1) { const d = Math.abs(y0) * 0.1 || 1; y0 -= d; y1 += d; }
    const sx = (x) => PAD.left + ((x - x0) / (x1 - x0)) * (W - PAD.left - PAD.right);
    const sy = (y) => H - PAD.bottom - ((y - y0) / (y1 - y0)) * (H - PAD.top - PAD.bottom);
    const svg = node("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": container.dataset.label || "score over steps", class: "score-svg" });
    svg.appendChild(node("line", { x1: PAD.left, y1: H - PAD.bottom, x2: W - PAD.right, y2: H - PAD.bottom, stroke: "#999" }));
    svg.appendChild(node("line", { x1: PAD.left, y1: PAD.top, x2: PAD.left, y2: H - PAD.bottom, stroke: "#999" }));
    [y0, (y0 + y1) / 2, y1].forEach((y) => svg.appendChild(node("text", { x: PAD.left - 4, y: sy(y) + 4, "text-anchor": "end", "font-size": 11 }, short(y))));
    // The first label starts at the axis and the last ends at it: centred, "step 13" lost its "3".
    [[x0, "start"], [x1, "end"]].forEach(([x, anchor]) => svg.appendChild(node("text", { x: sx(x), y: H - 8, "text-anchor": anchor, "font-size": 11 }, "step " + Math.round(x))));
    series.forEach((s, i) => {
      const colour = COLOURS[i % COLOURS.length];
      if (s.points.length > 1) {
        svg.appendChild(node("polyline", { points: s.points.map((p) => sx(p[0]) + "," + sy(p[1])).join(" "), fill: "none", stroke: colour, "stroke-width": 2 }));
      }
      // data-lines-only (cumulative cost and tokens): one point per step, a line without dots; each
      // point still has an unpainted target whose hover text reads its value.
      const bare = "linesOnly" in container.dataset && s.points.length > 1;
      s.points.forEach((p) => {
        const dot = bare
          ? node("circle", { cx: sx(p[0]), cy: sy(p[1]), r: 4, fill: "transparent", class: "hover-point" })
          : node("circle", { cx: sx(p[0]), cy: sy(p[1]), r: p[2] === "submit" ? 5 : 3.5, fill: colour, class: "score-point" });
        // Hover text in the axis's words (1.47k, 0.0273), not the raw float (1470, 0.027300000000000005).
        dot.appendChild(node("title", {}, `${s.label} · step ${p[0]} · ${p[2]}: ${short(p[1])}`));
        svg.appendChild(dot);
      });
      if (series.length > 1) svg.appendChild(node("text", { x: PAD.left + 8 + i * 90, y: PAD.top + 10, fill: colour, "font-size": 12 }, s.label));
    });
    container.appendChild(svg);
  }

  window.scoreChart = draw;
  window.scoreChart.short = short;
  const container = document.getElementById("score-chart");
  const data = document.getElementById("score-series");
  if (container && data) draw(container, JSON.parse(data.textContent));
})();
