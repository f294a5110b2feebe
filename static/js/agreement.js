// Draws the agreement charts: reads plotly figures ([{id, figure}]) from a JSON script tag and plots
// each into the element with that id. The downloadable report carries every chart in
// #agreement-charts and plotly.js inlined before this script; the in-app page carries none: each
// criterion is a closed <details data-src> whose evidence (tables, chart slots,
// #agreement-charts-<n>) is fetched when it is opened, and its charts drawn then. plotly.js (4.6 MB)
// is fetched only then too, once, from the URL in this script's data-plotly attribute (the vendored
// static file): loaded up front it made the summary page take seconds for charts nobody had opened.
(function () {
  "use strict";
  // Read while this script runs: document.currentScript is null once it has.
  var me = document.currentScript;
  var plotlyUrl = me && me.dataset ? me.dataset.plotly : "";
  var plotlyLoading = null;

  // Resolves once Plotly is defined: at once where it is already in the page (the downloaded report,
  // the per-criterion page), else after the one <script> added for it has loaded. A failed load is
  // forgotten, so that the next opening tries again.
  function plotly() {
    if (typeof Plotly !== "undefined") return Promise.resolve();
    if (plotlyLoading) return plotlyLoading;
    if (!plotlyUrl) return Promise.reject(new Error("no chart library on this page"));
    plotlyLoading = new Promise(function (resolve, reject) {
      var script = document.createElement("script");
      script.src = plotlyUrl;
      script.onload = function () {
        if (typeof Plotly === "undefined") fail(new Error("the chart library did not define Plotly"));
        else resolve();
      };
      script.onerror = function () {
        fail(new Error("the chart library could not be loaded from " + plotlyUrl));
      };
      function fail(error) {
        plotlyLoading = null;
        script.remove();
        reject(error);
      }
      document.head.appendChild(script);
    });
    return plotlyLoading;
  }

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

  // Says what failed at the top of a criterion's evidence box.
  function say(box, text) {
    var p = document.createElement("p");
    p.className = "error";
    p.setAttribute("role", "alert");
    p.textContent = text;
    box.prepend(p);
  }

  // Fetches a criterion's evidence once; resolves when it is in the page and drawn.
  function load(section) {
    if (section._loading) return section._loading;
    var box = section.querySelector(".evidence");
    section.setAttribute("aria-busy", "true");
    // The chart library downloads beside the fragment rather than after it. Its failure is held
    // as a value (not a rejection) so that the tables still show, with a note that the charts are missing.
    var library = plotly().then(
      function () {
        return null;
      },
      function (error) {
        return error;
      }
    );
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
        return library;
      })
      .then(function (failed) {
        section.removeAttribute("aria-busy");
        if (!failed) {
          draw(box.querySelector('script[type="application/json"]'));
          return;
        }
        // The evidence is shown; a second opening fetches it again and retries the library.
        section._loading = null;
        say(box, "The charts could not be drawn (" + failed.message + ").");
      })
      .catch(function (error) {
        // Say what failed and keep the plain link, so that a second opening tries again.
        section._loading = null;
        section.removeAttribute("aria-busy");
        say(box, "The evidence could not be loaded (" + error.message + ").");
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
