from django.urls import path

from review import control_views, setup_views, tells_views, views

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
    # Set-up without the Django admin (review.setup_views).
    path("review/campaigns/<uuid:code>/members", setup_views.campaign_members_add, name="campaign_members_add"),
    path("review/campaigns/<uuid:code>/invite", setup_views.campaign_members_invite, name="campaign_members_invite"),
    path("review/campaigns/<uuid:code>/items", setup_views.campaign_items_add, name="campaign_items_add"),
    path("review/campaigns/<uuid:code>/plan", setup_views.campaign_plan, name="campaign_plan"),
    path("review/campaigns/<uuid:code>/i/<str:icode>/preview", setup_views.item_preview, name="item_preview"),
    path(
        "review/campaigns/<uuid:code>/i/<str:icode>/preview/f/<str:fid>",
        setup_views.item_preview_figure,
        name="item_preview_figure",
    ),
    # Control room (review.control_views).
    path("review/campaigns/<uuid:code>/open", tells_views.campaign_open_view, name="campaign_open"),
    path("review/campaigns/<uuid:code>/close", control_views.campaign_close_view, name="campaign_close"),
    path("review/campaigns/<uuid:code>/reopen", control_views.campaign_reopen_view, name="campaign_reopen"),
    path("review/campaigns/<uuid:code>/remind", control_views.campaign_remind_view, name="campaign_remind"),
    path("review/campaigns/<uuid:code>/judge", control_views.campaign_judge_view, name="campaign_judge"),
    path(
        "review/campaigns/<uuid:code>/reports/<int:report_id>/resolve",
        control_views.report_resolve_view,
        name="report_resolve",
    ),
    path("review/invitations/", setup_views.invitations, name="invitations"),
    path("review/invitations/<uuid:icode>/resend", setup_views.invitation_resend_view, name="invitation_resend"),
    path("review/invitations/<uuid:icode>/revoke", setup_views.invitation_revoke_view, name="invitation_revoke"),
]
