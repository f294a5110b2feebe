from django.urls import include, path

from review import views

app_name = "review"

urlpatterns = [
    path("review/", views.queue, name="queue"),
    path("review/a/<str:code>/", views.item, name="item"),
    path("review/a/<str:code>/draft", views.draft, name="draft"),
    path("review/a/<str:code>/submit", views.submit, name="submit"),
    path("review/a/<str:code>/report", views.report, name="report"),
    path("review/a/<str:code>/f/<str:fid>", views.figure, name="figure"),
    path("review/a/<str:code>/s/<str:fid>", views.supplementary, name="supplementary"),
    path("review/campaigns/", views.campaign_list, name="campaign_list"),
    path("review/campaigns/new", views.campaign_create, name="campaign_create"),
    path("review/campaigns/<uuid:code>/", views.campaign_detail, name="campaign_detail"),
    path("review/campaigns/<uuid:code>/assign", views.campaign_assign_view, name="campaign_assign"),
    path("review/campaigns/<uuid:code>/reclaim", views.campaign_reclaim_view, name="campaign_reclaim"),
    path("review/campaigns/<uuid:code>/reblind", views.campaign_reblind_view, name="campaign_reblind"),
    path(
        "review/campaigns/<uuid:code>/assignments/<str:acode>/reassign",
        views.assignment_reassign_view,
        name="assignment_reassign",
    ),
    path("review/campaigns/<uuid:code>/conflicts", views.conflict_add_view, name="conflict_add"),
    path("review/campaigns/<uuid:code>/export.<str:fmt>", views.campaign_export, name="campaign_export"),
    path("", include("review.agreement.urls")),  # /agreement/<campaign code>/ (review.agreement.views)
]
