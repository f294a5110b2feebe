// Draws the agreement charts: reads plotly figures ([{id, figure}]) from a JSON script tag and plots
// each into the element with that id. The downloadable report carries every chart in
// #agreement-charts; the in-app page carries none: each criterion is a closed <details data-src>
// whose evidence (tables, chart slots, #agreement-charts-<n>) is fetched when it is opened, and its
// charts drawn then. Used by the in-app page (with static/vendor/plotly.min.js) and inlined into the HTML report.
(function () {
  "use strict";
  function draw(tag) {
    if (!tag || typeof Plotly === "undefined") return;
    JSON.parse(tag.textContent).forEach(function (chart) {
      var el = document.getElementById(chart.id);
      if (!el) return;
      Plotly.newPlot(el, chart.figure.data, chart.figure.layout, {
        displaylogo: false,
        responsive: true,
      });
    });
  }

  // Fetches a criterion's evidence once; resolves when it is in the page and drawn.
  function load(section) {
    if (section._loading) return section._loading;
    var box = section.querySelector(".evidence");
    section.setAttribute("aria-busy", "true");
    section._loading = fetch(section.dataset.src, {
      headers: { "X-Fragment": "1" },
      credentials: "same-origin",
    })
      .then(function (response) {
        if (!response.ok) {
          return response.text().then(function (text) {
            throw new Error("HTTP " + response.status + ": " + text.slice(0, 300));
          });
        }
        return response.text();
      })
      .then(function (html) {
        box.innerHTML = html;
        section.removeAttribute("aria-busy");
        draw(box.querySelector('script[type="application/json"]'));
      })
      .catch(function (error) {
        // Say what failed and keep the plain link, so that a second opening tries again.
        section._loading = null;
        section.removeAttribute("aria-busy");
        var p = document.createElement("p");
        p.className = "error";
        p.setAttribute("role", "alert");
        p.textContent = "The evidence could not be loaded (" + error.message + ").";
        box.prepend(p);
      });
    return section._loading;
  }

  // A link to an anchor inside a closed criterion (the verdict table, the contents) opens and
  // loads it first, then goes to the anchor.
  function openFor(hash) {
    var m = /^#(?:crit|evidence)-(\d+)/.exec(hash || "");
    var section = m && document.getElementById("crit-" + m[1]);
    if (!section || !section.dataset.src) return false;
    section.open = true;
    load(section).then(function () {
      var target = document.getElementById(hash.slice(1));
      if (!target) return;
      if (location.hash === hash) target.scrollIntoView();
      else location.hash = hash;
    });
    return true;
  }

  function start() {
    draw(document.getElementById("agreement-charts"));
    document.querySelectorAll("details.criterion[data-src]").forEach(function (section) {
      section.addEventListener("toggle", function () {
        if (section.open) load(section);
      });
    });
    document.addEventListener("click", function (event) {
      var a = event.target.closest && event.target.closest('a[href^="#"]');
      if (a && openFor(a.getAttribute("href"))) event.preventDefault();
    });
    openFor(location.hash);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
