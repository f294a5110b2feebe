"""A campaign page's "add items" picker: the campaign's own stage, searched and paged by the server
like the new-campaign form's picker (review.campaigns.candidates), the campaign's items left out,
a GET of the page without script; the POST of picks refuses another stage's items and items the
campaign has, and says which and why."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from benchmark.models import Artifact, Run
from review.campaigns.candidates import PAGE_SIZE
from review.campaigns.services import campaign_create
from review.models import TRAJECTORY, Campaign
from tests.review.factories import make_paper, make_rubric
from tests.review.trajectory_factories import make_run, trajectory_rubric

pytestmark = pytest.mark.django_db


def _texts(response) -> str:
    return " ".join(str(m) for m in response.context["messages"]) if response.context else ""


def _boxes(html: str) -> set[int]:
    return {int(v) for v in re.findall(r'name="artifacts" value="(\d+)"', html)}


@pytest.fixture
def campaign() -> Campaign:
    return campaign_create(
        name="growing", rubric=make_rubric(), artifacts=[make_paper(slug=f"iclr_in_{i}") for i in range(2)]
    )


def _detail(campaign: Campaign) -> str:
    return reverse("review:campaign_detail", args=[campaign.code])


def _candidates(campaign: Campaign) -> str:
    return reverse("review:campaign_item_candidates", args=[campaign.code])


def test_it_shows_one_page_of_the_items_that_can_join_and_pages_them_without_script(
    client_for, admin_user, campaign
) -> None:
    outside = [make_paper(slug=f"iclr_out_{i:02d}") for i in range(PAGE_SIZE + 5)]
    inside = set(campaign.items.values_list("artifact_id", flat=True))
    idea = Artifact.objects.create(research_run=outside[0].research_run, stage=Artifact.Stage.IDEA, content="x")
    admin = client_for(admin_user)
    html = admin.get(_detail(campaign)).content.decode()
    first = _boxes(html)
    assert len(first) == PAGE_SIZE and not first & inside and idea.pk not in first
    assert f"{PAGE_SIZE + 5} paper item(s) not in this campaign, page 1 of 2" in html
    assert f"{_detail(campaign)}?items_page=2#picker-items" in html  # the no-script pager link
    second = _boxes(admin.get(f"{_detail(campaign)}?items_page=2").content.decode())
    assert first | second == {p.pk for p in outside} and len(second) == 5
    found = admin.get(f"{_detail(campaign)}?items_q=out_03").content.decode()
    assert _boxes(found) == {outside[3].pk} and 'value="out_03"' in found
    # The open-assignments filter keeps its own q: it does not search the items.
    assert len(_boxes(admin.get(f"{_detail(campaign)}?q=out_03").content.decode())) == PAGE_SIZE


def test_it_gives_the_picker_rows_from_the_endpoint_to_admins_only(
    client_for, admin_user, researcher, reviewer, campaign
) -> None:
    extra = make_paper(slug="iclr_speech_z", backbone="gemini")
    url = _candidates(campaign)
    admin = client_for(admin_user)
    rows = admin.get(f"{url}?q=speech")
    assert rows.status_code == 200 and _boxes(rows.content.decode()) == {extra.pk}
    # The campaign's stage is fixed: another stage asked for still lists its papers, never its own items.
    other = admin.get(f"{url}?stage=idea").content.decode()
    assert _boxes(other) == {extra.pk} and 'data-stage="paper"' in other
    assert admin.get(f"{url}?q=in_").content.decode().count('name="artifacts"') == 0
    for user in (researcher, reviewer):
        refused = client_for(user).get(url)
        assert refused.status_code == 403 and "iclr_speech_z" not in refused.content.decode()
    anonymous = client_for(None).get(url)
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/accounts/login/")
    for method in ("post", "put", "delete"):
        assert getattr(admin, method)(url).status_code == 405
    missing = reverse("review:campaign_item_candidates", args=["00000000-0000-0000-0000-000000000000"])
    assert admin.get(missing).status_code == 404
    assert campaign.items.count() == 2  # read only


def test_it_refuses_picks_of_another_stage_or_already_in_the_campaign_and_says_why(
    client_for, admin_user, campaign
) -> None:
    new = make_paper(slug="iclr_new")
    present = campaign.items.first().artifact
    idea = Artifact.objects.create(research_run=new.research_run, stage=Artifact.Stage.IDEA, content="x")
    add = reverse("review:campaign_items_add", args=[campaign.code])
    admin = client_for(admin_user)
    r = admin.post(add, {"artifacts": [new.pk, present.pk, idea.pk]}, follow=True)
    said = _texts(r)
    assert "Items not added" in said and "1 already in this campaign" in said
    assert "1 of another stage (idea), not paper" in said and campaign.items.count() == 2
    unfinished = make_paper(slug="iclr_pending")
    Artifact.objects.filter(pk=unfinished.pk).update(status=Artifact.Status.RUNNING)
    said = _texts(admin.post(add, {"artifacts": [unfinished.pk]}, follow=True))
    assert "1 not among the finished paper items that can be blinded" in said and campaign.items.count() == 2
    assert "no item 999999 exists" in _texts(admin.post(add, {"artifacts": [999999]}, follow=True))
    assert "choose at least one item" in _texts(admin.post(add, {}, follow=True))
    ok = admin.post(add, {"artifacts": [new.pk]}, follow=True)
    assert "0 reviewer(s) and 1 item(s) added" in _texts(ok) and campaign.items.count() == 3


def test_it_offers_and_adds_finished_runs_to_a_trajectory_campaign(client_for, admin_user) -> None:
    first, second, running = make_run(), make_run(), make_run()
    Run.objects.filter(pk=running.pk).update(status=Run.Status.RUNNING)
    campaign = campaign_create(
        name="trajectories", rubric=trajectory_rubric(), artifacts=[], runs=[first], stage=TRAJECTORY
    )
    admin = client_for(admin_user)
    html = admin.get(_detail(campaign)).content.decode()
    assert _boxes(html) == {second.pk} and "trajectory: " in html  # posted as `artifacts`: the add-items contract
    add = reverse("review:campaign_items_add", args=[campaign.code])
    said = _texts(admin.post(add, {"artifacts": [first.pk, running.pk]}, follow=True))
    assert "1 already in this campaign" in said and "1 not among the finished runs with a trajectory" in said
    assert campaign.items.count() == 1
    admin.post(add, {"artifacts": [second.pk]})
    assert set(campaign.items.values_list("run_id", flat=True)) == {first.pk, second.pk}
    assert "every one is in this campaign" in admin.get(_detail(campaign)).content.decode()
