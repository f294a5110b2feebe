// Review item page: autosave drafts (debounced fetch POST with CSRF) and keep a copy in
// localStorage, so a dropped connection or a reload loses nothing; the copy syncs when the
// server is reachable again. Each save carries a revision counter: the server keeps only the
// newest, so out-of-order replies cannot overwrite newer text.
(function () {
  "use strict";
  const client = JSON.parse(document.getElementById("review-client").textContent);
  const form = document.getElementById("review-form");
  const status = document.getElementById("save-status");
  const key = "referee-review-draft:" + client.code;
  const DEBOUNCE_MS = 700;
  const RETRY_MS = 5000;

  if (client.locked) { localStorage.removeItem(key); return; }
  if (!form) return;

  let revision = client.revision;
  let acked = client.revision;
  let timer = null;
  let inFlight = false;

  function say(text) { if (status) status.textContent = text; }

  function csrf() {
    const m = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    if (m) return decodeURIComponent(m[1]);
    const field = form.querySelector("input[name=csrfmiddlewaretoken]");
    return field ? field.value : "";
  }

  function collect() {
    const scores = {};
    form.querySelectorAll("fieldset.dimension").forEach(function (fs) {
      const k = fs.dataset.key;
      const checked = fs.querySelector("input[type=radio]:checked");
      const text = fs.querySelector("textarea").value;
      if (checked || text) scores[k] = { score: checked ? parseInt(checked.value, 10) : null, justification: text };
    });
    const conf = form.querySelector("[name=confidence]").value;
    return { scores: scores, confidence: conf ? parseInt(conf, 10) : null };
  }

  function apply(data) {
    Object.entries(data.scores || {}).forEach(function ([k, entry]) {
      const fs = form.querySelector('fieldset.dimension[data-key="' + CSS.escape(k) + '"]');
      if (!fs) return;
      fs.querySelectorAll("input[type=radio]").forEach(function (r) { r.checked = entry.score !== null && String(entry.score) === r.value; });
      fs.querySelector("textarea").value = entry.justification || "";
    });
    form.querySelector("[name=confidence]").value = data.confidence === null || data.confidence === undefined ? "" : String(data.confidence);
  }

  function stash(data) {
    try { localStorage.setItem(key, JSON.stringify({ revision: revision, data: data, synced: false })); } catch (e) { /* storage full or off */ }
  }

  function markSynced(rev) {
    try {
      const local = JSON.parse(localStorage.getItem(key) || "null");
      if (local && local.revision <= rev) { local.synced = true; localStorage.setItem(key, JSON.stringify(local)); }
    } catch (e) { /* ignore */ }
  }

  async function send() {
    if (inFlight) { schedule(); return; }
    const local = JSON.parse(localStorage.getItem(key) || "null");
    if (!local || local.synced) return;
    inFlight = true;
    say("Saving…");
    try {
      const resp = await fetch(client.draft_url, {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRFToken": csrf() },
        body: JSON.stringify(Object.assign({ revision: local.revision }, local.data)),
      });
      const body = await resp.json().catch(function () { return {}; });
      if (resp.ok) {
        acked = Math.max(acked, body.revision);
        markSynced(body.revision);
        say("Draft saved " + new Date().toLocaleTimeString());
      } else if (resp.status === 409 && body.error === "stale") {
        // Another tab saved a later revision: move past it and send what this tab shows.
        revision = Math.max(revision, body.revision) + 1;
        stash(collect());
        schedule(0);
      } else if (resp.status === 409) {
        say("This review is locked: " + (body.detail || "submitted"));
        localStorage.removeItem(key);
      } else {
        say("Not saved: " + (body.error || resp.status) + ". Kept on this device.");
      }
    } catch (e) {
      say("Offline: draft kept on this device, will sync when the connection is back.");
      setTimeout(send, RETRY_MS);
    } finally {
      inFlight = false;
    }
  }

  function schedule(delay) {
    clearTimeout(timer);
    timer = setTimeout(send, delay === undefined ? DEBOUNCE_MS : delay);
  }

  function changed() {
    revision = Math.max(revision, acked) + 1;
    stash(collect());
    say("Unsaved changes…");
    schedule();
  }

  // A local copy newer than the server's (typed while offline, or a save that never arrived) wins.
  try {
    const local = JSON.parse(localStorage.getItem(key) || "null");
    if (local && local.revision > client.revision && !local.synced) {
      revision = local.revision;
      apply(local.data);
      say("Restored unsaved changes from this device; syncing…");
      schedule(0);
    } else if (local && local.revision <= client.revision) {
      localStorage.removeItem(key);
    }
  } catch (e) { localStorage.removeItem(key); }

  form.addEventListener("input", changed);
  form.addEventListener("change", changed);
  window.addEventListener("online", function () { schedule(0); });
  form.addEventListener("submit", function () { clearTimeout(timer); });
})();
