"""Admin pages that set a campaign up and grow it without the Django admin: add reviewers (existing
or invited) and items, preview the assignment plan, preview an item as its reviewers see it, and
the invitations page (bulk invite, resend, revoke). Every view is admins only; writes are POST."""

from __future__ import annotations

import mimetypes
import uuid

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.models import Invitation
from accounts.roles import ADMIN, role_required
from accounts.services import InvitationRefused, invitation_revoke, mail_configured
from review import blinding, trajectory
from review.forms import score_dimensions
from review.models import Campaign, CampaignItem
from review.notices import assign_problems, invites_done
from review.services import AssignmentError, AssignResult, campaign_assign
from review.setup import InviteOutcome, campaign_grow, campaign_plan_preview, member_invitation_resend, reviewers_invite
from review.setup_forms import InviteFields, InviteForm, ItemsAddForm, MembersAddForm
from review.views import _file_response

INVITATIONS_SHOWN = 200


def _usable_lines(request: HttpRequest, form: InviteFields) -> bool:
    """True when there is something to invite: a valid form, or only some bad lines among good ones
    (those are reported and the good ones go ahead: bad input loses nothing that was valid)."""
    if form.is_valid():
        return True
    if not form.is_bound:
        return False
    if set(form.errors) - {"emails"} or not form.cleaned_data.get("lines"):
        return False
    for error in form.errors["emails"]:
        messages.error(request, f"Not invited: {error}")
    return True


def _report_growth(request: HttpRequest, members: int, items: int, result: AssignResult | None) -> None:
    messages.success(request, f"{members} reviewer(s) and {items} item(s) added.")
    if result is not None:
        messages.success(request, f"{result.created} new assignment(s) made for the new slots.")
        assign_problems(request, result)


@require_POST
@role_required(ADMIN)
def campaign_members_add(request: HttpRequest, code: str) -> HttpResponse:
    campaign = get_object_or_404(Campaign, code=code)
    form = MembersAddForm(request.POST, campaign=campaign)
    if not form.is_valid():
        messages.error(request, "Reviewers not added: " + "; ".join(form.errors.get("reviewers", ["choose some"])))
        return redirect("review:campaign_detail", campaign.code)
    try:
        _report_growth(request, *campaign_grow(campaign=campaign, reviewers=form.cleaned_data["reviewers"]))
    except AssignmentError as exc:
        messages.error(request, f"Reviewers not added: {exc}")
    return redirect("review:campaign_detail", campaign.code)


@require_POST
@role_required(ADMIN)
def campaign_members_invite(request: HttpRequest, code: str) -> HttpResponse:
    campaign = get_object_or_404(Campaign, code=code)
    form = InviteFields(request.POST)
    if not _usable_lines(request, form):
        for field, errors in form.errors.items():
            messages.error(request, f"Not invited ({field}): {' '.join(errors)}")
        return redirect("review:campaign_detail", campaign.code)
    data = form.cleaned_data
    outcome = reviewers_invite(
        lines=data["lines"], expertise=data.get("tags") or [], campaign=campaign, by=request.user,
        ttl_days=data.get("days"),
    )  # fmt: skip
    if outcome.issued and campaign.status == Campaign.Status.OPEN and campaign.assignments.exists():
        _report_growth(request, len(outcome.issued), 0, campaign_assign(campaign=campaign))
    return invites_done(request, outcome, reverse("review:campaign_detail", args=[campaign.code]))


@require_POST
@role_required(ADMIN)
def campaign_items_add(request: HttpRequest, code: str) -> HttpResponse:
    campaign = get_object_or_404(Campaign, code=code)
    form = ItemsAddForm(request.POST, campaign=campaign)
    if not form.is_valid():
        messages.error(
            request, f"Items not added: choose finished {campaign.stage} items that are not in the campaign yet."
        )
        return redirect("review:campaign_detail", campaign.code)
    picked = list(form.cleaned_data["artifacts"])  # runs, in a trajectory campaign (ItemsAddForm)
    if campaign.is_trajectory:
        _report_growth(request, *campaign_grow(campaign=campaign, runs=picked))
    else:
        _report_growth(request, *campaign_grow(campaign=campaign, artifacts=picked))
    return redirect("review:campaign_detail", campaign.code)


@require_GET
@role_required(ADMIN)
def campaign_plan(request: HttpRequest, code: str) -> HttpResponse:
    """The assignment plan as `Assign` would make it now; nothing is written."""
    campaign = get_object_or_404(Campaign.objects.select_related("rubric"), code=code)
    return render(
        request, "review/campaign_plan.html", {"campaign": campaign, "plan": campaign_plan_preview(campaign=campaign)}
    )


# ---------------------------------------------------------------- preview as a reviewer


def _preview_item(code: str, icode: str) -> CampaignItem:
    item = get_object_or_404(
        CampaignItem.objects.select_related("campaign__rubric", "artifact__research_run", "run__agent"),
        campaign__code=code,
        code=icode,
    )
    return item


def _preview_key(item: CampaignItem) -> str:
    # Figure ids are keyed per viewer; the preview's key is the item's, never an assignment's.
    return f"preview:{item.campaign.code}:{item.code}"


@require_GET
@role_required(ADMIN)
def item_preview(request: HttpRequest, code: str, icode: str) -> HttpResponse:
    """The item exactly as its reviewers' page renders it (the shared blinded render), and the rubric."""
    item = _preview_item(code, icode)
    trajectory_view, paper_html = None, ""
    if item.run_id:
        trajectory_view = trajectory.trajectory_context(item, [])
    else:
        template, used = blinding.item_render(item)
        base = reverse("review:item_preview_figure", args=[item.campaign.code, item.code, "x"])[:-1]
        paper_html = blinding.with_figure_urls(template, used, assignment_code=_preview_key(item), base_url=base)

    return render(
        request,
        "review/item_preview.html",
        {
            "item": item,
            "campaign": item.campaign,
            "paper_html": paper_html,
            "trajectory": trajectory_view,
            "dimensions": score_dimensions(item.campaign.rubric),
            "instructions": item.campaign.rubric.instructions,
        },
    )


@require_GET
@role_required(ADMIN)
def item_preview_figure(request: HttpRequest, code: str, icode: str, fid: str) -> HttpResponse:
    item = _preview_item(code, icode)
    artifact = item.artifact
    if artifact is None:  # a trajectory has no figures
        raise Http404("No such figure.")
    rel = blinding.find_file(
        files=artifact.files or [], assignment_code=_preview_key(item), fid=fid, extensions=blinding.IMAGE_EXTENSIONS
    )
    data = blinding.read_stored(str(artifact.code), rel) if rel else None
    if data is None:
        raise Http404("No such figure.")
    return _file_response(data, mimetypes.guess_type(rel)[0] or "application/octet-stream")


# ---------------------------------------------------------------- invitations


@require_http_methods(["GET", "POST"])
@role_required(ADMIN)
def invitations(request: HttpRequest) -> HttpResponse:
    form = InviteForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and _usable_lines(request, form):
        data = form.cleaned_data
        outcome = reviewers_invite(
            lines=data["lines"], expertise=data.get("tags") or [], campaign=data.get("campaign"),
            by=request.user, ttl_days=data.get("days"),
        )  # fmt: skip
        return invites_done(request, outcome, reverse("review:invitations"))
    rows = list(
        Invitation.objects.select_related("user", "created_by")
        .prefetch_related("memberships__campaign")
        .order_by("-created_at")[:INVITATIONS_SHOWN]
    )
    return render(
        request,
        "review/invitations.html",
        {"form": form, "rows": rows, "shown": INVITATIONS_SHOWN},
        status=400 if form.errors else 200,
    )


def _invitation(icode: str) -> Invitation:
    return get_object_or_404(Invitation, code=icode)


@require_POST
@role_required(ADMIN)
def invitation_resend_view(request: HttpRequest, icode: str) -> HttpResponse:
    invitation = _invitation(icode)
    try:
        issued = member_invitation_resend(invitation=invitation, by=request.user)
    except InvitationRefused as exc:
        messages.error(request, f"Not resent: {exc}")
        return redirect(_back(request))
    return invites_done(request, InviteOutcome(issued=[issued], mailed=mail_configured()), _back(request))


@require_POST
@role_required(ADMIN)
def invitation_revoke_view(request: HttpRequest, icode: str) -> HttpResponse:
    invitation = _invitation(icode)
    if invitation_revoke(invitation=invitation, by=request.user):
        messages.success(request, f"The link of {invitation.email} no longer works.")
    else:
        messages.error(request, f"Nothing revoked: the invitation of {invitation.email} is {invitation.state()}.")
    return redirect(_back(request))


def _back(request: HttpRequest) -> str:
    """Back to the campaign the button was pressed on, or to the invitations page (never off-site)."""
    try:
        code = uuid.UUID(request.POST.get("campaign") or "")
    except ValueError:
        return reverse("review:invitations")
    campaign = Campaign.objects.filter(code=code).first()
    return reverse("review:campaign_detail", args=[campaign.code]) if campaign else reverse("review:invitations")
