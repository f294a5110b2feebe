// Compare page: a folded stretch of steps with the same action becomes its rows on demand, built
// from the data the page carries (#folded-rows); text goes in as text, never as HTML.
(function () {
  "use strict";
  const table = document.getElementById("compare-steps");
  const data = document.getElementById("folded-rows");
  if (!table || !data) return;
  const folded = JSON.parse(data.textContent);

  function cell(parent, tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    parent.appendChild(node);
    return node;
  }

  function side(row, url, index, action, score) {
    const num = cell(row, "td", "num");
    const link = cell(num, "a", "", String(index));
    link.href = url + "#step-" + index;
    const td = cell(row, "td");
    cell(td, "pre", "action", action);
    if (score) cell(td, "span", "badge", score);
  }

  table.addEventListener("click", function (event) {
    const button = event.target.closest("button.fold-open");
    if (!button) return;
    const fold = button.closest("tr.fold");
    const rows = folded[fold.dataset.fold] || [];
    const fragment = document.createDocumentFragment();
    for (const [aIndex, aAction, aScore, bIndex, bAction, bScore, sameOutput] of rows) {
      const tr = document.createElement("tr");
      tr.className = "same unfolded";
      side(tr, table.dataset.aUrl, aIndex, aAction, aScore);
      side(tr, table.dataset.bUrl, bIndex, bAction, bScore);
      const verdict = cell(tr, "td");
      cell(verdict, "span", "badge ok", "same action");
      if (!sameOutput) {
        verdict.appendChild(document.createTextNode(" "));
        cell(verdict, "span", "badge warn", "output differs");
      }
      fragment.appendChild(tr);
    }
    fold.replaceWith(fragment);
  });
})();
