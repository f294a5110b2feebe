from django.contrib import admin
from django.urls import include, path

from config import views

urlpatterns = [
    path("", views.home, name="home"),
    path("overview.json", views.overview_json, name="overview_json"),
    path("healthz", views.healthz, name="healthz"),
    path("accounts/", include("accounts.urls")),
    path("admin/", admin.site.urls),
    path("", include("sandbox.urls")),
    path("", include("benchmark.urls")),
    path("", include("judge.urls")),
    path("", include("review.urls")),
    path("", include("agreement.urls")),
]
