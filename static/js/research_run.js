// Research run page: the stage timeline follows the run live over ws/research/<code>/.
// The server sends a snapshot on connect and the whole (five-stage) state on each change,
// so a reconnect never needs a catch-up request.
(function () {
  "use strict";
  var code = JSON.parse(document.getElementById("research-code").textContent);
  var timeline = document.getElementById("timeline");
  var summary = document.getElementById("research-summary");
  var notice = document.getElementById("stage-notice");
  var delay = 1000;

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

  function apply(run, isSnapshot) {
    setText(summary, '[data-field="status"]', run.status);
    setText(summary, '[data-field="tokens_sent"]', run.tokens_sent);
    setText(summary, '[data-field="tokens_received"]', run.tokens_received);
    setText(summary, '[data-field="cost"]', Number(run.cost).toFixed(4));
    setText(summary, '[data-field="unpriced"]', run.unpriced && run.unpriced.length ?
      " (unpriced: " + run.unpriced.join(", ") + ")" : "");
    var error = summary.querySelector('[data-field="error"]');
    error.textContent = run.error;
    error.hidden = !run.error;
    run.stages.forEach(function (stage) {
      var item = stageItem(stage);
      var before = item.dataset.status;
      item.dataset.status = stage.status;
      setText(item, '[data-part="status"]', stage.status);
      setText(item, '[data-part="usage"]', stage.tokens_sent + " / " + stage.tokens_received + " tokens · " +
        (stage.priced === false ? "unpriced" : Number(stage.cost).toFixed(4) + " USD"));
      setText(item, '[data-part="error"]', stage.error);
      var finished = stage.status === "done" || stage.status === "failed";
      if (!isSnapshot && finished && before !== stage.status && !document.getElementById("stage-" + stage.stage)) {
        notice.hidden = false;
      }
    });
    timeline.dataset.runStatus = run.status;
  }

  function connect() {
    var scheme = location.protocol === "https:" ? "wss://" : "ws://";
    var socket = new WebSocket(scheme + location.host + "/ws/research/" + code + "/");
    socket.onopen = function () { delay = 1000; timeline.dataset.live = "1"; };
    socket.onmessage = function (event) {
      var message = JSON.parse(event.data);
      apply(message.run, message.type === "snapshot");
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
