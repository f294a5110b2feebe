// Draws the math of server-rendered markdown (templates/partials/markdown.html) with the vendored KaTeX.
// The server wrapped each formula it recognised in <span class="math">; only those are rendered.
(function () {
  "use strict";
  var DELIMITERS = [
    { left: "$$", right: "$$", display: true },
    { left: "\\[", right: "\\]", display: true },
    { left: "\\(", right: "\\)", display: false },
    { left: "$", right: "$", display: false },
  ];

  function renderMath(root) {
    if (typeof window.renderMathInElement !== "function") return;
    (root || document).querySelectorAll(".markdown span.math:not([data-rendered])").forEach(function (el) {
      window.renderMathInElement(el, { delimiters: DELIMITERS, throwOnError: false });
      el.setAttribute("data-rendered", "1");
    });
  }

  window.refereeRenderMath = renderMath;
  document.addEventListener("DOMContentLoaded", function () { renderMath(document); });
})();
