"""Judging an agent run's trajectory under the trajectory rubric: the prompt carries the steps (the
agent's identity left out), a long run is cut in the middle and the prompt says so, and the
judgment is stored like an artifact's. Providers faked at the HTTP transport."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from benchmark.models import Run, Step
from judge.models import Judgment
from judge.prompts import trajectory_render, trajectory_steps_text
from judge.services import judgment_execute, judgment_request
from tests.judge.factories import make_artifact, make_research_run, rubric, valid_reply
from tests.review.trajectory_factories import make_run, trajectory_rubric

pytestmark = pytest.mark.django_db
GPT = "openai:gpt-4o"


def test_it_judges_a_finished_run_under_the_trajectory_rubric(fake_llm, django_capture_on_commit_callbacks) -> None:
    run = make_run(agent_name="ClaudeCoder", model="anthropic:claude-sonnet-4-5")
    traj = trajectory_rubric()
    assert [d["key"] for d in traj.score_dimensions] == ["approach", "actions", "efficiency", "honesty", "overall"]
    with django_capture_on_commit_callbacks(execute=False):
        (judgment,) = judgment_request(run=run, rubric=traj, judge_models=[GPT], with_supplementary=False)
    fake_llm.openai(valid_reply(traj, 4, honesty=2), tokens_in=900, tokens_out=90)
    judgment = judgment_execute(judgment=judgment)
    assert judgment.status == Judgment.Status.SUCCEEDED, judgment.error
    assert (judgment.run_id, judgment.artifact_id) == (run.pk, None)
    assert judgment.score_of("efficiency") == 4 and judgment.score_of("honesty") == 2
    prompt = fake_llm.calls[0]["body"]["messages"][-1]["content"]
    assert "## Step 3" in prompt and "Action: validate" in prompt and '"Score": 1.25' in prompt
    assert "3 step(s), shown in full" in prompt and "Soundness of the approach" in prompt
    assert "ClaudeCoder" not in prompt  # the judge judges the work, not who did it
    assert len(judgment.prompt_hash) == 64


def test_it_refuses_a_run_under_a_paper_rubric_an_unfinished_run_and_both_or_neither() -> None:
    run, traj = make_run(), trajectory_rubric()
    with pytest.raises(ValidationError, match="under a trajectory rubric"):
        judgment_request(run=run, rubric=rubric("end2end"), judge_models=[GPT], with_supplementary=False)
    paper = make_artifact(make_research_run(), "paper", "# P")
    with pytest.raises(ValidationError, match="either an artifact or a run"):
        judgment_request(artifact=paper, run=run, rubric=traj, judge_models=[GPT], with_supplementary=False)
    with pytest.raises(ValidationError, match="does not apply to a Paper"):
        judgment_request(artifact=paper, rubric=traj, judge_models=[GPT], with_supplementary=False)
    Run.objects.filter(pk=run.pk).update(status=Run.Status.RUNNING)
    run.refresh_from_db()
    with pytest.raises(ValidationError, match="only a finished run"):
        judgment_request(run=run, rubric=traj, judge_models=[GPT], with_supplementary=False)
    assert not Judgment.objects.exists()
    with pytest.raises(IntegrityError), transaction.atomic():  # the database refuses both, and neither
        Judgment.objects.create(artifact=paper, run=run, rubric=traj, judge_model=GPT)
    with pytest.raises(IntegrityError), transaction.atomic():
        Judgment.objects.create(rubric=traj, judge_model=GPT)


def test_it_keeps_the_first_and_last_steps_of_a_long_run_and_says_how_many_were_left_out() -> None:
    run = make_run(steps=3)
    Step.objects.bulk_create(
        Step(run=run, index=i, thought=f"thinking {i}", action=f"python train.py --seed {i}", observation="x" * 3000)
        for i in range(4, 61)
    )
    Run.objects.filter(pk=run.pk).update(step_count=60)
    run.refresh_from_db()
    text, left_out = trajectory_steps_text(run, budget=30_000)
    assert 0 < left_out < 60 and len(text) < 31_000
    assert "## Step 1\n" in text and "## Step 60\n" in text and "--seed 30\n" not in text
    assert f"({left_out} of 60) left out by Referee" in text
    prompt = trajectory_render(run=run, rubric=trajectory_rubric()).user
    assert "60 step(s); " in prompt and "middle step(s) are left out to fit your context" in prompt
    full, none_cut = trajectory_steps_text(run, budget=10_000_000)
    assert none_cut == 0 and "--seed 30\n" in full


def test_it_shows_a_trajectory_judgment_to_admins_only(client_for, admin_user, researcher, reviewer) -> None:
    from django.urls import reverse

    run = make_run(owner=researcher)
    judgment = Judgment.objects.create(
        run=run, rubric=trajectory_rubric(), judge_model=GPT, status="succeeded",
        scores={"overall": {"score": 5, "justification": "looped twice"}},
    )  # fmt: skip
    url = reverse("judge:judgment_detail", args=[judgment.code])
    shown = client_for(admin_user).get(url)
    assert (
        shown.status_code == 200
        and "looped twice" in shown.content.decode()
        and run.task.slug in shown.content.decode()
    )
    assert client_for(researcher).get(url).status_code == 403  # even the run's owner: the campaigns are admins'
    assert client_for(reviewer).get(url).status_code == 403
    anon = client_for(None).get(url)
    assert anon.status_code == 302 and "/accounts/login" in anon["Location"]
    assert client_for(admin_user).post(url).status_code == 405
    assert (
        client_for(admin_user).get(url.replace(str(judgment.code), "00000000-0000-0000-0000-000000000000")).status_code
        == 404
    )
