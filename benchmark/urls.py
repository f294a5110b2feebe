"""Every page of the benchmark app, grouped by the package that owns it (namespace "benchmark")."""

from django.urls import path

from benchmark.leaderboards import views as leaderboards
from benchmark.llm import views as endpoints
from benchmark.research import views as research
from benchmark.runs import views as runs
from benchmark.tasks import views as tasks

app_name = "benchmark"

urlpatterns = [
    # runs/: launch, the live run page, downloads, cancel, share, replay
    path("runs/", runs.run_list, name="run_list"),
    path("runs/launch/", runs.run_launch, name="run_launch"),
    path("runs/compare/", runs.run_compare, name="run_compare"),
    path("runs/<uuid:code>/", runs.run_detail, name="run_detail"),
    path("runs/<uuid:code>/log.txt", runs.run_log, name="run_log"),
    path("runs/<uuid:code>/export.traj", runs.run_traj, name="run_traj"),
    path("runs/<uuid:code>/cancel/", runs.run_cancel, name="run_cancel"),
    path("runs/<uuid:code>/share/", runs.run_share, name="run_share"),
    path("runs/<uuid:code>/unshare/", runs.run_unshare, name="run_unshare"),
    path("runs/<uuid:code>/replay/", runs.run_replay, name="run_replay"),
    path("runs/<uuid:code>/resume/", runs.run_resume, name="run_resume"),
    path("runs/<uuid:code>/fork/", runs.run_fork, name="run_fork"),
    path("runs/<uuid:code>/steps/<int:index>/notes/", runs.step_note_add, name="step_note_add"),
    path("runs/<uuid:code>/notes/<uuid:note>/delete/", runs.step_note_delete, name="step_note_delete"),
    path("runs/<uuid:code>/notes.json", runs.run_notes, name="run_notes"),
    # tasks/: the current tasks and one version's page
    path("tasks/", tasks.task_list, name="task_list"),
    path("tasks/<uuid:code>/", tasks.task_detail, name="task_detail"),
    # leaderboards/: the live board, downloads, saved boards
    path("leaderboards/", leaderboards.leaderboard_page, name="leaderboard"),
    path("leaderboards/download.<str:fmt>", leaderboards.leaderboard_download, name="leaderboard_download"),
    path("leaderboards/runs/", leaderboards.leaderboard_cell, name="leaderboard_cell"),
    path("leaderboards/save", leaderboards.leaderboard_save, name="leaderboard_save"),
    path("leaderboards/<uuid:code>/", leaderboards.leaderboard_detail, name="leaderboard_detail"),
    path(
        "leaderboards/<uuid:code>/download.<str:fmt>",
        leaderboards.leaderboard_detail_download,
        name="leaderboard_detail_download",
    ),
    # research/: MLR-Bench tasks, the pipeline's runs, papers and files
    path("research/", research.research_home, name="research_home"),
    path("research/tasks/", research.research_tasks, name="research_tasks"),
    path("research/tasks/<uuid:code>/", research.research_task, name="research_task"),
    path("research/tasks/<uuid:code>/category/", research.research_task_category, name="research_task_category"),
    path("research/new/", research.research_new, name="research_new"),
    path("research/<uuid:code>/", research.research_run, name="research_run"),
    path("research/<uuid:code>/resume/", research.research_resume_view, name="research_resume"),
    path("research/<uuid:code>/paper/", research.research_paper, name="research_paper"),
    path("research/files/<uuid:code>/<path:path>", research.research_file, name="research_file"),
    # llm/: model endpoints (admins; researchers read them, and manage their own when allowed)
    path("endpoints/", endpoints.endpoint_list, name="endpoint_list"),
    path("endpoints/new/", endpoints.endpoint_new, name="endpoint_new"),
    path("endpoints/policy/", endpoints.endpoint_policy, name="endpoint_policy"),
    path("endpoints/<uuid:code>/", endpoints.endpoint_detail, name="endpoint_detail"),
    path("endpoints/<uuid:code>/edit/", endpoints.endpoint_edit, name="endpoint_edit"),
    path("endpoints/<uuid:code>/test/", endpoints.endpoint_test, name="endpoint_test"),
    path("endpoints/<uuid:code>/delete/", endpoints.endpoint_delete, name="endpoint_delete"),
]
