from django.urls import path

from review.campaigns import views as campaigns
from review.control import views as control
from review.io import views as io
from review.reviewing import views as reviewing
from review.trajectory import views as trajectory

app_name = "review"

urlpatterns = [
    path("review/", reviewing.queue, name="queue"),
    path("review/a/<str:code>/", reviewing.item, name="item"),
    path("review/a/<str:code>/draft", reviewing.draft, name="draft"),
    path("review/a/<str:code>/submit", reviewing.submit, name="submit"),
    path("review/a/<str:code>/report", reviewing.report, name="report"),
    path("review/a/<str:code>/f/<str:fid>", reviewing.figure, name="figure"),
    path("review/a/<str:code>/s/<str:fid>", reviewing.supplementary, name="supplementary"),
    path("review/campaigns/", campaigns.campaign_list, name="campaign_list"),
    path("review/campaigns/new", campaigns.campaign_create, name="campaign_create"),
    path("review/campaigns/new/candidates", campaigns.campaign_candidates, name="campaign_candidates"),
    path("review/campaigns/<uuid:code>/", campaigns.campaign_detail, name="campaign_detail"),
    path("review/campaigns/<uuid:code>/assign", campaigns.campaign_assign_view, name="campaign_assign"),
    path("review/campaigns/<uuid:code>/reclaim", campaigns.campaign_reclaim_view, name="campaign_reclaim"),
    path("review/campaigns/<uuid:code>/reblind", campaigns.campaign_reblind_view, name="campaign_reblind"),
    path(
        "review/campaigns/<uuid:code>/assignments/<str:acode>/reassign",
        campaigns.assignment_reassign_view,
        name="assignment_reassign",
    ),
    path("review/campaigns/<uuid:code>/conflicts", campaigns.conflict_add_view, name="conflict_add"),
    path("review/campaigns/<uuid:code>/export.<str:fmt>", io.campaign_export, name="campaign_export"),
    # Set-up without the Django admin.
    path("review/campaigns/<uuid:code>/members", campaigns.campaign_members_add, name="campaign_members_add"),
    path("review/campaigns/<uuid:code>/invite", campaigns.campaign_members_invite, name="campaign_members_invite"),
    path("review/campaigns/<uuid:code>/items", campaigns.campaign_items_add, name="campaign_items_add"),
    path(
        "review/campaigns/<uuid:code>/candidates", campaigns.campaign_item_candidates, name="campaign_item_candidates"
    ),
    path("review/campaigns/<uuid:code>/plan", campaigns.campaign_plan, name="campaign_plan"),
    path("review/campaigns/<uuid:code>/i/<str:icode>/preview", campaigns.item_preview, name="item_preview"),
    path(
        "review/campaigns/<uuid:code>/i/<str:icode>/preview/f/<str:fid>",
        campaigns.item_preview_figure,
        name="item_preview_figure",
    ),
    # Control room.
    path("review/campaigns/<uuid:code>/open", control.campaign_open_view, name="campaign_open"),
    path("review/campaigns/<uuid:code>/close", control.campaign_close_view, name="campaign_close"),
    path("review/campaigns/<uuid:code>/reopen", control.campaign_reopen_view, name="campaign_reopen"),
    path("review/campaigns/<uuid:code>/remind", control.campaign_remind_view, name="campaign_remind"),
    path("review/campaigns/<uuid:code>/judge", trajectory.campaign_judge_view, name="campaign_judge"),
    path(
        "review/campaigns/<uuid:code>/reports/<int:report_id>/resolve",
        control.report_resolve_view,
        name="report_resolve",
    ),
    path("review/invitations/", campaigns.invitations, name="invitations"),
    path("review/invitations/<uuid:icode>/resend", campaigns.invitation_resend_view, name="invitation_resend"),
    path("review/invitations/<uuid:icode>/revoke", campaigns.invitation_revoke_view, name="invitation_revoke"),
]
