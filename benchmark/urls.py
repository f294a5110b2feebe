from django.urls import path

from benchmark import leaderboards, research_urls, run_views, task_views
from benchmark.llm import urls as endpoint_urls

app_name = "benchmark"

urlpatterns = [
    path("runs/", run_views.run_list, name="run_list"),
    path("runs/launch/", run_views.run_launch, name="run_launch"),
    path("runs/<uuid:code>/", run_views.run_detail, name="run_detail"),
    path("runs/<uuid:code>/log.txt", run_views.run_log, name="run_log"),
    path("runs/<uuid:code>/export.traj", run_views.run_traj, name="run_traj"),
    path("runs/<uuid:code>/cancel/", run_views.run_cancel, name="run_cancel"),
    path("runs/<uuid:code>/share/", run_views.run_share, name="run_share"),
    path("runs/<uuid:code>/unshare/", run_views.run_unshare, name="run_unshare"),
    path("runs/<uuid:code>/replay/", run_views.run_replay, name="run_replay"),
    path("tasks/", task_views.task_list, name="task_list"),
    path("tasks/<uuid:code>/", task_views.task_detail, name="task_detail"),
    *leaderboards.urlpatterns,
    *research_urls.urlpatterns,
    *endpoint_urls.urlpatterns,
]
