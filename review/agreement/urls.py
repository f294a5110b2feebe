from django.urls import path

from review.agreement import views

app_name = "agreement"

urlpatterns = [
    path("agreement/<uuid:code>/", views.agreement_campaign, name="campaign"),
    path("agreement/<uuid:code>/report.<str:fmt>", views.agreement_download, name="download"),
]
