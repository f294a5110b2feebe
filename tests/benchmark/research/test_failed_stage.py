"""A failed research run's page: the failed stage offers to run again (its owner only), and the
experiment made by Referee's own agent does not claim "0 tool calls" above its 4-step trajectory."""

from __future__ import annotations

import pytest

from benchmark.models import Artifact, ResearchRun, Run
from benchmark.runs import progress
from tests.benchmark.runs_support import make_run
from tests.judge.factories import make_task

pytestmark = pytest.mark.django_db


@pytest.fixture
def failed(researcher):
    run = ResearchRun.objects.create(
        task=make_task("iclr2025_failing"), owner=researcher, backbone="anthropic:claude-test",
        stages=["idea", "experiment", "paper"], status=ResearchRun.Status.FAILED, error="Experiment failed",
    )  # fmt: skip
    Artifact.objects.create(research_run=run, stage="idea", content="# Idea")
    agent_run = make_run(owner=researcher, status=Run.Status.RUNNING)
    for i in range(4):
        progress.step_append(run=agent_run, thought="t", action=f"echo {i}", observation="x", publish=False)
    Run.objects.filter(pk=agent_run.pk).update(status=Run.Status.FAILED, exit_status="exit_error")
    Artifact.objects.create(
        research_run=run, stage="experiment", status=Artifact.Status.FAILED, error="the agent's code crashed",
        data={"trace": {"tool_calls": 0, "messages": 0}}, experiment_run=agent_run,
    )  # fmt: skip
    return run


def test_it_offers_to_run_the_failed_stage_again_and_shows_no_empty_trace(
    failed, researcher, other_researcher, client_for, redis_client
):
    page = client_for(researcher).get(f"/research/{failed.code}/").content.decode()
    experiment = page.split('id="stage-experiment"', 1)[1].split("</section>", 1)[0]
    assert "Run the experiment stage again" in experiment
    assert "0 tool calls" not in experiment and "4 steps" in experiment
    assert "Run the idea stage again" not in page  # a stage that is done is not offered
    assert client_for(other_researcher).get(f"/research/{failed.code}/").status_code == 404
    assert client_for(other_researcher).post(f"/research/{failed.code}/resume/").status_code == 404
    failed.refresh_from_db()
    assert failed.status == ResearchRun.Status.FAILED
    assert client_for(researcher).post(f"/research/{failed.code}/resume/").status_code == 302
    failed.refresh_from_db()
    assert failed.status == ResearchRun.Status.QUEUED
    import django_rq

    django_rq.get_queue("default").empty()
    django_rq.get_queue("runs").empty()


def test_it_keeps_an_imported_agents_trace_summary(researcher, client_for):
    run = ResearchRun.objects.create(
        task=make_task("iclr2025_traced"), owner=researcher, backbone="x", status=ResearchRun.Status.FINISHED
    )
    Artifact.objects.create(research_run=run, stage="experiment", data={"trace": {"tool_calls": 12, "messages": 30}})
    page = client_for(researcher).get(f"/research/{run.code}/").content.decode()
    assert "Agent trace: 12 tool calls, 30 messages" in page
