from django.urls import path

from review import views

app_name = "review"

urlpatterns = [
    path("review/", views.queue, name="queue"),
    path("review/campaigns/", views.campaign_list, name="campaign_list"),
]
