// Leaderboard page: draws the server-built plotly figures (profiles, AUP vs cost, exit
// statuses, actions) with the vendored plotly.js. The figures arrive as JSON in
// <script id="leaderboard-figures">; nothing is fetched from the network.
(function () {
  "use strict";
  const source = document.getElementById("leaderboard-figures");
  if (!source) return;
  const figures = JSON.parse(source.textContent);
  const targets = {
    profiles: "chart-profiles",
    aup_cost: "chart-aup-cost",
    exit_status: "chart-exit-status",
    actions: "chart-actions",
  };
  for (const [key, id] of Object.entries(targets)) {
    const element = document.getElementById(id);
    const figure = figures[key];
    if (!element || !figure) continue;
    if (typeof window.Plotly === "undefined") {
      element.textContent = "Charts need static/vendor/plotly.min.js (run manage.py vendor_static).";
      element.classList.add("muted");
      continue;
    }
    window.Plotly.newPlot(element, figure.data, figure.layout, { responsive: true, displaylogo: false });
    element.dataset.drawn = "true";
  }

  // Scores per task: the chosen task's bars and, where the task has one, its baseline line.
  const choice = document.getElementById("task-score-choice");
  const taskChart = document.getElementById("chart-task-scores");
  const note = document.getElementById("task-baseline-note");
  function drawTask() {
    const figure = (figures.task_scores || {})[choice.value];
    if (!figure || typeof window.Plotly === "undefined") return;
    note.textContent = figure.baseline === null ? note.dataset.none : note.dataset.some;
    window.Plotly.react(taskChart, figure.data, figure.layout, { responsive: true, displaylogo: false });
    taskChart.dataset.drawn = choice.value;
  }
  if (choice && taskChart) {
    choice.addEventListener("change", drawTask);
    drawTask();
  }
})();
