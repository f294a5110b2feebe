"""Admin pages of a campaign: list, create, progress (with every blinding change), assign, reclaim,
reassign, re-check blinding; and setting it up and growing it without the Django admin: add
reviewers (existing or invited) and items, preview the assignment plan, preview an item as its
reviewers see it, the invitations page (bulk invite, resend, revoke). Admins only; writes are POST."""

from __future__ import annotations

import mimetypes
import uuid
from collections import defaultdict
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.core.paginator import Page, Paginator
from django.db.models import Q
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.models import Invitation
from accounts.roles import ADMIN, role_required
from accounts.services import InvitationRefused, invitation_revoke, mail_configured
from benchmark.models import Artifact
from review.assignment.services import (
    AssignmentError,
    AssignResult,
    assignment_reassign,
    campaign_assign,
    campaign_reclaim,
)
from review.blinding import blinded, tells
from review.blinding.responses import file_response
from review.blinding.services import item_prerender
from review.campaigns.candidates import STAGES, Candidates, candidates_page, field_for, stage_rubric, stage_rubrics
from review.campaigns.forms import (
    CampaignForm,
    ConflictForm,
    InviteFields,
    InviteForm,
    ItemsAddForm,
    MembersAddForm,
    ReassignForm,
)
from review.campaigns.notices import assign_problems, invites_done
from review.campaigns.services import campaign_create as campaign_create_service
from review.campaigns.services import campaign_progress, conflict_add
from review.campaigns.setup import (
    InviteOutcome,
    campaign_grow,
    campaign_plan_preview,
    reviewers_invite,
)
from review.control.services import ControlRefused, campaign_open, member_invitation_resend
from review.control.views import control_context
from review.models import STAGE_CHOICES, Assignment, Campaign, CampaignItem
from review.reviewing.forms import score_dimensions
from review.trajectory import steps


@require_GET
@role_required(ADMIN)
def campaign_list(request: HttpRequest) -> HttpResponse:
    campaigns = Campaign.objects.select_related("rubric").order_by("-created_at")
    return render(request, "review/campaign_list.html", {"campaigns": campaigns})


@require_http_methods(["GET", "POST"])
@role_required(ADMIN)
def campaign_create(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        form = CampaignForm(request.POST)
    else:
        # The stage asked for (the form without script lists another stage's items this way) and its rubric.
        stage = request.GET.get("stage") if request.GET.get("stage") in STAGES else Artifact.Stage.PAPER
        form = CampaignForm(initial={"stage": stage, "rubric": stage_rubric(stage)})
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        campaign = campaign_create_service(
            name=data["name"],
            rubric=data["rubric"],
            stage=data["stage"],
            artifacts=list(data["artifacts"]),
            runs=list(data["runs"]),
            reviewers=list(data["reviewers"]),
            reviewers_per_item=data["reviewers_per_item"],
            deadline=data["deadline"],
            show_supplementary=data["show_supplementary"],
            reclaim_after_hours=data["reclaim_after_hours"],
            # Opened below, once its items are checked for systematic tells (review.blinding.tells).
            status=Campaign.Status.DRAFT if data["status"] == Campaign.Status.OPEN else data["status"],
            created_by=request.user,
        )
        messages.success(request, f"Campaign {campaign} created. Preview the assignment plan, then apply it.")
        if data["status"] == Campaign.Status.OPEN:
            try:
                campaign_open(campaign=campaign, by=request.user)
            except ControlRefused as exc:
                messages.warning(request, f"Kept as a draft, not opened: {exc}. See the tells on the campaign page.")
        if data["invite_lines"]:
            tags = [t for t in data["invite_expertise"].split(",") if t.strip()]
            outcome = reviewers_invite(lines=data["invite_lines"], expertise=tags, campaign=campaign, by=request.user)
            return invites_done(request, outcome, reverse("review:campaign_plan", args=[campaign.code]))
        return redirect("review:campaign_plan", campaign.code)
    if form.is_bound:
        stage = form.data.get("stage") if form.data.get("stage") in STAGES else Artifact.Stage.PAPER
        found = candidates_page(stage=stage, chosen=form.data.getlist(field_for(stage)))
    else:
        found = _candidates_from(request)
    return render(
        request,
        "review/campaign_form.html",
        {
            "form": form,
            "basic_fields": [form[name] for name in CampaignForm.Meta.fields],
            "found": found,
            "stage_rubrics": stage_rubrics(),
            "stage_choices": STAGE_CHOICES,
            "reviewer_rows": _picker_rows(form, "reviewers"),
        },
        status=400 if form.errors else 200,
    )


def _candidates_from(request: HttpRequest) -> Candidates:
    """The candidates a GET asks for (?stage=&q=&page=); an unknown stage lists papers."""
    stage = request.GET.get("stage", "")
    return candidates_page(
        stage=stage if stage in STAGES else Artifact.Stage.PAPER,
        q=request.GET.get("q", "")[:200],
        page=request.GET.get("page", 1),
    )


@require_GET
@role_required(ADMIN)
def campaign_candidates(request: HttpRequest) -> HttpResponse:
    """One page of the chosen stage's candidate items, as the rows of the form's picker (it fetches
    them as the admin searches, pages or changes the stage). Reads only."""
    if request.GET.get("stage") not in STAGES:
        return HttpResponse(f"Unknown stage; choose one of {', '.join(sorted(STAGES))}.", status=400)
    return render(request, "review/partials/candidates.html", {"found": _candidates_from(request)})


@require_GET
@role_required(ADMIN)
def campaign_item_candidates(request: HttpRequest, code: str) -> HttpResponse:
    """One page of the items that can join this campaign (its stage, not in it yet), as the rows of its
    page's add-items picker; the same rows as the new-campaign form's picker. Reads only."""
    campaign = get_object_or_404(Campaign, code=code)
    found = candidates_page(
        campaign=campaign, stage=campaign.stage, q=request.GET.get("q", "")[:200], page=request.GET.get("page", 1)
    )
    return render(request, "review/partials/candidates.html", {"found": found})


def _picker_rows(form: Any, name: str) -> list[dict[str, Any]]:
    """A picker's rows (the reviewers'; items are paged by review.campaigns.candidates)."""
    chosen = {str(v) for v in (form[name].value() or [])}
    field = form.fields[name]
    return [
        {
            "pk": obj.pk,
            "stage": getattr(obj, "stage", ""),
            "label": field.label_from_instance(obj),
            "checked": str(obj.pk) in chosen,
        }
        for obj in field.queryset
    ]


@require_GET
@role_required(ADMIN)
def campaign_detail(request: HttpRequest, code: str) -> HttpResponse:
    campaign = get_object_or_404(Campaign.objects.select_related("rubric"), code=code)
    progress = campaign_progress(campaign=campaign)
    blinding_rows = [_blinding_row(item) for item in progress["items"]]
    return render(
        request,
        "review/campaign_detail.html",
        {
            "campaign": campaign,
            "progress": progress,
            "open": _open_assignments(request, campaign),
            "member_rows": _picker_rows(MembersAddForm(campaign=campaign), "reviewers"),
            # One page of the items that can join, searched and paged by the server (a GET without script).
            "found": candidates_page(
                campaign=campaign,
                stage=campaign.stage,
                q=request.GET.get("items_q", "")[:200],
                page=request.GET.get("items_page", 1),
            ),
            "invite_form": InviteFields(),
            "conflict_form": ConflictForm(campaign=campaign),
            "conflicts": campaign.conflicts.select_related("reviewer", "item").order_by("id"),
            "blinding_rows": blinding_rows,
            "blinding_stale": sum(row["stale"] for row in blinding_rows),
            "tells": tells.tells_report(campaign),
            "tells_most": f"{tells.MOST:.0%}",
            **control_context(campaign, request.user),
        },
    )


OPEN_PAGE_SIZE = 25
OPEN_SORTS = {
    "item": ("item__code",),
    # Each reviewer's items as their queue lists them (review.queue_order), not in creation order.
    "reviewer": ("reviewer__username", "queue_key"),
    "status": ("status",),
    "activity": ("last_activity",),
}


def _open_assignments(request: HttpRequest, campaign: Campaign) -> dict[str, Any]:
    """The open assignments, filtered (item code or reviewer text, one reviewer exactly, status),
    sorted and paged; each row with the members it can move to (not its own reviewer, nobody who
    held the item). `reviewer` is exact: the text filter would show kimberly's items beside kim's."""
    q = (request.GET.get("q") or "").strip()[:100]
    reviewer = (request.GET.get("reviewer") or "").strip()[:150]
    status = request.GET.get("status") or ""
    sort = request.GET.get("sort") or "activity"
    key = sort.lstrip("-")
    rows = campaign.assignments.filter(status__in=Assignment.OPEN).select_related("reviewer", "item")
    if q:
        rows = rows.filter(Q(item__code__icontains=q) | Q(reviewer__username__icontains=q) | Q(code__icontains=q))
    if reviewer:
        rows = rows.filter(reviewer__username=reviewer)
    if status in Assignment.OPEN:
        rows = rows.filter(status=status)
    if key not in OPEN_SORTS:
        sort, key = "activity", "activity"
    # A descending sort reverses its first field only: each reviewer's items stay in queue order.
    first, *rest = OPEN_SORTS[key]
    rows = rows.order_by(f"-{first}" if sort.startswith("-") else first, *rest, "id")
    page: Page = Paginator(rows, OPEN_PAGE_SIZE).get_page(request.GET.get("page"))
    assignments = list(page.object_list)
    held: dict[int, set[int]] = defaultdict(set)
    for item_id, reviewer_id in Assignment.objects.filter(item_id__in={a.item_id for a in assignments}).values_list(
        "item_id", "reviewer_id"
    ):
        held[item_id].add(reviewer_id)
    members = list(campaign.members.filter(active=True).select_related("reviewer").order_by("reviewer__username"))
    for a in assignments:
        a.move_to = [m.reviewer for m in members if m.reviewer_id not in held[a.item_id]]
    params = {"q": q, "reviewer": reviewer, "status": status, "sort": sort}
    return {
        "page": page,
        "rows": assignments,
        "params": params,
        "sorts": [(k, "-" + k if sort == k else k) for k in OPEN_SORTS],
        "query": urlencode({k: v for k, v in params.items() if v}),
        "statuses": [(s.value, s.label) for s in (Assignment.Status.ASSIGNED, Assignment.Status.STARTED)],
    }


def _blinding_row(item: CampaignItem) -> dict:
    """One item's changes for the campaign page, counted by kind; stale when rendered by older rules."""
    files = item.blinding_changes or []
    counts: dict[str, int] = {}
    for entry in files:
        for change in entry["changes"]:
            counts[change["kind"]] = counts.get(change["kind"], 0) + change["count"]
    stale = bool(item.artifact_id) and (not item.rendered_key or not files)  # trajectories store no render
    return {"item": item, "files": files, "counts": sorted(counts.items()), "stale": stale}


@require_POST
@role_required(ADMIN)
def campaign_assign_view(request: HttpRequest, code: str) -> HttpResponse:
    campaign = get_object_or_404(Campaign, code=code)
    result = campaign_assign(campaign=campaign)
    messages.success(request, f"{result.created} assignment(s) made.")
    assign_problems(request, result)
    return redirect("review:campaign_detail", campaign.code)


@require_POST
@role_required(ADMIN)
def campaign_reblind_view(request: HttpRequest, code: str) -> HttpResponse:
    """Render every item's reviewer copy again and list its changes (after the blinding rules changed)."""
    campaign = get_object_or_404(Campaign, code=code)
    # Papers only: a trajectory is blinded each time it is shown (review.trajectory.steps), nothing is stored.
    items = campaign.items.filter(artifact__isnull=False).select_related(
        "artifact__research_run", "artifact__experiment_run__agent"
    )
    tells.campaign_check_tells(campaign=campaign)  # before the renders: they cut the tells' fixed lines
    for item in items:
        item.campaign = campaign
        item_prerender(item=item, force=True)
    messages.success(request, f"Blinding and tells checked again for {len(items)} item(s).")
    return redirect("review:campaign_detail", campaign.code)


@require_POST
@role_required(ADMIN)
def campaign_reclaim_view(request: HttpRequest, code: str) -> HttpResponse:
    campaign = get_object_or_404(Campaign, code=code)
    reclaimed = campaign_reclaim(campaign=campaign)
    result = campaign_assign(campaign=campaign)
    messages.success(request, f"{len(reclaimed)} assignment(s) reclaimed, {result.created} new one(s) made.")
    assign_problems(request, result)
    return redirect("review:campaign_detail", campaign.code)


@require_POST
@role_required(ADMIN)
def assignment_reassign_view(request: HttpRequest, code: str, acode: str) -> HttpResponse:
    campaign = get_object_or_404(Campaign, code=code)
    assignment = get_object_or_404(Assignment, campaign=campaign, code=acode)
    form = ReassignForm(request.POST, campaign=campaign)
    if not form.is_valid():
        messages.error(request, "Choose a reviewer of this campaign.")
        return redirect("review:campaign_detail", campaign.code)
    try:
        new = assignment_reassign(assignment=assignment, to_reviewer=form.cleaned_data["reviewer"])
    except AssignmentError as exc:
        messages.error(request, f"Not reassigned: {exc}")
    else:
        messages.success(request, f"Item {new.item.code} moved to {new.reviewer}.")
    return redirect("review:campaign_detail", campaign.code)


@require_POST
@role_required(ADMIN)
def conflict_add_view(request: HttpRequest, code: str) -> HttpResponse:
    """Record a conflict; assignments made from then on respect it (existing ones are the admin's to move)."""
    campaign = get_object_or_404(Campaign, code=code)
    form = ConflictForm(request.POST, campaign=campaign)
    if form.is_valid():
        data = form.cleaned_data
        conflict_add(
            campaign=campaign,
            reviewer=data["reviewer"],
            item=data["item"],
            system=data["system"],
            reason=data["reason"],
        )
        messages.success(request, "Conflict recorded.")
    else:
        errors = "; ".join(e for errs in form.errors.values() for e in errs)
        messages.error(request, f"Conflict not recorded: {errors}")
    return redirect("review:campaign_detail", campaign.code)


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
        messages.error(request, "Items not added: " + " ".join(form.errors["artifacts"]))
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
        trajectory_view = steps.trajectory_context(item, [])
    else:
        template, used = blinded.item_render(item)
        base = reverse("review:item_preview_figure", args=[item.campaign.code, item.code, "x"])[:-1]
        paper_html = blinded.with_figure_urls(template, used, assignment_code=_preview_key(item), base_url=base)

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
    rel = blinded.find_file(
        files=artifact.files or [], assignment_code=_preview_key(item), fid=fid, extensions=blinded.IMAGE_EXTENSIONS
    )
    data = blinded.read_stored(str(artifact.code), rel) if rel else None
    if data is None:
        raise Http404("No such figure.")
    return file_response(data, mimetypes.guess_type(rel)[0] or "application/octet-stream")


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
