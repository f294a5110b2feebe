"""Admin campaign pages: create, progress (coverage per item and reviewer, overdue), assign, reclaim, reassign, export."""

from __future__ import annotations

import csv
import io
import json
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from review.assignment.services import campaign_assign
from review.campaigns.services import campaign_create
from review.models import Assignment, Campaign
from review.reviewing.services import review_submit
from tests.review.factories import make_paper, make_reviewer, make_rubric

pytestmark = pytest.mark.django_db


def test_it_creates_a_campaign_from_the_form(client_for, admin_user, reviewer) -> None:
    rubric = make_rubric()
    papers = [make_paper(), make_paper()]
    r = client_for(admin_user).post(
        reverse("review:campaign_create"),
        {
            "name": "Spring study", "stage": "paper", "rubric": rubric.pk, "reviewers_per_item": 1,
            "reclaim_after_hours": 48, "status": "open", "artifacts": [p.pk for p in papers], "reviewers": [reviewer.pk],
        },
    )  # fmt: skip
    campaign = Campaign.objects.get(name="Spring study")
    assert r.status_code == 302 and r["Location"] == reverse("review:campaign_plan", args=[campaign.code])
    assert campaign.items.count() == 2 and campaign.members.get().reviewer == reviewer
    assert campaign.created_by == admin_user


def test_it_rejects_items_of_another_stage(client_for, admin_user) -> None:
    from benchmark.models import Artifact

    paper = make_paper()
    idea = Artifact.objects.create(research_run=paper.research_run, stage=Artifact.Stage.IDEA, content="x")
    r = client_for(admin_user).post(
        reverse("review:campaign_create"),
        {"name": "x", "stage": "paper", "rubric": make_rubric().pk, "reviewers_per_item": 2,
         "reclaim_after_hours": 1, "status": "open", "artifacts": [paper.pk, idea.pk]},
    )  # fmt: skip
    assert r.status_code == 400 and b"not of stage paper" in r.content
    assert not Campaign.objects.exists()


@pytest.fixture
def campaign(reviewer) -> Campaign:
    others = [make_reviewer(f"r{i}") for i in range(4)]
    c = campaign_create(
        name="prog", rubric=make_rubric(), artifacts=[make_paper(backbone="gemini") for _ in range(3)],
        reviewers=[reviewer, *others], reviewers_per_item=2, deadline=timezone.now() - timedelta(hours=1),
        reclaim_after_hours=24,
    )  # fmt: skip
    return c


def test_it_assigns_from_the_page_and_shows_coverage_and_overdue(client_for, admin_user, reviewer, campaign) -> None:
    c = client_for(admin_user)
    c.post(reverse("review:campaign_assign", args=[campaign.code]))
    assert campaign.assignments.count() == 6
    mine = campaign.assignments.filter(reviewer=reviewer).first()
    data = {f"score_{k}": "5" for k in ("clarity", "novelty", "soundness", "significance", "overall")}
    review_submit(assignment=mine, scores={k: {"score": 5, "justification": "j"} for k in data}, confidence=3)
    html = c.get(reverse("review:campaign_detail", args=[campaign.code])).content.decode()
    assert "1 of 6 reviews submitted" in html and "3 of 3 items fully assigned" in html
    assert "5 overdue" in html  # deadline passed, 5 still open
    assert "gemini" in html  # admins see systems


def test_it_reclaims_and_reassigns_from_the_page(client_for, admin_user, campaign) -> None:
    campaign_assign(campaign=campaign)
    stale = campaign.assignments.first()
    Assignment.objects.filter(pk=stale.pk).update(last_activity=timezone.now() - timedelta(days=2))
    c = client_for(admin_user)
    r = c.post(reverse("review:campaign_reclaim", args=[campaign.code]), follow=True)
    assert "1 assignment(s) reclaimed, 1 new one(s) made" in r.content.decode()
    stale.refresh_from_db()
    assert stale.status == Assignment.Status.RECLAIMED
    target = campaign.assignments.filter(status=Assignment.Status.ASSIGNED).first()
    holders = set(target.item.assignments.values_list("reviewer_id", flat=True))
    free = campaign.members.exclude(reviewer_id__in=holders).first()  # 5 members, at most 3 ever held it
    c.post(reverse("review:assignment_reassign", args=[campaign.code, target.code]), {"reviewer": free.reviewer_id})
    target.refresh_from_db()
    assert target.status == Assignment.Status.REASSIGNED
    assert target.item.assignments.get(status=Assignment.Status.ASSIGNED, slot=target.slot).reviewer == free.reviewer


def test_it_reports_a_refused_reassignment(client_for, admin_user, campaign) -> None:
    campaign_assign(campaign=campaign)
    a, b = campaign.items.first().assignments.all()
    r = client_for(admin_user).post(
        reverse("review:assignment_reassign", args=[campaign.code, a.code]), {"reviewer": b.reviewer_id}, follow=True
    )
    assert "Not reassigned" in r.content.decode()
    a.refresh_from_db()
    assert a.status == Assignment.Status.ASSIGNED


def test_it_exports_from_the_page(client_for, admin_user, campaign) -> None:
    campaign_assign(campaign=campaign)
    a = campaign.assignments.first()
    review_submit(assignment=a, scores={"overall": {"score": 9, "justification": "great"}}, confidence=5)
    c = client_for(admin_user)
    r = c.get(reverse("review:campaign_export", args=[campaign.code, "csv"]))
    assert r["Content-Disposition"].startswith("attachment")
    rows = list(csv.DictReader(io.StringIO(r.content.decode())))
    assert len(rows) == 1 and rows[0]["overall"] == "9" and rows[0]["overall_justification"] == "great"
    r = c.get(reverse("review:campaign_export", args=[campaign.code, "json"]))
    assert json.loads(r.content)["reviews"][0]["confidence"] == 5


def test_it_records_conflicts_from_the_page_and_assignment_respects_them(
    client_for, admin_user, reviewer, campaign
) -> None:
    c = client_for(admin_user)
    item = campaign.items.first()
    r = c.post(
        reverse("review:conflict_add", args=[campaign.code]),
        {"reviewer": reviewer.pk, "item_code": item.code},
        follow=True,
    )
    assert "Conflict recorded" in r.content.decode()
    r = c.post(
        reverse("review:conflict_add", args=[campaign.code]),
        {"reviewer": reviewer.pk, "item_code": "i-nope"},
        follow=True,
    )
    assert "No item i-nope" in r.content.decode()
    r = c.post(reverse("review:conflict_add", args=[campaign.code]), {"reviewer": reviewer.pk}, follow=True)
    assert "either an item code or a system" in r.content.decode()
    campaign_assign(campaign=campaign)
    assert not campaign.assignments.filter(reviewer=reviewer, item=item).exists()
    assert campaign.conflicts.count() == 1
    assert client_for(reviewer).post(reverse("review:conflict_add", args=[campaign.code]), {}).status_code == 403
