"""Campaign set-up flows that span models: create a campaign, add items (papers or agent runs) and
members, the progress page's figures, conflicts of interest."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import Count, Q

from accounts.models import Invitation, Profile
from benchmark.models import Artifact, Run
from judge.models import Rubric
from review.assignment.eligibility import campaign_agent_run_ids, campaign_run_ids, identifying_members
from review.assignment.services import AssignmentError, tag_set
from review.blinding import scrubbing, tells
from review.blinding.services import cannot_blind, item_prerender
from review.models import Assignment, Campaign, CampaignItem, CampaignReviewer, Conflict


def campaign_create(
    *,
    name: str,
    rubric: Rubric,
    artifacts: list[Artifact],
    runs: list[Run] = (),
    reviewers: list[Any] = (),
    reviewers_per_item: int = 2,
    stage: str = Artifact.Stage.PAPER,
    deadline: Any = None,
    show_supplementary: bool = False,
    reclaim_after_hours: int = 72,
    status: str = Campaign.Status.OPEN,
    created_by: Any = None,
) -> Campaign:
    with transaction.atomic():
        campaign = Campaign.objects.create(
            name=name,
            rubric=rubric,
            stage=stage,
            reviewers_per_item=reviewers_per_item,
            deadline=deadline,
            show_supplementary=show_supplementary,
            reclaim_after_hours=reclaim_after_hours,
            status=status,
            created_by=created_by,
        )
        campaign_add_items(campaign=campaign, artifacts=artifacts)
        if runs:
            campaign_add_runs(campaign=campaign, runs=list(runs))
        campaign_add_reviewers(campaign=campaign, reviewers=list(reviewers))
    return campaign


def campaign_add_items(*, campaign: Campaign, artifacts: list[Artifact]) -> int:
    """Add artifacts (skipping ones already in); item tags come from the task's category and slug words."""
    have = set(campaign.items.values_list("artifact_id", flat=True))
    unblindable = [f"{a.research_run.task.slug} ({a.stage})" for a in artifacts if a.pk not in have and cannot_blind(a)]
    if unblindable:
        raise ValueError(
            f"these items cannot be blinded, so no reviewer may see them: {', '.join(unblindable)} (a PDF paper "
            "without a text layer: reviewers read the extracted, scrubbed text, and there is none)"
        )
    new = []
    for artifact in artifacts:
        if artifact.pk in have:
            continue
        task = artifact.research_run.task
        tags = tag_set([task.category, *task.slug.replace("-", "_").split("_")])
        new.append(CampaignItem(campaign=campaign, artifact=artifact, tags=sorted(tags)))
        have.add(artifact.pk)
    CampaignItem.objects.bulk_create(new)
    _refresh_names(campaign)
    return len(new)


def campaign_add_runs(*, campaign: Campaign, runs: list[Run]) -> int:
    """Add finished agent runs as trajectory items (skipping ones already in); tags as for artifacts."""
    if not campaign.is_trajectory:
        raise ValueError(f"campaign {campaign.name!r} reviews {campaign.stage} items, not trajectories")
    unfinished = [str(r.code) for r in runs if r.status != Run.Status.FINISHED]
    if unfinished:
        raise ValueError(f"only finished runs can be reviewed (not: {', '.join(unfinished)})")
    have = set(campaign.items.values_list("run_id", flat=True))
    new = []
    for run in runs:
        if run.pk in have:
            continue
        task = run.task
        tags = tag_set([task.category, *task.slug.replace("-", "_").split("_")])
        new.append(CampaignItem(campaign=campaign, run=run, tags=sorted(tags)))
        have.add(run.pk)
    CampaignItem.objects.bulk_create(new)
    _refresh_names(campaign)
    return len(new)


def _refresh_names(campaign: Campaign) -> None:
    """Every system name of the campaign's items (scrubbed from each), then the stored paper renders."""
    items = list(
        campaign.items.select_related(
            "artifact__research_run__task", "artifact__experiment_run__agent", "run__agent__endpoint"
        )
    )
    labels = [
        label
        for item in items
        for label in (scrubbing.run_labels(item.run) if item.run_id else scrubbing.artifact_labels(item.artifact))
    ]
    names = scrubbing.system_names(*labels)
    if names != campaign.blind_names:
        campaign.blind_names = names
        campaign.save(update_fields=["blind_names"])
    # Tells before the renders: a fixed line one system's papers carry is cut from their render.
    tells.campaign_check_tells(campaign=campaign)
    for item in items:  # new items, and all of them when a new system joined the campaign
        item.campaign = campaign
        if item.artifact_id:  # trajectories are blinded when shown (review.trajectory.steps), not stored
            item_prerender(item=item)


def campaign_add_reviewers(
    *, campaign: Campaign, reviewers: list[Any], invitations: dict[int, Any] | None = None
) -> int:
    """Add members; refuses (AssignmentError, nothing added) an account that could identify the systems.

    `invitations` ({user id: Invitation}) ties members invited from the campaign to their invitation.
    """
    invitations = invitations or {}
    refused = identifying_members(
        [user.pk for user in reviewers], campaign_run_ids(campaign), campaign_agent_run_ids(campaign)
    )
    if refused:
        raise AssignmentError("; ".join(refused.values()))
    added = 0
    for user in reviewers:
        profile = Profile.objects.filter(user=user).first()
        invitation = invitations.get(user.pk)
        expertise = (profile.expertise if profile else []) or (invitation.expertise if invitation else [])
        member, created = CampaignReviewer.objects.get_or_create(
            campaign=campaign,
            reviewer=user,
            defaults={"expertise": sorted(tag_set(expertise)), "invitation": invitation},
        )
        if not created and invitation is not None:  # invited again from the campaign: the new link counts
            member.invitation = invitation
            member.expertise = member.expertise or sorted(tag_set(invitation.expertise))
            member.save(update_fields=["invitation", "expertise"])
        added += created
    return added


def campaign_progress(*, campaign: Campaign) -> dict[str, Any]:
    k = campaign.reviewers_per_item
    S = Assignment.Status
    items = (
        campaign.items.select_related("artifact__research_run__task", "run__task", "run__agent")
        .annotate(
            live=Count("assignments", filter=Q(assignments__status__in=Assignment.LIVE)),
            done=Count("assignments", filter=Q(assignments__status=S.SUBMITTED)),
        )
        .order_by("id")
    )
    reviewers = (
        campaign.members.select_related("reviewer__profile", "invitation")
        .annotate(
            assigned=Count(
                "reviewer__review_assignments",
                filter=Q(
                    reviewer__review_assignments__campaign=campaign,
                    reviewer__review_assignments__status__in=Assignment.LIVE,
                ),
            ),
            submitted=Count(
                "reviewer__review_assignments",
                filter=Q(
                    reviewer__review_assignments__campaign=campaign,
                    reviewer__review_assignments__status=S.SUBMITTED,
                ),
            ),
            open_count=Count(
                "reviewer__review_assignments",
                filter=Q(
                    reviewer__review_assignments__campaign=campaign,
                    reviewer__review_assignments__status__in=Assignment.OPEN,
                ),
            ),
        )
        .order_by("reviewer__username")
    )
    overdue = []
    if campaign.is_overdue:
        overdue = list(
            campaign.assignments.filter(status__in=Assignment.OPEN).select_related("reviewer", "item").order_by("id")
        )
    cutoff = campaign.reclaim_cutoff()
    reclaimable = (
        campaign.assignments.filter(status__in=Assignment.OPEN, last_activity__lt=cutoff).count() if cutoff else 0
    )
    item_rows = list(items)
    members = list(reviewers)
    refused = identifying_members(
        [m.reviewer_id for m in members], campaign_run_ids(campaign), campaign_agent_run_ids(campaign)
    )
    for member in members:
        member.refused = refused.get(member.reviewer_id, "")
        # Revoked before it was used: the invitee can never sign in, so their open items wait on nobody
        # until an admin reassigns them (the page says so instead of "Active: yes").
        member.revoked = member.invitation is not None and member.invitation.state() == Invitation.State.REVOKED
    return {
        "k": k,
        "items": item_rows,
        "reviewers": members,
        "overdue": overdue,
        "reclaimable": reclaimable,
        "totals": {
            "items": len(item_rows),
            "fully_assigned": sum(1 for i in item_rows if i.live >= k),
            "fully_reviewed": sum(1 for i in item_rows if i.done >= k),
            "reviews_needed": k * len(item_rows),
            "reviews_submitted": sum(i.done for i in item_rows),
        },
    }


def conflict_add(
    *, campaign: Campaign, reviewer: Any, item: CampaignItem | None = None, system: str = "", reason: str = ""
) -> Conflict:
    return Conflict.objects.create(
        campaign=campaign, reviewer=reviewer, item=item, system="" if item else system.strip(), reason=reason
    )
