// Admin overview: the counts and the latest results follow the platform while the page is open,
// read every 10 s from /overview.json (same admin-only check as the page). Text only, no HTML from data.
(function () {
  "use strict";
  var script = document.getElementById("overview-script");
  var root = document.getElementById("overview-numbers");
  if (!script || !root) return;
  var url = script.dataset.url;
  var PERIOD = Number(script.dataset.period || 10000);

  function lookup(data, path) {
    return path.split(".").reduce(function (value, key) { return value == null ? value : value[key]; }, data);
  }

  function cell(row, text, href) {
    var td = document.createElement("td");
    if (href) { var a = document.createElement("a"); a.href = href; a.textContent = text; td.appendChild(a); }
    else td.textContent = text;
    row.appendChild(td);
    return td;
  }

  function apply(data) {
    document.querySelectorAll("#overview-numbers [data-count], #overview-more [data-count]").forEach(function (el) {
      var value = lookup(data, el.dataset.count);
      el.textContent = value == null ? "unknown" : String(value);
    });
    var body = document.querySelector("#overview-recent tbody");
    if (body && data.recent.length) {
      body.textContent = "";
      data.recent.forEach(function (run) {
        var row = document.createElement("tr");
        cell(row, run.finished_at.slice(0, 16).replace("T", " "), run.url);
        cell(row, run.task);
        cell(row, run.method);
        cell(row, run.status + (run.exit_status ? " (" + run.exit_status + ")" : ""));
        cell(row, run.best_attempt == null ? "—" : Number(run.best_attempt).toFixed(4)).className = "num";
        body.appendChild(row);
      });
    }
    document.getElementById("overview-refreshed").textContent = "last " + new Date().toLocaleTimeString();
  }

  function poll() {
    fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) { if (!response.ok) throw new Error("HTTP " + response.status); return response.json(); })
      .then(apply)
      .catch(function () { document.getElementById("overview-refreshed").textContent = "refresh failed; retrying"; })
      .then(function () { setTimeout(poll, PERIOD); });
  }
  setTimeout(poll, PERIOD);
})();
