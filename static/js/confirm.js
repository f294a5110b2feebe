// Forms marked data-confirm="question" ask before they post (Close campaign, ...); answering no
// posts nothing. Without JavaScript the form posts as it is.
(function () {
  "use strict";
  document.addEventListener("submit", function (event) {
    const form = event.target;
    if (form instanceof HTMLFormElement && form.dataset.confirm && !window.confirm(form.dataset.confirm)) {
      event.preventDefault();
    }
  }, true);
})();
