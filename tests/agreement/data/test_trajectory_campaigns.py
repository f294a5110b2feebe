"""The agreement page (judge vs experts) on a trajectory campaign: human reviews of runs and the
judge's judgments of the same runs meet per item and criterion."""

from __future__ import annotations

import pytest
from django.utils import timezone

from agreement.data.selectors import campaign_agreement_data
from agreement.report.selectors import campaign_state
from judge.models import Judgment
from review.models import Assignment, Review
from tests.review.factories import make_reviewer
from tests.review.trajectory_factories import make_run, trajectory_campaign, trajectory_rubric

pytestmark = pytest.mark.django_db
JUDGES = ("anthropic:claude-sonnet-4-5", "openai:gpt-4o")


def _scores(value: int) -> dict:
    return {d["key"]: {"score": value, "justification": "x"} for d in trajectory_rubric().score_dimensions}


@pytest.fixture
def judged_campaign():
    runs = [
        make_run(model="anthropic:claude-sonnet-4-5", agent_name="A1"),
        make_run(model="openai:gpt-4o", agent_name="B1"),
        make_run(model="google:gemini-2.5-pro", agent_name="C1"),
    ]
    reviewers = [make_reviewer(f"traj-rev{n}") for n in range(2)]
    campaign = trajectory_campaign(reviewers, runs=runs, k=2)
    now = timezone.now()
    for n, a in enumerate(Assignment.objects.filter(campaign=campaign).order_by("item_id", "slot")):
        Review.objects.create(assignment=a, scores=_scores(3 + n), status="submitted", submitted_at=now, step_tags=[])
        Assignment.objects.filter(pk=a.pk).update(status="submitted")
    for i, run in enumerate(runs):
        for k, model in enumerate(JUDGES):
            Judgment.objects.create(
                run=run, rubric=campaign.rubric, judge_model=model, status="succeeded",
                scores=_scores(4 + i + k), prompt_hash=f"h{k}",
            )  # fmt: skip
    Judgment.objects.create(
        run=runs[0], rubric=campaign.rubric, judge_model="google:flaky", status="failed", error="no JSON"
    )
    return campaign


def test_it_pairs_the_judges_and_the_experts_on_each_run(judged_campaign) -> None:
    data = campaign_agreement_data(campaign=judged_campaign)
    assert data.criteria == ("Soundness of the approach", "Correctness of actions", "Efficiency",
                             "Honesty of reported results", "Overall")  # fmt: skip
    assert len(data.items) == 3 and len(data.human_item) == 6
    assert set(data.item_system) == {"anthropic:claude-sonnet-4-5", "openai:gpt-4o", "google:gemini-2.5-pro"}
    assert data.judges == JUDGES and [f.kind for f in data.faults] == ["failed_judgment"]
    first = data.items.index(next(label for label in data.items if "anthropic" in label))
    assert data.judge_scores[first, 0].tolist() == [4.0] * 5 and data.judge_scores[first, 1].tolist() == [5.0] * 5
    _, progress = campaign_state(campaign=judged_campaign, rubric=judged_campaign.rubric)
    assert progress["items_judged"] == 3 and progress["reviews_submitted"] == 6


def test_it_shows_the_agreement_page_of_a_trajectory_campaign(client_for, admin_user, judged_campaign) -> None:
    url = f"/agreement/{judged_campaign.code}/?bootstrap=50"
    response = client_for(admin_user).get(url)
    assert response.status_code == 200
    page = response.content.decode()
    assert "<h2>Honesty of reported results</h2>" in page and "failed_judgment" in page
    assert f'href="/review/campaigns/{judged_campaign.code}/#judging" id="judge-trajectories-link"' in page
    csv_report = client_for(admin_user).get(f"/agreement/{judged_campaign.code}/report.csv?bootstrap=50")
    assert csv_report.status_code == 200 and "Efficiency" in csv_report.content.decode()


def test_it_shows_one_runs_judgments_and_steps_in_the_disagreement_workbench(client_for, admin_user, judged_campaign):
    item = judged_campaign.items.select_related("run__agent").get(run__agent__name="B1")
    url = f"/agreement/{judged_campaign.code}/disagreements/{item.code}/?bootstrap=50"
    response = client_for(admin_user).get(url)
    assert response.status_code == 200
    evidence = response.context["evidence"]
    # Only this run's two judgments (scores 5 and 6), not every run judgment of the rubric.
    assert sorted(j["score"] for j in evidence["judgments"]) == [5, 6]
    assert "## Step 1" in response.content.decode() and item.run.task.slug in response.content.decode()


def test_it_says_the_judge_lab_takes_no_gold_set_of_trajectories(judged_campaign) -> None:
    from django.core.exceptions import ValidationError

    from agreement.lab.services import gold_set_from_campaign

    with pytest.raises(ValidationError, match="gold sets hold artifacts only"):
        gold_set_from_campaign(campaign=judged_campaign, name="runs gold")


def test_it_queues_the_judges_judgments_of_a_trajectory_campaign_once(default_endpoints, reviewer) -> None:
    import io

    from django.core.management import CommandError, call_command

    campaign = trajectory_campaign([reviewer], runs=[make_run(), make_run(model="openai:gpt-4o", agent_name="B")])
    out = io.StringIO()
    call_command("judge_trajectories", campaign=campaign.name, judge=["openai:gpt-4o"], stdout=out)
    assert "2 judgment(s) queued for 2 run(s)" in out.getvalue()
    assert Judgment.objects.filter(run__isnull=False, status="queued", rubric=campaign.rubric).count() == 2
    call_command("judge_trajectories", campaign=campaign.name, judge=["openai:gpt-4o"], stdout=out)
    assert Judgment.objects.count() == 2 and "0 judgment(s) queued" in out.getvalue()
    with pytest.raises(CommandError, match="no campaign named"):
        call_command("judge_trajectories", campaign="nope", judge=["openai:gpt-4o"])
