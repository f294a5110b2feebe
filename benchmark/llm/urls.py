from django.urls import path

from benchmark.llm import views

# Included by benchmark.urls (namespace "benchmark").
urlpatterns = [
    path("endpoints/", views.endpoint_list, name="endpoint_list"),
    path("endpoints/new/", views.endpoint_new, name="endpoint_new"),
    path("endpoints/policy/", views.endpoint_policy, name="endpoint_policy"),
    path("endpoints/<uuid:code>/", views.endpoint_detail, name="endpoint_detail"),
    path("endpoints/<uuid:code>/edit/", views.endpoint_edit, name="endpoint_edit"),
    path("endpoints/<uuid:code>/test/", views.endpoint_test, name="endpoint_test"),
    path("endpoints/<uuid:code>/delete/", views.endpoint_delete, name="endpoint_delete"),
]
