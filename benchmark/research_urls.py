"""URLs of the research pages (/research/), spliced into benchmark/urls.py."""

from django.urls import path

from benchmark import research_views

urlpatterns = [
    path("research/", research_views.research_home, name="research_home"),
    path("research/tasks/", research_views.research_tasks, name="research_tasks"),
    path("research/tasks/<uuid:code>/", research_views.research_task, name="research_task"),
    path("research/tasks/<uuid:code>/category/", research_views.research_task_category, name="research_task_category"),
    path("research/new/", research_views.research_new, name="research_new"),
    path("research/<uuid:code>/", research_views.research_run, name="research_run"),
    path("research/<uuid:code>/resume/", research_views.research_resume_view, name="research_resume"),
    path("research/<uuid:code>/paper/", research_views.research_paper, name="research_paper"),
    path("research/files/<uuid:code>/<path:path>", research_views.research_file, name="research_file"),
]
