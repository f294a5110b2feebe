// Draws the agreement charts: reads the plotly figures from the JSON script tag
// #agreement-charts ([{id, figure}]) and plots each into the element with that id.
// Used by the in-app page (with static/vendor/plotly.min.js) and inlined into the HTML report.
(function () {
  "use strict";
  function draw() {
    var tag = document.getElementById("agreement-charts");
    if (!tag || typeof Plotly === "undefined") return;
    var charts = JSON.parse(tag.textContent);
    charts.forEach(function (chart) {
      var el = document.getElementById(chart.id);
      if (!el) return;
      Plotly.newPlot(el, chart.figure.data, chart.figure.layout, {
        displaylogo: false,
        responsive: true,
      });
    });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", draw);
  } else {
    draw();
  }
})();
