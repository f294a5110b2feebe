"""Reviewer pages: queue, blinded item, autosave, submit, problem report, figures and supplementary files.

Reviewer views find the assignment by (code, request.user) (review.reviewing.selectors): another
reviewer's code, a reclaimed one or one of a draft campaign is a 404, indistinguishable from a code
that never existed. The admin's campaign pages are in review.campaigns.views.
"""

from __future__ import annotations

import json
import mimetypes
from functools import lru_cache
from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.template import TemplateDoesNotExist
from django.template.loader import get_template
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.roles import REVIEWER, is_researcher, role_required
from benchmark.models import Artifact
from review.assignment.eligibility import campaign_agent_run_ids, campaign_run_ids, identifying_reason
from review.blinding import blinded, scrubbing
from review.blinding.blinded import TITLE_PREFIX
from review.blinding.responses import file_response
from review.control.reports import ReportRefused, report_problem
from review.control.services import last_closes
from review.models import Assignment, Campaign, ItemReport, Review
from review.reviewing.forms import ReviewForm, draft_to_form_data, score_dimensions
from review.reviewing.selectors import assignment_review, reviewer_assignment, reviewer_queue
from review.reviewing.services import (
    CLOSED_MESSAGE,
    CampaignClosed,
    ReviewLocked,
    StaleRevision,
    review_save_draft,
    review_submit,
)
from review.trajectory import steps

MAX_DRAFT_BYTES = 200_000
# Far below the column's 2**31 - 1, so that the form save's and the submit's "stored + 1" always fit.
MAX_REVISION = 1_000_000_000


@lru_cache(maxsize=1)
def _shared_markdown_partial() -> bool:
    """The project's markdown partial (vendored KaTeX) when present; else math shows as TeX source."""
    try:
        get_template("partials/markdown.html")
    except TemplateDoesNotExist:
        return False
    return True


def _my_assignment(request: HttpRequest, code: str, *, page: bool = True) -> Assignment:
    """The request user's live assignment `code` (404 otherwise). `page=False` (the autosave) loads
    only the assignment, its campaign and rubric and the item's keys: not the paper, its stored render
    nor the run, which the save never reads (half the cost of the request at 100 reviewers)."""
    assignment = reviewer_assignment(reviewer=request.user, code=code, page=page)
    if assignment is None:
        raise Http404("No such assignment.")
    if is_researcher(request.user):  # a role added after the assignment was made (review.assignment.eligibility)
        reason = identifying_reason(
            request.user, campaign_run_ids(assignment.campaign), campaign_agent_run_ids(assignment.campaign)
        )
        if reason:
            raise PermissionDenied(f"{reason}: an account that can see runs or judgments cannot review this campaign.")
    return assignment


def _blinded_title(item, *, text_head: str | None, task_title: str | None) -> str:  # item: CampaignItem
    """The title the reviewer's queue shows for `item`, system names scrubbed; the item page uses it
    too, so that the reviewer meets one name for one item (never the model, never a bare code)."""
    names = scrubbing.item_system_names(item)
    if item.run_id:  # a trajectory: the task is shared by every system's run, so it is no tell
        return "Agent trajectory: " + scrubbing.scrub(task_title or "", names)
    return blinded.item_title(text_head or "", names) or "Untitled item"


@require_GET
@role_required(REVIEWER)
def queue(request: HttpRequest) -> HttpResponse:
    """The reviewer's day: per campaign "N of M done" and its deadline, each item under its blinded
    title, and the next open item one click away."""
    assignments = reviewer_queue(reviewer=request.user)
    campaigns: dict[int, dict] = {}
    for a in assignments:
        a.item.campaign = a.campaign  # the names to scrub are the campaign's
        a.title = _blinded_title(a.item, text_head=a.text_head, task_title=a.task_title)
        group = campaigns.setdefault(a.campaign_id, {"campaign": a.campaign, "todo": [], "done": []})
        group["done" if a.status == Assignment.Status.SUBMITTED else "todo"].append(a)
    groups = list(campaigns.values())
    shut = [g["campaign"].pk for g in groups if g["campaign"].status == Campaign.Status.CLOSED]
    closed = last_closes(shut) if shut else {}
    for group in groups:
        group["total"] = len(group["todo"]) + len(group["done"])
        group["closing"] = closed.get(group["campaign"].pk)
    todo = [a for g in groups for a in g["todo"] if g["campaign"].status == Campaign.Status.OPEN]
    # Next: an item already started first (the reviewer left it halfway), else the earliest due,
    # each in the queue's keyed order.
    started = [a for a in todo if a.status == Assignment.Status.STARTED]
    following = (started or todo or [None])[0]
    return render(request, "review/queue.html", {"groups": groups, "next": following})


def _supplementary(assignment: Assignment) -> list[tuple[Artifact, str]]:
    return blinded.supplementary_files(assignment.item)


def _supp_id(assignment: Assignment, artifact: Artifact, rel: str) -> str:
    return blinded.figure_id(assignment.code, f"supplementary:{artifact.pk}:{rel}")


@never_cache
@require_http_methods(["GET", "POST"])
@role_required(REVIEWER)
def item(request: HttpRequest, code: str) -> HttpResponse:
    """The blinded item and the rubric form. POST is the no-JavaScript path (save draft / submit)."""
    assignment = _my_assignment(request, code)
    campaign = assignment.campaign
    review = assignment_review(assignment=assignment)
    locked = (
        assignment.status == Assignment.Status.SUBMITTED
        or campaign.status != Campaign.Status.OPEN
        or (review is not None and review.status == Review.Status.SUBMITTED)
    )
    if request.method == "POST":
        if request.POST.get("action") == "draft":
            return _save_draft_form(request, assignment, review)
        return submit(request, code)
    form = ReviewForm(rubric=campaign.rubric, initial=ReviewForm.initial_from(review))
    return _render_item(request, assignment, review, form, locked)


def _item_page_title(assignment: Assignment) -> str:
    item = assignment.item
    if item.run_id:
        return _blinded_title(item, text_head=None, task_title=item.run.task.title)
    return _blinded_title(item, text_head=item.artifact.content[:TITLE_PREFIX], task_title=None)


def _render_item(
    request: HttpRequest,
    assignment: Assignment,
    review: Review | None,
    form: ReviewForm,
    locked: bool,
    status: int = 200,
) -> HttpResponse:
    campaign = assignment.campaign
    trajectory_view = None
    if assignment.item.run_id:
        posted = request.method == "POST"
        try:
            tags = _posted_tags(request, assignment) if posted else (review.step_tags if review else [])
        except ValueError:  # shown again as posted, with the error above the form
            tags = steps.step_tags_as_posted(request.POST)
        trajectory_view = steps.trajectory_context(assignment.item, tags)
        paper_html = ""
    else:
        base = reverse("review:figure", args=[assignment.code, "x"])[:-1]
        template, used = blinded.item_render(assignment.item)
        paper_html = blinded.with_figure_urls(template, used, assignment_code=assignment.code, base_url=base)
    supplementary = []
    if campaign.show_supplementary:
        names = scrubbing.item_system_names(assignment.item)
        for sup_artifact, rel in _supplementary(assignment):
            supplementary.append(
                {
                    "label": scrubbing.scrub(rel, names),
                    "url": reverse(
                        "review:supplementary", args=[assignment.code, _supp_id(assignment, sup_artifact, rel)]
                    ),
                }
            )
    fields = []
    for dim in form.dimensions:
        key = dim["key"]
        options, chosen = _score_choices(dim, form[f"score_{key}"].value())
        fields.append(
            {
                "dim": dim,
                "bands": _score_bands(dim.get("anchors") or {}),
                "score": form[f"score_{key}"],
                "just": form[f"just_{key}"],
                "options": options,
                "chosen": chosen,
                "low": dim.get("min", 1),
                "high": dim.get("max", 10),
            }
        )
    context = {
        "scored": sum(bool(f["score"].value() and str(f["just"].value() or "").strip()) for f in fields),
        "gaps": form.gaps() if form.is_bound else [],
        "report_reasons": ItemReport.Reason.choices,
        "report_note_max": ItemReport.NOTE_MAX,
        "assignment": assignment,
        "item_title": _item_page_title(assignment),
        "campaign": campaign,
        "instructions": campaign.rubric.instructions,
        "paper_html": paper_html,
        "trajectory": trajectory_view,
        "shared_markdown": _shared_markdown_partial(),
        "supplementary": supplementary,
        "form": form,
        "fields": fields,
        "locked": locked,
        "closing": (last_closes([campaign.pk]).get(campaign.pk) if campaign.status == Campaign.Status.CLOSED else None),
        "review": review,
        "client": {
            "code": assignment.code,
            "revision": review.revision if review else 0,
            "locked": locked,
            "closed": campaign.status == Campaign.Status.CLOSED,
            "draft_url": reverse("review:draft", args=[assignment.code]),
        },
    }
    return render(request, "review/item.html", context, status=status)


def _score_bands(anchors: dict) -> list[tuple[str, str]]:
    """A criterion's score bands, highest first, for review/_dimension_guide.html."""
    return sorted(anchors.items(), key=lambda kv: kv[0], reverse=True)


def _score_choices(dim: dict, current: Any) -> tuple[list[str], str | None]:
    """The values of one criterion's radio buttons and the chosen one, both as text so that a
    posted "7" and a stored 7 mark the same button (review/_score_options.html compares them)."""
    options = [str(v) for v in range(int(dim.get("min", 1)), int(dim.get("max", 10)) + 1)]
    return options, (str(current) if current not in (None, "") else None)


def _posted_tags(request: HttpRequest, assignment: Assignment) -> list[dict] | None:
    """The step tags of a posted form (trajectory items; None for papers). ValueError when invalid."""
    if not assignment.item.run_id:
        return None
    return steps.step_tags_from_post(request.POST, assignment.item.run.step_count)


def _save_draft_form(request: HttpRequest, assignment: Assignment, review: Review | None) -> HttpResponse:
    if assignment.campaign.status != Campaign.Status.OPEN:  # said before any form error: nothing would be kept
        messages.error(request, f"Not saved: {CLOSED_MESSAGE}.")
        return redirect("review:item", assignment.code)
    form = ReviewForm(request.POST, rubric=assignment.campaign.rubric, partial=True)
    try:
        tags = _posted_tags(request, assignment)
    except ValueError as exc:
        form.is_valid()  # the form's own errors are shown beside this one
        form.add_error(None, f"Step tags: {exc}")
        return _render_item(request, assignment, review, form, locked=False, status=400)
    if not form.is_valid():
        return _render_item(request, assignment, review, form, locked=False, status=400)
    try:
        review_save_draft(
            assignment=assignment,
            scores=form.scores(),
            confidence=form.cleaned_data.get("confidence"),
            revision=(review.revision if review else 0) + 1,
            step_tags=tags,
        )
    except (ReviewLocked, StaleRevision) as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, "Draft saved.")
    return redirect("review:item", assignment.code)


@never_cache
@require_POST
@role_required(REVIEWER)
def draft(request: HttpRequest, code: str) -> JsonResponse:
    """Autosave: {revision, scores: {key: {score, justification}}, confidence} -> {revision} or an error."""
    assignment = _my_assignment(request, code, page=False)
    if assignment.campaign.status != Campaign.Status.OPEN:
        return JsonResponse({"error": "locked", "detail": CLOSED_MESSAGE, "closed": True}, status=409)
    if len(request.body) > MAX_DRAFT_BYTES:
        return JsonResponse({"error": "draft too large"}, status=413)
    try:
        payload = json.loads(request.body or b"{}")
        if not isinstance(payload, dict):
            raise ValueError("expected a JSON object")
        revision = payload.get("revision")
        if not isinstance(revision, int) or isinstance(revision, bool) or not 1 <= revision <= MAX_REVISION:
            raise ValueError(f"revision: expected an integer from 1 to {MAX_REVISION}")
        data = draft_to_form_data(payload)
        tags = None
        if assignment.item.run_id:
            tags = steps.clean_step_tags(payload.get("step_tags"), assignment.item.run.step_count)
        elif payload.get("step_tags"):
            raise ValueError("step_tags: this item is not a trajectory")
    except (ValueError, json.JSONDecodeError) as exc:
        return JsonResponse({"error": str(exc)}, status=400)
    form = ReviewForm(data, rubric=assignment.campaign.rubric, partial=True)
    known = {f"score_{d['key']}" for d in score_dimensions(assignment.campaign.rubric)}
    unknown = sorted(k.removeprefix("score_") for k in data if k.startswith("score_") and k not in known)
    if unknown:
        return JsonResponse({"error": f"unknown dimension(s): {', '.join(unknown)}"}, status=400)
    if not form.is_valid():
        return JsonResponse({"error": "invalid draft", "fields": form.errors.get_json_data()}, status=400)
    try:
        saved = review_save_draft(
            assignment=assignment,
            scores=form.scores(),
            confidence=form.cleaned_data.get("confidence"),
            revision=revision,
            step_tags=tags,
        )
    except StaleRevision as exc:
        return JsonResponse({"error": "stale", "revision": exc.current}, status=409)
    except ReviewLocked as exc:
        # Closed (not submitted): the page keeps its local copy, sent again if the campaign reopens.
        closed = isinstance(exc, CampaignClosed)
        return JsonResponse({"error": "locked", "detail": str(exc), "closed": closed}, status=409)
    return JsonResponse({"revision": saved.revision, "saved_at": saved.saved_at.isoformat()})


@never_cache
@require_POST
@role_required(REVIEWER)
def submit(request: HttpRequest, code: str) -> HttpResponse:
    assignment = _my_assignment(request, code)
    if assignment.campaign.status != Campaign.Status.OPEN:
        messages.error(request, f"Not saved: {CLOSED_MESSAGE}.")
        return redirect("review:item", assignment.code)
    review = assignment_review(assignment=assignment)
    form = ReviewForm(request.POST, rubric=assignment.campaign.rubric)
    try:
        tags = _posted_tags(request, assignment)
    except ValueError as exc:
        form.is_valid()  # the form's own errors are shown beside this one
        form.add_error(None, f"Step tags: {exc}")
        return _render_item(request, assignment, review, form, locked=False, status=400)
    if not form.is_valid():
        return _render_item(request, assignment, review, form, locked=False, status=400)
    try:
        review_submit(
            assignment=assignment,
            scores=form.scores(),
            confidence=form.cleaned_data["confidence"],
            step_tags=tags,
        )
    except ReviewLocked as exc:
        messages.error(request, f"Not saved: {exc}.")
        return redirect("review:item", assignment.code)
    messages.success(request, "Review submitted. Thank you!")
    return redirect("review:queue")


@never_cache
@require_POST
@role_required(REVIEWER)
def report(request: HttpRequest, code: str) -> HttpResponse:
    """Report a problem with the item; the reviewer stays on it (fetch gets JSON, a plain form a redirect)."""
    assignment = _my_assignment(request, code)
    reason, note = request.POST.get("reason", ""), request.POST.get("note", "")
    error = None
    if reason not in ItemReport.Reason.values:
        error = "Choose what is wrong with the item."
    elif len(note) > ItemReport.NOTE_MAX:
        error = f"The note is too long ({len(note)} characters, at most {ItemReport.NOTE_MAX})."
    else:
        try:
            report_problem(assignment=assignment, reason=reason, note=note.strip())
        except ReportRefused as exc:
            error = f"Not sent: {exc}."
    if "application/json" in request.headers.get("Accept", ""):
        # Nothing about the item or other reports comes back: only whether this one was stored.
        return JsonResponse({"error": error}, status=400) if error else JsonResponse({"ok": True})
    if error:
        messages.error(request, error)
    else:
        messages.success(request, "Thank you: the organisers have your report. You can keep reviewing.")
    return redirect("review:item", assignment.code)


@require_GET
@role_required(REVIEWER)
def figure(request: HttpRequest, code: str, fid: str) -> HttpResponse:
    assignment = _my_assignment(request, code)
    artifact = assignment.item.artifact
    if artifact is None:  # a trajectory has no figures
        raise Http404("No such figure.")
    rel = blinded.find_file(
        files=artifact.files or [], assignment_code=assignment.code, fid=fid, extensions=blinded.IMAGE_EXTENSIONS
    )
    data = blinded.read_stored(str(artifact.code), rel) if rel else None
    if data is None:
        raise Http404("No such figure.")
    content_type = mimetypes.guess_type(rel)[0] or "application/octet-stream"
    return file_response(data, content_type)


@require_GET
@role_required(REVIEWER)
def supplementary(request: HttpRequest, code: str, fid: str) -> HttpResponse:
    assignment = _my_assignment(request, code)
    if not assignment.campaign.show_supplementary:
        raise Http404("No supplementary material in this campaign.")
    for artifact, rel in _supplementary(assignment):
        if _supp_id(assignment, artifact, rel) == fid:
            data = blinded.read_stored(str(artifact.code), rel)
            if data is None:
                break
            text = data.decode("utf-8", errors="replace")
            names = scrubbing.item_system_names(assignment.item)
            shown = blinded.blind_file(rel, text, names, blinded.quoted_chatter(assignment.item.artifact))
            return file_response(shown.encode(), "text/plain; charset=utf-8")
    raise Http404("No such file.")
