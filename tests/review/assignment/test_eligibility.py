"""An account that can see runs or judgments never reviews a campaign whose systems it could identify."""

from __future__ import annotations

import pytest
from django.urls import reverse

from accounts.roles import ADMIN, RESEARCHER, REVIEWER
from accounts.services import roles_grant
from benchmark.models import ResearchRun
from review.assignment.services import AssignmentError, assignment_reassign, campaign_assign
from review.campaigns.services import campaign_create
from review.models import Assignment, Campaign, CampaignReviewer
from tests.benchmark.runs_support import make_run
from tests.review.factories import make_paper, make_reviewer, make_rubric

pytestmark = pytest.mark.django_db


def _reviewing(user):
    roles_grant(user, [REVIEWER])
    return user


def _form(papers, reviewers) -> dict:
    return {
        "name": "Blind study", "stage": "paper", "rubric": make_rubric().pk, "reviewers_per_item": 1,
        "reclaim_after_hours": 48, "status": "open", "artifacts": [p.pk for p in papers],
        "reviewers": [r.pk for r in reviewers],
    }  # fmt: skip


@pytest.mark.parametrize("persona", ["researcher", "admin_user"])
def test_it_refuses_a_run_seeing_reviewer_in_the_campaign_form(persona, request, client_for, admin_user) -> None:
    user = _reviewing(request.getfixturevalue(persona))
    papers = [make_paper(), make_paper(backbone="gemini")]  # released MLR-Bench runs: every researcher sees them
    response = client_for(admin_user).post(reverse("review:campaign_create"), _form(papers, [user]))
    assert response.status_code == 400
    page = response.content.decode()
    reason = "sees every run and judgment" if persona == "admin_user" else "can see the runs and judgments behind 2"
    assert f"{user.get_username()} " in page and reason in page
    assert not Campaign.objects.exists()


def test_it_accepts_a_researcher_who_sees_none_of_the_items(client_for, admin_user, researcher, other_researcher):
    paper = make_paper()
    ResearchRun.objects.filter(pk=paper.research_run_id).update(
        source=ResearchRun.Source.REFEREE, owner=other_researcher
    )  # someone else's run: the researcher cannot open it
    _reviewing(researcher)
    response = client_for(admin_user).post(reverse("review:campaign_create"), _form([paper], [researcher]))
    assert response.status_code == 302
    assert Campaign.objects.get().members.get().reviewer == researcher


def test_it_refuses_a_researcher_the_experiment_run_is_shared_with(researcher, other_researcher) -> None:
    from benchmark.models import Artifact
    from benchmark.runs.services import run_share

    paper = make_paper()
    ResearchRun.objects.filter(pk=paper.research_run_id).update(
        source=ResearchRun.Source.REFEREE, owner=other_researcher
    )
    agent_run = make_run(owner=other_researcher)
    Artifact.objects.filter(pk=paper.pk).update(experiment_run=agent_run)
    run_share(run=agent_run, user=researcher)
    with pytest.raises(AssignmentError, match="can see the runs and judgments behind 1 of the items"):
        campaign_create(name="c", rubric=make_rubric(), artifacts=[paper], reviewers=[_reviewing(researcher)])
    assert not Campaign.objects.exists()


def test_it_assigns_nothing_to_a_member_who_became_a_researcher(client_for, admin_user, reviewer) -> None:
    other = make_reviewer("olga")
    campaign = campaign_create(
        name="c", rubric=make_rubric(), artifacts=[make_paper(), make_paper()], reviewers=[reviewer, other],
        reviewers_per_item=1,
    )  # fmt: skip
    roles_grant(other, [RESEARCHER])  # e.g. in the Django admin, after the campaign was set up
    response = client_for(admin_user).post(reverse("review:campaign_assign", args=[campaign.code]), follow=True)
    page = response.content.decode()
    assert "Nothing assigned to olga: olga is a researcher who can see the runs and judgments behind 2" in page
    assert set(Assignment.objects.values_list("reviewer__username", flat=True)) == {"remy_reviewer"}
    detail = client_for(admin_user).get(reverse("review:campaign_detail", args=[campaign.code])).content.decode()
    assert 'class="badge bad" title="olga is a researcher' in detail


def test_it_refuses_to_reassign_to_a_run_seeing_member(reviewer) -> None:
    other = make_reviewer("olga")
    campaign = campaign_create(
        name="c", rubric=make_rubric(), artifacts=[make_paper()], reviewers=[reviewer, other], reviewers_per_item=1
    )
    campaign_assign(campaign=campaign)
    assignment = Assignment.objects.get()
    holder, target = (reviewer, other) if assignment.reviewer == reviewer else (other, reviewer)
    roles_grant(target, [ADMIN])
    with pytest.raises(AssignmentError, match="is an admin and sees every run"):
        assignment_reassign(assignment=assignment, to_reviewer=target)
    assert Assignment.objects.get().reviewer == holder


def test_it_refuses_a_membership_made_behind_the_form(reviewer, researcher) -> None:
    campaign = campaign_create(name="c", rubric=make_rubric(), artifacts=[make_paper()], reviewers=[reviewer])
    CampaignReviewer.objects.create(campaign=campaign, reviewer=_reviewing(researcher))  # the Django admin's inline
    result = campaign_assign(campaign=campaign)
    assert list(result.refused) == ["rita_researcher"]
    assert not Assignment.objects.filter(reviewer=researcher).exists()


def test_it_closes_the_review_pages_to_a_reviewer_who_became_a_researcher(client_for, reviewer) -> None:
    campaign = campaign_create(
        name="c", rubric=make_rubric(), artifacts=[make_paper()], reviewers=[reviewer], reviewers_per_item=1
    )
    campaign_assign(campaign=campaign)
    code = Assignment.objects.get().code
    assert client_for(reviewer).get(reverse("review:item", args=[code])).status_code == 200
    roles_grant(reviewer, [RESEARCHER])
    response = client_for(reviewer).get(reverse("review:item", args=[code]))
    assert response.status_code == 403 and b"cannot review this campaign" in response.content
    assert b"claude" not in response.content.lower()  # the refusal names no system
    draft = client_for(reviewer).post(reverse("review:draft", args=[code]), "{}", content_type="application/json")
    assert draft.status_code == 403
