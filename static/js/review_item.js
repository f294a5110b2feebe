// Review item page: autosave drafts (debounced fetch POST with CSRF) and keep a copy in
// localStorage, so a dropped connection or a reload loses nothing; the copy syncs when the
// server is reachable again. Each save carries a revision counter: the server keeps only the
// newest, so out-of-order replies cannot overwrite newer text.
// Also: the phone's bottom-sheet rubric, the "N of M criteria scored" counter, validation before
// submitting (each gap named next to its criterion, a summary, focus on the first), and the
// "Report a problem" form sent without leaving the page.
(function () {
  "use strict";
  const client = JSON.parse(document.getElementById("review-client").textContent);
  const form = document.getElementById("review-form");
  const status = document.getElementById("save-status");
  const layout = document.querySelector(".review-layout");
  const toggle = document.getElementById("sheet-toggle");
  const key = "referee-review-draft:" + client.code;
  const DEBOUNCE_MS = 700;
  const RETRY_MS = 5000;

  // ---- bottom sheet (phones; CSS ignores it on wide screens)
  function openSheet(open) {
    layout.classList.toggle("sheet-open", open);
    toggle.setAttribute("aria-expanded", open ? "true" : "false");
  }
  layout.classList.add("sheet-ready");
  toggle.addEventListener("click", function () { openSheet(!layout.classList.contains("sheet-open")); });

  // ---- report a problem: the reviewer stays on the page, their draft untouched
  const reportForm = document.getElementById("report-form");
  const reportStatus = document.getElementById("report-status");
  reportForm.addEventListener("submit", async function (ev) {
    ev.preventDefault();
    if (!reportForm.reason.value) { reportStatus.textContent = "Choose what is wrong with the item."; reportForm.reason.focus(); return; }
    reportStatus.textContent = "Sending…";
    try {
      const resp = await fetch(reportForm.action, {
        method: "POST", credentials: "same-origin", headers: { Accept: "application/json" }, body: new FormData(reportForm),
      });
      const body = await resp.json().catch(function () { return {}; });
      if (resp.ok) {
        reportForm.reset();
        reportStatus.textContent = "Thank you: the organisers have your report. You can keep reviewing.";
      } else {
        reportStatus.textContent = body.error || ("Not sent (" + resp.status + ").");
      }
    } catch (e) {
      reportStatus.textContent = "Not sent: no connection. Try again in a moment.";
    }
  });

  // Closed (not submitted): a local copy of unsent changes stays, to be sent if the campaign reopens.
  if (client.locked) { if (!client.closed) localStorage.removeItem(key); return; }
  if (!form) return;

  // ---- criteria counter and validation
  const dims = Array.from(form.querySelectorAll("fieldset.dimension"));
  const counters = document.querySelectorAll(".criteria-count");
  const summary = document.getElementById("gap-summary");
  const confidence = form.querySelector("[name=confidence]");

  function missing(fs) {
    const out = [];
    if (!fs.querySelector("input[type=radio]:checked")) out.push("Choose a score for " + fs.dataset.name + ".");
    if (!fs.querySelector("textarea").value.trim()) out.push("Justify the " + fs.dataset.name + " score.");
    return out;
  }

  function count() {
    const done = dims.filter(function (fs) { return missing(fs).length === 0; }).length;
    counters.forEach(function (el) { el.textContent = done + " of " + dims.length + " criteria scored"; });
  }

  function clearErrors(fs) {
    fs.classList.remove("has-gap");
    fs.querySelectorAll(".field-error").forEach(function (el) { el.remove(); });
  }

  function showError(after, id, text) {
    const div = document.createElement("div");
    div.className = "errorlist field-error";
    if (id) div.id = id;
    div.textContent = text;
    after.insertAdjacentElement("afterend", div);
  }

  function validate() {
    const gaps = [];
    dims.forEach(function (fs) {
      clearErrors(fs);
      const problems = missing(fs);
      if (!problems.length) return;
      fs.classList.add("has-gap");
      // Each message under the part it is about: the score row, the justification box.
      problems.forEach(function (text) {
        showError(text.startsWith("Choose") ? fs.querySelector(".scores") : fs.querySelector("textarea"), null, text);
      });
      gaps.push({ anchor: fs.id, name: fs.dataset.name, focus: fs.querySelector(problems[0].startsWith("Choose") ? "input[type=radio]" : "textarea") });
    });
    const old = document.getElementById("confidence-error");
    if (old) old.remove();
    if (!confidence.value) {
      showError(confidence, "confidence-error", "Choose your confidence.");
      gaps.push({ anchor: confidence.id, name: "Confidence", focus: confidence });
    }
    summary.hidden = gaps.length === 0;
    if (gaps.length) {
      summary.querySelector(".gap-count").textContent = String(gaps.length);
      const list = summary.querySelector("ul");
      list.replaceChildren();
      gaps.forEach(function (g) {
        const li = document.createElement("li");
        const a = document.createElement("a");
        a.href = "#" + g.anchor;
        a.textContent = g.name;
        a.addEventListener("click", function (ev) { ev.preventDefault(); g.focus.focus(); });
        li.appendChild(a);
        list.appendChild(li);
      });
    }
    return gaps;
  }

  form.addEventListener("submit", function (ev) {
    if (ev.submitter && ev.submitter.value === "draft") return;  // a draft may be incomplete
    const gaps = validate();
    if (!gaps.length) return;
    ev.preventDefault();
    openSheet(true);
    gaps[0].focus.focus();
    gaps[0].focus.scrollIntoView({ block: "center" });
  });
  // Shrink the list as gaps close, on "input" (each keystroke, each pick) rather than "change": a
  // textarea's change fires on blur, and the layout shift it caused would swallow the very click
  // that blurred it (mousedown on one score button, mouseup on another).
  form.addEventListener("input", function () { if (!summary.hidden) validate(); });
  form.addEventListener("input", count);
  form.addEventListener("change", count);
  if (!summary.hidden) { openSheet(true); summary.focus(); }  // the server refused a submission: show where

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
    const data = { scores: scores, confidence: conf ? parseInt(conf, 10) : null };
    // Trajectory items: per-step error tags (selects outside the form, tied to it by form=).
    const tagged = document.querySelectorAll("select[data-step-tag]");
    if (tagged.length) {
      data.step_tags = [];
      tagged.forEach(function (sel) {
        if (!sel.value) return;
        const note = noteOf(sel);
        data.step_tags.push({ step: parseInt(sel.dataset.step, 10), tag: sel.dataset.tag, severity: sel.value, note: note ? note.value : "" });
      });
    }
    return data;
  }

  // A tag's note input (absent when the review is locked: the note is then shown as text).
  function noteOf(sel) {
    return document.querySelector('input[data-step-tag-note][data-step="' + CSS.escape(sel.dataset.step) + '"][data-tag="' + CSS.escape(sel.dataset.tag) + '"]');
  }

  // A note belongs to a tag: it can be typed once the tag has a severity (the server refuses a
  // note on a tag left at "no" rather than drop it).
  function noteState(sel) {
    const note = noteOf(sel);
    if (!note) return;
    note.disabled = !sel.value;
    note.title = sel.value ? "" : "choose a severity to add a note";
  }

  function apply(data) {
    Object.entries(data.scores || {}).forEach(function ([k, entry]) {
      const fs = form.querySelector('fieldset.dimension[data-key="' + CSS.escape(k) + '"]');
      if (!fs) return;
      fs.querySelectorAll("input[type=radio]").forEach(function (r) { r.checked = entry.score !== null && String(entry.score) === r.value; });
      fs.querySelector("textarea").value = entry.justification || "";
    });
    form.querySelector("[name=confidence]").value = data.confidence === null || data.confidence === undefined ? "" : String(data.confidence);
    if (Array.isArray(data.step_tags)) {
      const wanted = {};
      data.step_tags.forEach(function (t) { wanted[t.step + ":" + t.tag] = t; });
      document.querySelectorAll("select[data-step-tag]").forEach(function (sel) {
        const t = wanted[sel.dataset.step + ":" + sel.dataset.tag];
        sel.value = t ? t.severity : "";
        const note = noteOf(sel);
        if (note) note.value = t ? t.note || "" : "";
        noteState(sel);
      });
    }
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
      } else if (resp.status === 409 && body.closed) {
        say("Not saved: the campaign was closed. Your changes are kept on this device and sent if it reopens.");
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
      count();
      say("Restored unsaved changes from this device; syncing…");
      schedule(0);
    } else if (local && local.revision <= client.revision) {
      localStorage.removeItem(key);
    }
  } catch (e) { localStorage.removeItem(key); }

  form.addEventListener("input", changed);
  form.addEventListener("change", changed);
  const steps = document.getElementById("trajectory-steps");
  if (steps && !client.locked) {
    steps.querySelectorAll("select[data-step-tag]").forEach(noteState);
    steps.addEventListener("change", function (ev) {
      if (ev.target.matches("select[data-step-tag]")) { noteState(ev.target); changed(); }
    });
    steps.addEventListener("input", function (ev) { if (ev.target.matches("input[data-step-tag-note]")) changed(); });
  }
  window.addEventListener("online", function () { schedule(0); });
  form.addEventListener("submit", function (ev) { if (!ev.defaultPrevented) clearTimeout(timer); });
})();
