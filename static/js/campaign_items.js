// The new-campaign form's item picker: the server searches and pages the chosen stage's candidates
// (review:campaign_candidates returns one page of rows); picks are kept in "Selected on other pages"
// while the admin searches or pages, so every pick is posted. Changing the stage drops the other
// stage's picks (and says so), lists the new stage's items and chooses the stage's rubric. Without
// script the same search is a GET of the form page. A campaign's page uses the same picker for
// "add items": its stage is fixed (data-stage, no stage menu), the endpoint leaves out the items
// the campaign has, and picks are posted under data-field.
(function () {
  "use strict";
  var picker = document.getElementById("picker-items");
  if (!picker) return;
  var form = picker.closest("form");
  var stageSel = picker.dataset.stageSelect ? document.querySelector(picker.dataset.stageSelect) : null;
  var rubricSel = picker.dataset.rubricSelect ? document.querySelector(picker.dataset.rubricSelect) : null;
  var rubricData = document.getElementById("stage-rubrics");
  var rubrics = rubricData ? JSON.parse(rubricData.textContent) : {};
  var search = picker.querySelector("[data-candidate-search]");
  var searchForm = document.getElementById("candidate-search");
  var pageBox = picker.querySelector("[data-candidate-page-box]");
  var chosenBox = picker.querySelector("[data-candidate-chosen-box]");
  var chosen = picker.querySelector("[data-candidate-chosen]");
  var all = picker.querySelector("[data-candidate-all]");
  var countEl = picker.querySelector("[data-candidate-count]");
  var note = picker.querySelector("[data-candidate-note]");
  var asked = 0;

  function boxes(root) { return Array.prototype.slice.call(root.querySelectorAll("input[type=checkbox]")); }
  function pageBoxes() { return boxes(pageBox); }
  function picked() { return boxes(chosen).filter(function (b) { return b.checked; }); }
  function stage() { return stageSel ? stageSel.value : picker.dataset.stage; }
  function field() { return picker.dataset.field || (stage() === "trajectory" ? "runs" : "artifacts"); }

  // A pick lives in the chosen list (which posts it); the page's box of the same item mirrors it.
  function keep(box) {
    var existing = chosen.querySelector('li[data-pk="' + box.value + '"]');
    if (box.checked && !existing) {
      var li = box.closest("li").cloneNode(true);
      var copy = li.querySelector("input");
      copy.name = box.dataset.field || field();
      copy.checked = true;
      chosen.appendChild(li);
    } else if (!box.checked && existing) {
      existing.remove();
    }
  }
  function adopt() {
    // The rows of a page post nothing themselves: their picks are copied to the chosen list.
    pageBoxes().forEach(function (box) {
      box.dataset.field = box.name;
      box.removeAttribute("name");
      if (box.checked) keep(box);
      else box.checked = !!chosen.querySelector('li[data-pk="' + box.value + '"]');
    });
    count();
  }
  function count() {
    var n = picked().length;
    var onPage = pageBoxes();
    // The chosen list shows only picks that are not on the shown page.
    boxes(chosen).forEach(function (b) {
      b.closest("li").hidden = onPage.some(function (p) { return p.value === b.value; });
    });
    chosenBox.hidden = !boxes(chosen).some(function (b) { return !b.closest("li").hidden; });
    countEl.textContent = n + " selected";
    all.checked = onPage.length > 0 && onPage.every(function (b) { return b.checked; });
  }
  function load(page) {
    var ask = ++asked;
    var query = new URLSearchParams({ stage: stage(), q: search.value.trim(), page: String(page || 1) });
    pageBox.setAttribute("aria-busy", "true");
    fetch(picker.dataset.candidates + "?" + query.toString(), { credentials: "same-origin" })
      .then(function (r) {
        return r.text().then(function (text) {
          if (!r.ok) throw new Error(text || "error " + r.status);
          return text;
        });
      })
      .then(function (html) {
        if (ask !== asked) return; // a later search answered first
        pageBox.innerHTML = html;
        adopt();
      })
      .catch(function (err) {
        if (ask !== asked) return;
        note.hidden = false;
        note.textContent = "The items could not be listed: " + err.message;
      })
      .finally(function () { if (ask === asked) pageBox.removeAttribute("aria-busy"); });
  }

  var timer = null;
  search.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(function () { load(1); }, 250);
  });
  searchForm.addEventListener("submit", function (e) { e.preventDefault(); clearTimeout(timer); load(1); });
  pageBox.addEventListener("click", function (e) {
    var link = e.target.closest("[data-candidate-page]");
    if (!link) return;
    e.preventDefault();
    load(link.dataset.candidatePage);
  });
  pageBox.addEventListener("change", function (e) {
    if (e.target.type !== "checkbox") return;
    keep(e.target);
    count();
  });
  chosen.addEventListener("change", function (e) {
    if (e.target.checked) return;
    var li = e.target.closest("li");
    var mirror = pageBox.querySelector('input[value="' + e.target.value + '"]');
    if (mirror) mirror.checked = false;
    li.remove();
    count();
  });
  all.addEventListener("change", function () {
    pageBoxes().forEach(function (b) { b.checked = all.checked; keep(b); });
    count();
  });
  if (stageSel) stageSel.addEventListener("change", function () {
    var dropped = picked().length;
    chosen.innerHTML = "";
    note.hidden = dropped === 0;
    note.textContent = dropped ? dropped + " selected item(s) of another stage were unselected." : "";
    var rubric = rubrics[stageSel.value];
    if (rubric && rubricSel) rubricSel.value = String(rubric);
    load(1);
  });
  form.addEventListener("submit", function (e) {
    var wrong = picked().filter(function (b) { return b.dataset.stage !== stage(); });
    if (wrong.length) {
      e.preventDefault();
      note.hidden = false;
      note.textContent = wrong.length + " selected item(s) are not of stage " + stage() +
        ": unselect them or change the stage.";
      note.scrollIntoView({ block: "center" });
    }
  });
  adopt();
})();
