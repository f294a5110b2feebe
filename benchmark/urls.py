from django.urls import path

from benchmark import leaderboards, research_urls, views

app_name = "benchmark"

urlpatterns = [
    path("runs/", views.run_list, name="run_list"),
    path("tasks/", views.task_list, name="task_list"),
    *leaderboards.urlpatterns,
    *research_urls.urlpatterns,
]
