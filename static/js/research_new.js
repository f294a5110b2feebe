// Research launch form: fields show only for the chosen mode and provider (data-shown-when=
// "field=value"), and the task menu (200 tasks) narrows as one types a title or id. Hidden fields
// are disabled too, so what the page does not show is not sent.
(function () {
  "use strict";
  var form = document.getElementById("research-launch");
  if (!form) return;

  function chosen(name) {
    var checked = form.querySelector('[name="' + name + '"]:checked');
    if (checked) return checked.value;
    var field = form.querySelector('select[name="' + name + '"]');
    return field ? field.value : "";
  }

  function sync() {
    form.querySelectorAll("[data-shown-when]").forEach(function (row) {
      var rule = row.dataset.shownWhen.split("=");
      var shown = chosen(rule[0]) === rule[1];
      row.hidden = !shown;
      row.querySelectorAll("input, select, textarea").forEach(function (el) { el.disabled = !shown; });
    });
  }
  form.addEventListener("change", sync);
  sync();

  var search = document.getElementById("task-search");
  var select = form.querySelector('select[name="task"]');
  if (search && select) {
    search.addEventListener("input", function () {
      var needle = search.value.trim().toLowerCase();
      var first = null;
      Array.prototype.forEach.call(select.options, function (option) {
        var match = !option.value || needle === "" || option.text.toLowerCase().indexOf(needle) !== -1;
        option.hidden = !match;
        if (match && option.value && !first) first = option;
      });
      // The one visible match is chosen; a hidden choice is never left selected.
      var current = select.options[select.selectedIndex];
      if (first && (!current || current.hidden || !current.value)) select.value = first.value;
    });
    search.addEventListener("keydown", function (event) { if (event.key === "Enter") event.preventDefault(); });
  }
})();
