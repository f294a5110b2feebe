from django.urls import path

from review.agreement import views

app_name = "agreement"

urlpatterns = [
    path("agreement/<uuid:code>/", views.agreement_campaign, name="campaign"),
    path("agreement/<uuid:code>/report.<str:fmt>", views.agreement_download, name="download"),
    path("agreement/<uuid:code>/disagreements/", views.agreement_disagreements, name="disagreements"),
    path(
        "agreement/<uuid:code>/disagreements/<str:item_code>/",
        views.agreement_disagreement_item,
        name="disagreement_item",
    ),
    path("agreement/<uuid:code>/disagreements/<str:item_code>/tag", views.agreement_tag, name="tag"),
    path("agreement/<uuid:code>/tags.<str:fmt>", views.agreement_tags_export, name="tags_export"),
]
