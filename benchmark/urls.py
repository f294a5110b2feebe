from django.urls import path

from benchmark import leaderboards, research_urls, task_views, views

app_name = "benchmark"

urlpatterns = [
    path("runs/", views.run_list, name="run_list"),
    path("tasks/", task_views.task_list, name="task_list"),
    path("tasks/<uuid:code>/", task_views.task_detail, name="task_detail"),
    *leaderboards.urlpatterns,
    *research_urls.urlpatterns,
]
