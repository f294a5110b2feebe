// Research run page: the stage timeline follows the run live over ws/research/<code>/.
// The server sends a snapshot on connect and the whole (five-stage) state on each change,
// so a reconnect never needs a catch-up request. A stage that finishes (done or failed) is shown
// at once: its section is fetched from this page's own URL (same permission check, the server's
// sanitised markdown) and put in place, so no one has to reload to read it.
(function () {
  "use strict";
  var code = JSON.parse(document.getElementById("research-code").textContent);
  var timeline = document.getElementById("timeline");
  var summary = document.getElementById("research-summary");
  var sections = document.getElementById("stage-sections");
  var delay = 1000;
  var BADGES = { done: "ok", failed: "bad", running: "warn" };
  var fetching = null;
  var again = false;

  function sectionStale(stage) {
    var section = document.getElementById("stage-" + stage.stage);
    var finished = stage.status === "done" || stage.status === "failed";
    return finished && (!section || section.dataset.status !== stage.status);
  }

  // Re-read the page and swap in every section whose status differs from the shown one.
  function refreshSections() {
    if (fetching) { again = true; return; }  // an update during a fetch: fetch once more after it
    fetching = fetch(location.pathname, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (response) { if (!response.ok) throw new Error("HTTP " + response.status); return response.text(); })
      .then(function (html) {
        var fresh = new DOMParser().parseFromString(html, "text/html").getElementById("stage-sections");
        if (!fresh) return;
        Array.prototype.forEach.call(fresh.children, function (section) {
          var current = document.getElementById(section.id);
          if (current && current.dataset.status === section.dataset.status) return;
          var node = document.importNode(section, true);
          node.querySelectorAll("script, link").forEach(function (el) { el.remove(); });
          if (current) {
            current.replaceWith(node);
          } else {
            var next = section.nextElementSibling;
            while (next && !document.getElementById(next.id)) next = next.nextElementSibling;
            sections.insertBefore(node, next ? document.getElementById(next.id) : null);
          }
          if (window.refereeRenderMath) window.refereeRenderMath(node);
        });
      })
      .catch(function () { /* the next update tries again */ })
      .then(function () {
        fetching = null;
        if (again) { again = false; refreshSections(); }
      });
  }

  function setText(root, selector, value) {
    var el = root.querySelector(selector);
    if (el) el.textContent = value;
  }

  function stageItem(stage) {
    var item = timeline.querySelector('li[data-stage="' + stage.stage + '"]');
    if (!item) {
      item = document.createElement("li");
      item.dataset.stage = stage.stage;
      item.innerHTML = '<strong></strong> <span class="badge" data-part="status"></span> ' +
        '<span class="muted" data-part="usage"></span> <span class="error" data-part="error"></span>';
      item.querySelector("strong").textContent = stage.label.charAt(0).toUpperCase() + stage.label.slice(1);
      timeline.appendChild(item);
    }
    return item;
  }

  function apply(run) {
    setText(summary, '[data-field="status"]', run.status);
    summary.querySelector('[data-field="status"]').className = "badge " + (BADGES[run.status === "finished" ? "done" : run.status] || "");
    setText(summary, '[data-field="tokens_sent"]', run.tokens_sent);
    setText(summary, '[data-field="tokens_received"]', run.tokens_received);
    setText(summary, '[data-field="cost"]', Number(run.cost).toFixed(4));
    setText(summary, '[data-field="unpriced"]', run.unpriced && run.unpriced.length ?
      " (unpriced: " + run.unpriced.join(", ") + ")" : "");
    var error = summary.querySelector('[data-field="error"]');
    error.textContent = run.error;
    error.hidden = !run.error;
    var stale = false;
    run.stages.forEach(function (stage) {
      var item = stageItem(stage);
      item.dataset.status = stage.status;
      setText(item, '[data-part="status"]', stage.status);
      item.querySelector('[data-part="status"]').className = "badge " + (BADGES[stage.status] || "");
      setText(item, '[data-part="usage"]', stage.tokens_sent + " / " + stage.tokens_received + " tokens · " +
        (stage.priced === false ? "unpriced" : Number(stage.cost).toFixed(4) + " USD"));
      setText(item, '[data-part="error"]', stage.error);
      if (sectionStale(stage)) stale = true;
    });
    timeline.dataset.runStatus = run.status;
    if (stale) refreshSections();
  }

  function connect() {
    var socket = new WebSocket(window.refereeSocketUrl("/ws/research/" + code + "/"));
    socket.onopen = function () { delay = 1000; timeline.dataset.live = "1"; };
    socket.onmessage = function (event) {
      var message = JSON.parse(event.data);
      apply(message.run);
    };
    socket.onclose = function (event) {
      timeline.dataset.live = "0";
      if (event.code === 4401 || event.code === 4403) return; // not allowed: do not hammer the server
      setTimeout(connect, delay);
      delay = Math.min(delay * 2, 30000);
    };
  }
  connect();
})();
