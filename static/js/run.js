// The run page: renders the trajectory, streams new steps over the websocket, and on every
// (re)connect asks for the steps after the last one it holds, so nothing is lost or repeated.
// All agent text goes in through textContent (never innerHTML): output is shown escaped.
(function () {
  "use strict";

  const FOLD_LINES = 40;
  const config = document.getElementById("run-config");
  const list = document.getElementById("steps");
  const liveState = document.getElementById("live-state");
  let lastIndex = -1; // none held (imported MLGym runs number their steps from 0)
  let finished = config.dataset.active !== "1";
  let socket = null;
  let retryDelay = 500;
  let current = null;
  let startedAt = null;
  let wallTime = null;
  let wallTimer = null;
  let finalCatchUp = false; // asked once, at the end, for steps the final status counts but the page lacks
  const chartData = document.getElementById("score-series");
  const chartSeries = chartData ? JSON.parse(chartData.textContent) : [{ label: "this run", points: [] }];
  let chartDirty = false;
  const charted = new Set(chartSeries[0].points.map((p) => p[0])); // the server drew these already
  // Cumulative cost and tokens: absent (no #cost-series) when the steps carry no cost data.
  const costData = document.getElementById("cost-series");
  const costSeries = costData ? JSON.parse(costData.textContent) : null;
  const notes = JSON.parse(document.getElementById("step-notes").textContent);

  // -- ANSI: SGR colours become classes; every other escape sequence is dropped ------------
  // eslint-disable-next-line no-control-regex
  const ESCAPES = /\x1b\[([0-9;?]*)([A-Za-z])|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][A-Za-z0-9]|\x1b[=>78DEHMcn]/g;

  function applySgr(params, style) {
    const codes = params === "" ? [0] : params.split(";").map((n) => parseInt(n, 10) || 0);
    for (let i = 0; i < codes.length; i++) {
      const c = codes[i];
      if (c === 0) { style.fg = null; style.bg = null; style.bold = style.dim = style.italic = style.underline = false; }
      else if (c === 1) style.bold = true;
      else if (c === 2) style.dim = true;
      else if (c === 3) style.italic = true;
      else if (c === 4) style.underline = true;
      else if (c === 22) style.bold = style.dim = false;
      else if (c === 23) style.italic = false;
      else if (c === 24) style.underline = false;
      else if (c >= 30 && c <= 37) style.fg = c - 30;
      else if (c >= 90 && c <= 97) style.fg = c - 90;
      else if (c === 39) style.fg = null;
      else if (c >= 40 && c <= 47) style.bg = c - 40;
      else if (c >= 100 && c <= 107) style.bg = c - 100;
      else if (c === 49) style.bg = null;
      else if (c === 38 || c === 48) i += codes[i + 1] === 5 ? 2 : 4; // 256 / true colour: skipped
    }
  }

  function appendText(parent, text, style) {
    if (!text) return;
    const classes = [];
    if (style.bold) classes.push("ansi-bold");
    if (style.dim) classes.push("ansi-dim");
    if (style.italic) classes.push("ansi-italic");
    if (style.underline) classes.push("ansi-underline");
    if (style.fg !== null) classes.push("ansi-fg-" + style.fg);
    if (style.bg !== null) classes.push("ansi-bg-" + style.bg);
    if (!classes.length) { parent.appendChild(document.createTextNode(text)); return; }
    const span = document.createElement("span");
    span.className = classes.join(" ");
    span.textContent = text;
    parent.appendChild(span);
  }

  function renderAnsi(parent, raw) {
    // Carriage-return progress bars: keep what the terminal would show last on each line.
    const text = raw.split("\n").map((line) => {
      const parts = line.split("\r");
      return parts.length > 1 ? parts.filter((p) => p !== "").pop() || "" : line;
    }).join("\n");
    const style = { fg: null, bg: null, bold: false, dim: false, italic: false, underline: false };
    let last = 0;
    ESCAPES.lastIndex = 0;
    let match;
    while ((match = ESCAPES.exec(text)) !== null) {
      appendText(parent, text.slice(last, match.index), style);
      if (match[2] === "m") applySgr(match[1], style);
      last = ESCAPES.lastIndex;
    }
    appendText(parent, text.slice(last), style);
  }

  // -- rendering ----------------------------------------------------------------------------
  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // Same rule as the server's run_numbers.score_text: 4 decimals from 1 up, else 4 significant digits.
  function formatScore(value) {
    if (value === null || value === undefined) return "–";
    if (!Number.isFinite(value)) return String(value);
    if (value === 0) return "0";
    const decimals = Math.abs(value) >= 1 ? 4 : Math.min(12, 3 - Math.floor(Math.log10(Math.abs(value))));
    const text = value.toFixed(decimals);
    return text.includes(".") ? text.replace(/0+$/, "").replace(/\.$/, "") : text;
  }

  function setScore(id, value) {
    const node = document.getElementById(id);
    node.textContent = formatScore(value);
    node.title = value === null ? "" : String(value);
  }

  function scoreText(score) {
    if (!score) return "";
    if (score.error) return score.kind + ": failed";
    const value = score.primary === null ? JSON.stringify(score.metrics) : formatScore(score.primary);
    return score.kind + ": " + value;
  }

  // MLGym's prompt makes models open every thought with the keyword DISCUSSION: it says nothing.
  function cleanThought(thought) {
    return (thought || "").replace(/^\s*DISCUSSION\b[ \t]*:?\s*/, "").trim();
  }

  function renderStep(step) {
    const item = el("li", "step");
    item.id = "step-" + step.index;
    item.dataset.index = step.index;
    const header = el("header");
    const link = el("a", "", "Step " + step.index);
    link.href = "#step-" + step.index;
    link.title = "link to this step";
    header.appendChild(link);
    header.appendChild(el("span", "", step.execution_time === null ? "time unknown" : step.execution_time.toFixed(2) + " s"));
    if (step.cost) header.appendChild(el("span", "", "$" + step.cost.toFixed(4)));
    if (step.state && step.state.working_dir) header.appendChild(el("span", "", step.state.working_dir));
    if (step.score) {
      const chip = el("span", "badge " + (step.score.error ? "bad" : "ok"), scoreText(step.score));
      if (step.score.primary !== null && !step.score.error) chip.title = String(step.score.primary);
      header.appendChild(chip);
    }
    if (step.state && step.state.forked_from) {
      header.appendChild(el("span", "badge", "from the parent run (step " + step.state.forked_from.index + ")"));
    }
    if (config.dataset.forkUrl) header.appendChild(forkHere(step.index));
    if (step.state && step.state.replay) {
      const same = step.state.replay.same;
      header.appendChild(el("span", "badge " + (same ? "ok" : "warn"), same ? "replay: same output" : "replay: output differs"));
    }
    item.appendChild(header);
    const thought = cleanThought(step.thought);
    if (thought) item.appendChild(el("div", "thought", thought));
    item.appendChild(el("pre", "action", step.action.replace(/\n$/, "")));
    const output = el("pre", "obs");
    renderAnsi(output, step.observation || "");
    const lines = (step.observation || "").split("\n").length;
    if (lines > FOLD_LINES) {
      const fold = el("details", "fold");
      fold.appendChild(el("summary", "", "Output (" + lines + " lines)"));
      fold.appendChild(output);
      item.appendChild(fold);
    } else if (step.observation) {
      item.appendChild(output);
    }
    // The evaluator's error, unless the output already shows it (a failed validate prints it there).
    if (step.score && step.score.error && !(step.observation || "").includes(step.score.error.trim())) {
      item.appendChild(el("pre", "obs", step.score.error));
    }
    if (step.state && step.state.replay && step.state.replay.diff) {
      const fold = el("details", "fold");
      fold.appendChild(el("summary", "", "Difference from the original output"));
      fold.appendChild(el("pre", "obs", step.state.replay.diff));
      item.appendChild(fold);
    }
    item.dataset.text = [step.thought, step.action, step.observation].join("\n").toLowerCase();
    renderNotes(item, step.index);
    return item;
  }

  function forkHere(index) {
    const fork = el("a", "fork-here", "Fork from here");
    fork.href = config.dataset.forkUrl + "?step=" + index;
    return fork;
  }

  function addSteps(steps) {
    const atBottom = window.innerHeight + window.scrollY >= document.body.scrollHeight - 40;
    let added = 0;
    for (const step of steps) {
      if (step.index <= lastIndex) continue; // already shown: never twice
      const item = renderStep(step);
      applySearch(item);
      list.appendChild(item);
      lastIndex = step.index;
      added++;
      if (costSeries) {
        const cost = costSeries.cost[0].points, tokens = costSeries.tokens[0].points;
        const last = cost.length ? cost[cost.length - 1] : null;
        if (!last || last[0] < step.index) {
          cost.push([step.index, (last ? last[1] : 0) + (step.cost || 0), "cost"]);
          const lastTokens = tokens.length ? tokens[tokens.length - 1][1] : 0;
          tokens.push([step.index, lastTokens + (step.tokens_sent || 0) + (step.tokens_received || 0), "tokens"]);
        }
      }
      if (step.score && !step.score.error && step.score.primary !== null && !charted.has(step.index)) {
        charted.add(step.index);
        chartSeries[0].points.push([step.index, step.score.primary, step.score.kind]);
        chartDirty = true;
      }
    }
    if (costSeries && added && window.scoreChart) drawCost();
    if (chartDirty && window.scoreChart) {
      document.getElementById("score-card").hidden = false;
      window.scoreChart(document.getElementById("score-chart"), chartSeries);
      chartDirty = false;
    }
    if (added) {
      document.getElementById("no-steps").hidden = true;
      const shown = document.getElementById("run-steps");
      shown.textContent = String(Math.max(Number(shown.textContent) || 0, list.children.length));
      if (atBottom && !finished && !location.hash) list.lastElementChild.scrollIntoView({ block: "end" });
    }
  }

  function drawCost() {
    const some = costSeries.cost[0].points.length > 0;
    document.getElementById("cost-empty").hidden = some;
    document.getElementById("cost-title").hidden = !some;
    document.getElementById("tokens-title").hidden = !some;
    window.scoreChart(document.getElementById("cost-chart"), costSeries.cost);
    window.scoreChart(document.getElementById("tokens-chart"), costSeries.tokens);
  }

  function showWall() {
    const wall = document.getElementById("run-wall");
    if (wallTime !== null) wall.textContent = wallTime.toFixed(1) + " s";
    else if (startedAt !== null) wall.textContent = ((Date.now() - startedAt) / 1000).toFixed(0) + " s";
  }

  function setStatus(run) {
    const badge = document.getElementById("run-status");
    badge.textContent = run.status;
    badge.className = "badge " + ({ finished: "ok", failed: "bad", interrupted: "bad", running: "warn", cancelling: "warn" }[run.status] || "");
    startedAt = run.started_at ? Date.parse(run.started_at) : null;
    wallTime = run.finished ? run.wall_time : null;
    showWall();
    const exit = document.getElementById("run-exit");
    exit.textContent = run.exit_text || "–";
    exit.title = run.exit_status || "";
    if (run.step_count || list.children.length) document.getElementById("run-steps").textContent = String(run.step_count);
    // null: the imported file did not give the number (never shown as 0).
    document.getElementById("run-cost").textContent = run.cost === null ? "unknown" : "$" + run.cost.toFixed(4);
    document.getElementById("run-tokens").textContent =
      (run.tokens_sent === null ? "unknown" : run.tokens_sent) + " / " + (run.tokens_received === null ? "unknown" : run.tokens_received);
    setScore("run-best", run.best_attempt);
    setScore("run-submission", run.best_submission);
    showUnrecorded(run.unrecorded);
    if (run.error) { const e = document.getElementById("run-error"); e.textContent = run.error; e.hidden = false; }
    if (run.status === "cancelling") {
      // Asked already: the worker stops and sends the final status after its last step.
      const cancel = document.getElementById("cancel-form");
      if (cancel) cancel.remove();
    }
    if (run.finished && socket && socket.readyState === WebSocket.OPEN && !finalCatchUp &&
        run.step_count > list.children.length) {
      // The end counts steps this page lacks: ask for them (the reply ends with the status again).
      finalCatchUp = true;
      socket.send(JSON.stringify({ after: lastIndex }));
      return;
    }
    if (run.finished) {
      // The whole header ends with the run: no Cancel, the final wall time, the real outcome.
      finished = true;
      liveState.textContent = run.status;
      const cancel = document.getElementById("cancel-form");
      if (cancel) cancel.remove();
      showAfterFinish(run);
      if (wallTimer) { clearInterval(wallTimer); wallTimer = null; }
      if (socket) socket.close();
    }
  }

  function showUnrecorded(unrecorded) {
    const row = document.getElementById("run-unrecorded");
    if (!row || !unrecorded) return;
    document.getElementById("run-unrecorded-text").textContent =
      "$" + unrecorded.cost.toFixed(4) + " (" + unrecorded.tokens_sent + " / " + unrecorded.tokens_received + " tokens, " +
      unrecorded.api_calls + " call" + (unrecorded.api_calls === 1 ? "" : "s") + "): the model's last reply, recorded in " +
      "no step because the run was cancelled before its command ran or while it ran; counted in the run's cost and tokens";
    row.hidden = false;
  }

  // Cancel asks first. Without JavaScript the form posts without confirm=yes and the server asks
  // on a page of its own.
  const cancelForm = document.getElementById("cancel-form");
  if (cancelForm) {
    cancelForm.addEventListener("submit", function (event) {
      if (!window.confirm("Cancel this run? It stops before its next command (one already running is stopped " +
          "within seconds); the steps so far are kept.")) {
        event.preventDefault();
        return;
      }
      const confirmed = el("input");
      confirmed.type = "hidden";
      confirmed.name = "confirm";
      confirmed.value = "yes";
      cancelForm.appendChild(confirmed);
    });
  }

  // The actions valid only after the end (Replay, Resume, Fork), served in a <template> while the
  // run is active: the ones that fit how it ended join the toolbar. data-when-status lists the
  // statuses an action fits.
  function showAfterFinish(run) {
    const template = document.getElementById("after-finish");
    if (!template) return;
    const toolbar = document.getElementById("run-actions");
    const hasSteps = !!(run.step_count || list.children.length);
    for (const action of template.content.children) {
      if (document.getElementById(action.id)) continue;
      if (action.dataset.whenStatus && !action.dataset.whenStatus.split(" ").includes(run.status)) continue;
      if ("needsSteps" in action.dataset && !hasSteps) continue;
      toolbar.appendChild(action.cloneNode(true));
    }
    template.remove();
    // "Fork from here" on every step, as the page of an ended run has them (the server rendered the
    // URL only for those who may fork: the owner and admins).
    const later = config.dataset.forkLaterUrl;
    if (later && hasSteps && (config.dataset.forkStatuses || "").split(" ").includes(run.status)) {
      config.dataset.forkUrl = later;
      for (const item of list.children) {
        const header = item.querySelector("header");
        if (header && !header.querySelector(".fork-here")) header.appendChild(forkHere(item.dataset.index));
      }
    }
  }

  // -- step notes: shown under their step, added and deleted by plain form posts ---------------
  function renderNotes(item, index) {
    const box = el("div", "step-notes");
    const mine = notes[String(index)] || [];
    if (mine.length) {
      const ul = el("ul", "notes");
      for (const note of mine) {
        const li = el("li", "note");
        li.appendChild(el("strong", "", (note.author || "deleted user") + ": "));
        li.appendChild(el("span", "note-body", note.body));
        for (const tag of note.tags) li.appendChild(el("span", "badge note-tag", tag));
        if (note.can_delete) {
          const del = document.getElementById("note-delete-template").content.firstElementChild.cloneNode(true);
          del.action = config.dataset.noteDeleteUrl + note.code + "/delete/";
          li.appendChild(document.createTextNode(" "));
          li.appendChild(del);
        }
        ul.appendChild(li);
      }
      box.appendChild(ul);
    }
    const form = document.getElementById("note-form-template").content.firstElementChild.cloneNode(true);
    form.action = config.dataset.notesUrl + index + "/notes/";
    box.appendChild(form);
    item.appendChild(box);
  }

  // -- live stream --------------------------------------------------------------------------
  function connect() {
    if (finished) return;
    socket = new WebSocket(window.refereeSocketUrl(config.dataset.wsPath));
    socket.onopen = function () {
      retryDelay = 500;
      liveState.textContent = "live";
      socket.send(JSON.stringify({ after: lastIndex }));
    };
    socket.onmessage = function (event) {
      const message = JSON.parse(event.data);
      if (message.type === "steps") addSteps(message.steps);
      else if (message.type === "status") setStatus(message.run);
    };
    socket.onclose = function (event) {
      socket = null;
      if (finished) return;
      if (event.code === 4401 || event.code === 4403) {
        // Access withdrawn (share revoked, role removed, signed out): reconnecting would be refused.
        liveState.textContent = "access withdrawn";
        return;
      }
      liveState.textContent = "reconnecting…";
      setTimeout(connect, retryDelay);
      retryDelay = Math.min(retryDelay * 2, 10000);
    };
  }

  // -- navigation and search ------------------------------------------------------------------
  function visibleSteps() {
    return Array.from(list.children).filter((item) => !item.hidden);
  }

  function focusStep(item) {
    if (!item) return;
    if (current) current.classList.remove("current");
    current = item;
    item.classList.add("current");
    item.scrollIntoView({ block: "start" });
    history.replaceState(null, "", "#" + item.id);
  }

  function move(delta) {
    const items = visibleSteps();
    if (!items.length) return;
    const at = current ? items.indexOf(current) : -1;
    const next = at === -1 ? (delta > 0 ? 0 : items.length - 1) : Math.max(0, Math.min(items.length - 1, at + delta));
    focusStep(items[next]);
  }

  const search = document.getElementById("step-search");
  function applySearch(item) {
    const query = search.value.trim().toLowerCase();
    item.hidden = query !== "" && !item.dataset.text.includes(query);
  }
  search.addEventListener("input", function () {
    Array.from(list.children).forEach(applySearch);
    const query = search.value.trim();
    document.getElementById("search-count").textContent = query ? visibleSteps().length + " matching step(s)" : "";
  });
  document.getElementById("step-prev").addEventListener("click", () => move(-1));
  document.getElementById("step-next").addEventListener("click", () => move(1));
  document.getElementById("step-last").addEventListener("click", () => focusStep(list.lastElementChild));
  document.addEventListener("keydown", function (event) {
    if (event.target.closest("input, textarea, select")) return;
    if (event.key === "j") move(1);
    else if (event.key === "k") move(-1);
  });

  const initialQuery = new URLSearchParams(location.search).get("q");
  if (initialQuery) search.value = initialQuery; // from a runs-list search: the matching steps only
  if (window.scoreChart && chartSeries[0].points.length) window.scoreChart(document.getElementById("score-chart"), chartSeries);
  if (window.scoreChart && costSeries) drawCost();
  addSteps(JSON.parse(document.getElementById("initial-steps").textContent));
  setStatus(JSON.parse(document.getElementById("initial-run").textContent));
  if (initialQuery) search.dispatchEvent(new Event("input"));
  if (!finished) wallTimer = setInterval(showWall, 1000);
  function focusHash() {
    if (location.hash.startsWith("#step-")) focusStep(document.getElementById(location.hash.slice(1)));
  }
  window.addEventListener("hashchange", focusHash);
  focusHash();
  connect();
})();
