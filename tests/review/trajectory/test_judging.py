"""The control room's "Judge the trajectories": an admin queues the judge's judgments of a trajectory
campaign's runs under its rubric with chosen model endpoints (review.trajectory.judging, the same
service as `manage.py judge_trajectories`). Real client, DB and Redis; providers faked at the HTTP
transport only."""

from __future__ import annotations

import django_rq
import pytest
from django.urls import reverse

from benchmark.models import ModelEndpoint, Run
from judge.jobs import run_judgment
from judge.models import Judgment
from review.campaigns.services import campaign_create
from tests.judge.factories import valid_reply
from tests.review.factories import make_paper, make_rubric
from tests.review.trajectory_factories import make_run, trajectory_campaign, trajectory_rubric

pytestmark = pytest.mark.django_db
GPT = "openai:gpt-4o"


@pytest.fixture
def campaign(reviewer):
    runs = [make_run(), make_run(model="openai:gpt-4o", agent_name="B")]
    return trajectory_campaign([reviewer], runs=runs)


def _url(campaign) -> str:
    return reverse("review:campaign_judge", args=[campaign.code])


def _gpt(endpoints) -> str:
    return f"{endpoints['openai'].code}/gpt-4o"


def _on(endpoints) -> str:
    return f"gpt-4o on {endpoints['openai'].name}"


def _said(response) -> list[str]:
    """The messages the campaign page shows after the redirect (posted with follow=True)."""
    assert response.redirect_chain[-1][0].endswith("#judging")
    return [str(m) for m in response.context["messages"]]


def test_it_lets_only_admins_queue_judgments(client_for, people, default_endpoints, campaign) -> None:
    url, form = _url(campaign), {"judge_models": [_gpt(default_endpoints)]}
    for who in ("reviewer", "owner", "other"):
        assert client_for(people[who]).post(url, form).status_code == 403, who
    anonymous = client_for(None).post(url, form)
    assert anonymous.status_code == 302 and reverse("accounts:login") in anonymous["Location"]
    admin = client_for(people["admin"])
    assert admin.get(url).status_code == 405  # no writes on GET
    assert admin.get(reverse("review:campaign_detail", args=[campaign.code])).status_code == 200
    bad = reverse("review:campaign_judge", args=["00000000-0000-0000-0000-000000000000"])
    assert admin.post(bad, form).status_code == 404
    assert not Judgment.objects.exists()


def test_it_needs_the_csrf_token(admin_user, default_endpoints, campaign) -> None:
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(admin_user)
    assert client.post(_url(campaign), {"judge_models": [_gpt(default_endpoints)]}).status_code == 403
    assert not Judgment.objects.exists()


def test_it_queues_judges_them_and_asks_again_only_what_failed(
    fake_llm, client_for, admin_user, campaign, redis_client, django_capture_on_commit_callbacks
) -> None:
    admin = client_for(admin_user)
    page = admin.get(reverse("review:campaign_detail", args=[campaign.code])).content.decode()
    assert 'id="judge-form"' in page and "No judgment of these runs yet." in page and _gpt(fake_llm.endpoints) in page
    with django_capture_on_commit_callbacks(execute=True):
        response = admin.post(_url(campaign), {"judge_models": [_gpt(fake_llm.endpoints)]}, follow=True)
    assert _said(response) == [f"2 judgment(s) queued for 2 run(s) with {_on(fake_llm.endpoints)}."]
    assert django_rq.get_queue("judge").count == 2  # the judge's own job path, after the commit
    first, second = Judgment.objects.filter(status="queued").order_by("run_id")
    assert (first.rubric, first.endpoint, first.requested_by) == (
        campaign.rubric,
        fake_llm.endpoints["openai"],
        admin_user,
    )
    fake_llm.openai(valid_reply(trajectory_rubric(), 4))
    for _ in range(3):
        fake_llm.openai("I would rather not score this.")  # never valid: a failure, recorded
    assert run_judgment(first.pk) == "succeeded" and run_judgment(second.pk) == "failed"
    page = admin.get(reverse("review:campaign_detail", args=[campaign.code])).content.decode()
    row = page.split('id="judging-status"', 1)[1].split("</tbody>", 1)[0]
    assert f"<td>{GPT}</td>" in row and '<span class="badge bad">1</span>' in row
    assert "1 failed or cut-off judgment(s)" in page and "no valid reply after 3 attempt(s)" in page
    with django_capture_on_commit_callbacks(execute=True):
        again = admin.post(_url(campaign), {"judge_models": [_gpt(fake_llm.endpoints)]}, follow=True)
    assert _said(again) == [
        f"1 judgment(s) queued for 2 run(s) with {_on(fake_llm.endpoints)}, 1 of them after an earlier failure.",
        "Not asked again: 1 already judged, 0 still queued or running.",
    ]
    retry = Judgment.objects.get(status="queued")
    assert retry.run_id == second.run_id
    with django_capture_on_commit_callbacks(execute=True):
        third = admin.post(_url(campaign), {"judge_models": [_gpt(fake_llm.endpoints)]}, follow=True)
    assert _said(third)[1] == "Not asked again: 1 already judged, 1 still queued or running."
    assert Judgment.objects.count() == 3


def test_it_shows_a_run_it_cannot_judge_as_a_failure_and_queues_the_rest(
    default_endpoints, client_for, admin_user, campaign, django_capture_on_commit_callbacks
) -> None:
    stuck = campaign.items.order_by("id").first()
    Run.objects.filter(pk=stuck.run_id).update(status=Run.Status.RUNNING)
    with django_capture_on_commit_callbacks(execute=False):
        response = client_for(admin_user).post(_url(campaign), {"judge_models": [_gpt(default_endpoints)]}, follow=True)
    said = _said(response)
    assert said[0] == f"1 judgment(s) queued for 2 run(s) with {_on(default_endpoints)}."
    assert said[1].startswith(f"Item {stuck.code} not queued: run ") and "only a finished run" in said[1]
    assert Judgment.objects.get().run_id != stuck.run_id


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("paper", "Nothing queued: Paper study reviews"),
        ("no_endpoint", "Nothing queued: no model endpoint is configured"),
        ("no_model", "Nothing queued: choose at least one judge model"),
        ("bad_model", "Nothing queued: Judge models: Select a valid choice"),
        ("no_items", "Nothing queued: traj holds no trajectory item yet"),
    ],
)
def test_it_refuses_what_cannot_be_judged_and_says_why(
    case, message, default_endpoints, client_for, admin_user, reviewer
) -> None:
    campaign = trajectory_campaign([reviewer])
    form = {"judge_models": [_gpt(default_endpoints)]}
    if case == "paper":
        campaign = campaign_create(
            name="Paper study", rubric=make_rubric(), artifacts=[make_paper()], reviewers=[reviewer]
        )
    elif case == "no_endpoint":
        ModelEndpoint.objects.update(enabled=False)
    elif case == "no_model":
        form = {}
    elif case == "bad_model":
        form = {"judge_models": ["openai:gpt-5-made-up"]}
    else:
        campaign.assignments.all().delete()
        campaign.items.all().delete()
    response = client_for(admin_user).post(_url(campaign), form, follow=True)
    (said,) = _said(response)
    assert said.startswith(message), said
    assert not Judgment.objects.exists()
    page = client_for(admin_user).get(reverse("review:campaign_detail", args=[campaign.code])).content.decode()
    if case == "paper":
        assert 'id="judge-form"' not in page  # a paper campaign offers no trajectory button
    if case == "no_endpoint":
        assert 'id="judge-no-endpoint"' in page and 'id="judge-form"' not in page
