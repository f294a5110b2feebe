// Campaign set-up pickers: follow the chosen stage, search, select all shown, count; refuse a pick
// of another stage before the form is sent (the server refuses it too).
(function () {
  "use strict";
  function stageOf(picker) {
    var sel = picker.dataset.stageSelect ? document.querySelector(picker.dataset.stageSelect) : null;
    return sel ? sel.value : null;
  }
  function setup(picker) {
    var rows = Array.prototype.slice.call(picker.querySelectorAll(".picker-list li[data-label]"));
    var search = picker.querySelector("[data-picker-search]");
    var all = picker.querySelector("[data-picker-all]");
    var shownEl = picker.querySelector("[data-picker-shown]");
    var countEl = picker.querySelector("[data-picker-count]");
    var note = picker.querySelector("[data-picker-note]");
    var stageSel = picker.dataset.stageSelect ? document.querySelector(picker.dataset.stageSelect) : null;
    function visible() { return rows.filter(function (li) { return !li.hidden; }); }
    function box(li) { return li.querySelector("input[type=checkbox]"); }
    function count() {
      var shown = visible();
      var picked = rows.filter(function (li) { return box(li).checked; }).length;
      shownEl.textContent = shown.length;
      var stage = stageOf(picker);
      countEl.textContent = picked + " selected" + (stage ? " (" + shown.length + " " + stage + " item(s) listed)" : "");
      all.checked = shown.length > 0 && shown.every(function (li) { return box(li).checked; });
    }
    function apply() {
      var stage = stageOf(picker);
      var text = (search.value || "").trim().toLowerCase();
      rows.forEach(function (li) {
        var stageOk = !stage || li.dataset.stage === stage;
        li.hidden = !(stageOk && (!text || li.dataset.label.indexOf(text) !== -1));
      });
      count();
    }
    search.addEventListener("input", apply);
    all.addEventListener("change", function () {
      visible().forEach(function (li) { box(li).checked = all.checked; });
      count();
    });
    picker.addEventListener("change", function (e) { if (e.target !== all) count(); });
    if (stageSel) {
      stageSel.addEventListener("change", function () {
        var dropped = 0;
        rows.forEach(function (li) {
          if (li.dataset.stage !== stageSel.value && box(li).checked) { box(li).checked = false; dropped += 1; }
        });
        note.hidden = dropped === 0;
        note.textContent = dropped ? dropped + " selected item(s) of another stage were unselected." : "";
        apply();
      });
      var form = picker.closest("form");
      form.addEventListener("submit", function (e) {
        var wrong = rows.filter(function (li) { return box(li).checked && li.dataset.stage !== stageSel.value; });
        if (wrong.length) {
          e.preventDefault();
          note.hidden = false;
          note.textContent = wrong.length + " selected item(s) are not of stage " + stageSel.value +
            ": unselect them or change the stage.";
          note.scrollIntoView({ block: "center" });
        }
      });
    }
    apply();
  }
  document.querySelectorAll("[data-picker]").forEach(setup);
})();
