from django.urls import path

from agreement.lab import views as lab_views
from agreement.report import views as report_views
from agreement.workbench import views as workbench_views

app_name = "agreement"

urlpatterns = [
    path("agreement/lab/", lab_views.lab_home, name="lab"),
    path("agreement/lab/report.json", lab_views.lab_report, name="lab_report"),
    path("agreement/lab/gold-sets/", lab_views.lab_gold_set, name="lab_gold_set"),
    path("agreement/lab/configs/", lab_views.lab_config, name="lab_config"),
    path("agreement/lab/experiments/", lab_views.lab_experiment_start, name="lab_experiment_start"),
    path("agreement/lab/experiments/<uuid:code>/", lab_views.lab_experiment, name="lab_experiment"),
    path("agreement/lab/comparisons/", lab_views.lab_comparison_create, name="lab_comparison_create"),
    path("agreement/lab/comparisons/<uuid:code>/", lab_views.lab_comparison, name="lab_comparison"),
    path(
        "agreement/lab/comparisons/<uuid:code>/default/",
        lab_views.lab_comparison_make_default,
        name="lab_comparison_make_default",
    ),
    path("agreement/lab/judges/<slug:stage>/", lab_views.lab_judge_pair, name="lab_judge_pair"),
    path(
        "agreement/lab/judges/<slug:stage>/report.<str:fmt>",
        lab_views.lab_judge_pair_download,
        name="lab_judge_pair_download",
    ),
    path("agreement/lab/hallucination/", lab_views.lab_hallucination, name="lab_hallucination"),
    path("agreement/lab/fabrication/", lab_views.lab_fabrication, name="lab_fabrication"),
    path("agreement/lab/fabrication/audit/", lab_views.lab_fabrication_audit, name="lab_fabrication_audit"),
    path("agreement/<uuid:code>/", report_views.agreement_campaign, name="campaign"),
    path("agreement/<uuid:code>/criteria/<int:index>/", report_views.agreement_criterion, name="criterion"),
    path("agreement/<uuid:code>/report.<str:fmt>", report_views.agreement_download, name="download"),
    path("agreement/<uuid:code>/disagreements/", workbench_views.agreement_disagreements, name="disagreements"),
    path(
        "agreement/<uuid:code>/disagreements/<str:item_code>/",
        workbench_views.agreement_disagreement_item,
        name="disagreement_item",
    ),
    path("agreement/<uuid:code>/disagreements/<str:item_code>/tag", workbench_views.agreement_tag, name="tag"),
    path("agreement/<uuid:code>/tags.<str:fmt>", workbench_views.agreement_tags_export, name="tags_export"),
]
