"""Assignment: balance, conflicts, expertise, DB guards, reassign, reclaim."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from review.assignment.services import AssignmentError, assignment_reassign, campaign_assign, campaign_reclaim
from review.campaigns.services import campaign_create, conflict_add
from review.models import Assignment, Campaign
from tests.review.factories import make_paper, make_reviewer, make_rubric

pytestmark = pytest.mark.django_db


def _campaign(n_items: int = 6, n_reviewers: int = 3, k: int = 2, **kw) -> Campaign:
    papers = [make_paper(backbone=("claude", "gemini", "o4-mini")[i % 3]) for i in range(n_items)]
    reviewers = [make_reviewer(f"rev{i}") for i in range(n_reviewers)]
    return campaign_create(name=f"c{n_items}-{n_reviewers}", rubric=make_rubric(), artifacts=papers,
                           reviewers=reviewers, reviewers_per_item=k, **kw)  # fmt: skip


def test_it_gives_every_item_k_distinct_reviewers_with_balanced_load() -> None:
    campaign = _campaign(n_items=10, n_reviewers=4, k=2)
    result = campaign_assign(campaign=campaign)
    assert result.created == 20 and result.shortfall == {}
    per_item = Counter(campaign.assignments.values_list("item_id", flat=True))
    assert set(per_item.values()) == {2}
    pairs = list(campaign.assignments.values_list("item_id", "reviewer_id"))
    assert len(pairs) == len(set(pairs))
    load = Counter(campaign.assignments.values_list("reviewer_id", flat=True))
    assert sorted(load.values()) == [5, 5, 5, 5]


def test_it_is_idempotent_when_run_again() -> None:
    campaign = _campaign()
    campaign_assign(campaign=campaign)
    assert campaign_assign(campaign=campaign).created == 0
    assert campaign.assignments.count() == 12


def test_it_respects_item_and_system_conflicts() -> None:
    campaign = _campaign(n_items=6, n_reviewers=3, k=2)
    r0, r1, _ = (m.reviewer for m in campaign.members.order_by("reviewer__username"))
    first = campaign.items.order_by("id").first()
    conflict_add(campaign=campaign, reviewer=r0, item=first)
    conflict_add(campaign=campaign, reviewer=r1, system="Gemini")
    campaign_assign(campaign=campaign)
    assert not campaign.assignments.filter(reviewer=r0, item=first).exists()
    for a in campaign.assignments.filter(reviewer=r1).select_related("item__artifact__research_run"):
        assert a.item.system != "gemini"


def test_it_reports_items_nobody_eligible_can_take() -> None:
    campaign = _campaign(n_items=3, n_reviewers=2, k=2)
    r0 = campaign.members.order_by("reviewer__username").first().reviewer
    conflict_add(campaign=campaign, reviewer=r0, system="claude")
    result = campaign_assign(campaign=campaign)
    claude_item = campaign.items.get(artifact__research_run__backbone="claude")
    assert result.shortfall == {claude_item.code: 1}
    assert claude_item.assignments.count() == 1


def test_it_prefers_reviewers_with_matching_expertise() -> None:
    rubric = make_rubric()
    nlp_paper = make_paper(slug="iclr2025_nlp_safety", category="nlp")
    vision = make_reviewer("vic", ["vision"])
    nlp = make_reviewer("nia", ["nlp"])
    campaign = campaign_create(
        name="x", rubric=rubric, artifacts=[nlp_paper], reviewers=[vision, nlp], reviewers_per_item=1
    )
    campaign_assign(campaign=campaign)
    assert campaign.assignments.get().reviewer == nlp


def test_it_caps_a_reviewer_at_max_load() -> None:
    campaign = _campaign(n_items=4, n_reviewers=2, k=1)
    capped = campaign.members.order_by("reviewer__username").first()
    capped.max_load = 1
    capped.save()
    campaign_assign(campaign=campaign)
    assert campaign.assignments.filter(reviewer=capped.reviewer).count() == 1


def test_it_refuses_a_reviewer_twice_on_an_item_in_the_database() -> None:
    campaign = _campaign(n_items=1, n_reviewers=2, k=2)
    campaign_assign(campaign=campaign)
    a = campaign.assignments.first()
    with pytest.raises(IntegrityError), transaction.atomic():
        Assignment.objects.create(campaign=campaign, item=a.item, reviewer=a.reviewer, slot=3)


def test_it_refuses_more_than_k_live_assignments_in_the_database() -> None:
    campaign = _campaign(n_items=1, n_reviewers=3, k=2)
    campaign_assign(campaign=campaign)
    item = campaign.items.get()
    spare = campaign.members.exclude(reviewer__in=item.assignments.values("reviewer")).get().reviewer
    taken_slot = item.assignments.first().slot
    with pytest.raises(IntegrityError), transaction.atomic():
        Assignment.objects.create(campaign=campaign, item=item, reviewer=spare, slot=taken_slot)


def test_it_reassigns_an_open_assignment_to_another_member() -> None:
    campaign = _campaign(n_items=1, n_reviewers=3, k=2)
    campaign_assign(campaign=campaign)
    item = campaign.items.get()
    old = item.assignments.first()
    spare = campaign.members.exclude(reviewer__in=item.assignments.values("reviewer")).get().reviewer
    new = assignment_reassign(assignment=old, to_reviewer=spare)
    old.refresh_from_db()
    assert old.status == Assignment.Status.REASSIGNED
    assert new.slot == old.slot and new.reviewer == spare and new.code != old.code
    assert item.assignments.filter(status__in=Assignment.LIVE).count() == 2


def test_it_refuses_to_reassign_to_a_reviewer_already_on_the_item_or_conflicted() -> None:
    campaign = _campaign(n_items=1, n_reviewers=3, k=2)
    campaign_assign(campaign=campaign)
    item = campaign.items.get()
    a, b = item.assignments.all()
    with pytest.raises(AssignmentError, match="already"):
        assignment_reassign(assignment=a, to_reviewer=b.reviewer)
    spare = campaign.members.exclude(reviewer__in=[a.reviewer, b.reviewer]).get().reviewer
    conflict_add(campaign=campaign, reviewer=spare, item=item)
    with pytest.raises(AssignmentError, match="conflict"):
        assignment_reassign(assignment=a, to_reviewer=spare)


def test_it_reclaims_untouched_assignments_and_refills_them_with_someone_else() -> None:
    campaign = _campaign(n_items=2, n_reviewers=3, k=1, reclaim_after_hours=24)
    campaign_assign(campaign=campaign)
    stale, fresh = campaign.assignments.order_by("id")
    Assignment.objects.filter(pk=stale.pk).update(last_activity=timezone.now() - timedelta(hours=25))
    assert campaign_reclaim(campaign=campaign) == [stale.code]
    campaign_assign(campaign=campaign)
    stale.refresh_from_db()
    assert stale.status == Assignment.Status.RECLAIMED
    replacement = stale.item.assignments.get(status=Assignment.Status.ASSIGNED)
    assert replacement.reviewer != stale.reviewer
    fresh.refresh_from_db()
    assert fresh.status == Assignment.Status.ASSIGNED


def test_it_never_reclaims_when_the_campaign_says_never() -> None:
    campaign = _campaign(n_items=1, n_reviewers=2, k=1, reclaim_after_hours=0)
    campaign_assign(campaign=campaign)
    Assignment.objects.update(last_activity=timezone.now() - timedelta(days=365))
    assert campaign_reclaim(campaign=campaign) == []


def test_it_reclaims_and_refills_from_the_sweeper_command() -> None:
    import io

    from django.core.management import call_command

    campaign = _campaign(n_items=1, n_reviewers=2, k=1, reclaim_after_hours=1)
    campaign_assign(campaign=campaign)
    first = campaign.assignments.get()
    Assignment.objects.update(last_activity=timezone.now() - timedelta(hours=2))
    out = io.StringIO()
    call_command("reclaim_assignments", stdout=out)
    assert f"{campaign.name}: 1 reclaimed, 1 reassigned" in out.getvalue()
    live = campaign.assignments.get(status=Assignment.Status.ASSIGNED)
    assert live.reviewer != first.reviewer
