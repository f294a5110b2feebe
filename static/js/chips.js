// Chip filters: typing in a chip list's search box hides the chips that do not match (ticked ones stay).
(function () {
  "use strict";
  document.querySelectorAll("fieldset.chips").forEach(function (fieldset) {
    var search = fieldset.querySelector(".chip-search");
    if (!search) return;
    search.addEventListener("input", function () {
      var needle = search.value.trim().toLowerCase();
      fieldset.querySelectorAll("label.chip").forEach(function (chip) {
        var ticked = chip.querySelector("input").checked;
        chip.hidden = needle !== "" && !ticked && chip.textContent.toLowerCase().indexOf(needle) === -1;
      });
    });
    // Enter in the search box must not submit the form half-chosen.
    search.addEventListener("keydown", function (event) { if (event.key === "Enter") event.preventDefault(); });
  });
})();
