from django.urls import path

from judge import findings_views, views

app_name = "judge"

urlpatterns = [
    path("judge/rubrics/", views.rubric_list, name="rubric_list"),
    path("judge/rubrics/<uuid:code>/", views.rubric_detail, name="rubric_detail"),
    path("judge/rubrics/<slug:stage>/new/", views.rubric_new_version, name="rubric_new_version"),
    path("judge/rubrics/<slug:stage>/policy/", views.rubric_policy_update, name="rubric_policy"),
    path("judge/rubrics/<uuid:code>/default/", views.rubric_make_default, name="rubric_make_default"),
    path("judge/artifacts/<uuid:code>/", views.artifact_judgments, name="artifact_judgments"),
    path("judge/artifacts/<uuid:code>/request/", views.judgment_request_view, name="judgment_request"),
    path("judge/judgments/<uuid:code>/", views.judgment_detail, name="judgment_detail"),
    path("judge/findings/", findings_views.findings_page, name="findings"),
    path("judge/findings.json", findings_views.findings_json, name="findings_json"),
    path("judge/stepwise/<slug:stage>/", views.stepwise_leaderboard, name="stepwise_leaderboard"),
    path("judge/stepwise/<slug:stage>/leaderboard.<str:fmt>", views.stepwise_export, name="stepwise_export"),
    path("judge/stepwise/<slug:stage>/tasks/<uuid:code>/", views.stepwise_task, name="stepwise_task"),
]
