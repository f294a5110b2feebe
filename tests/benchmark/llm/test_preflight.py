"""The endpoint check before work starts: launch forms launch nothing, and the worker fails a run
(or a research experiment) before its sandbox opens, with the URL and the provider's words."""

from __future__ import annotations

import pytest
from django.db import transaction
from django.urls import reverse

from benchmark.models import AgentConfig, ResearchRun, Run, Task
from benchmark.research.services import research_execute, research_launch
from benchmark.runs.services import run_execute
from tests.benchmark.runs_support import builtin_task, make_run, stub_task

pytestmark = pytest.mark.django_db

REFUSED_KEY = {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}


def launch_form(model: str) -> dict:
    return {
        "tasks": [builtin_task().pk], "agent_kind": "model", "model": model, "temperature": 0, "top_p": 0.95,
        "history_window": 5, "n_runs": 2, "max_steps": 5, "cost_limit": 1, "command_timeout": 60,
    }  # fmt: skip


def test_it_launches_a_run_on_the_chosen_endpoint_after_one_check(researcher, client_for, fake_llm):
    openai = fake_llm.endpoints["openai"]
    response = client_for(researcher).post("/runs/launch/", launch_form(f"{openai.code}/gpt-4o"))
    assert response.status_code == 302
    runs = Run.objects.filter(owner=researcher)
    assert runs.count() == 2 and {r.agent.endpoint for r in runs} == {openai}
    agent = runs.first().agent
    assert (agent.model, agent.name, agent.price_input_per_mtok) == ("openai:gpt-4o", "openai:gpt-4o", 0.0)
    assert len(fake_llm.checks) == 1 and fake_llm.calls == []  # one check for the launch, not one per run


def test_it_launches_nothing_when_the_endpoint_fails_its_check(researcher, client_for, fake_llm):
    fake_llm.check_error(401, REFUSED_KEY)
    openai = fake_llm.endpoints["openai"]
    response = client_for(researcher).post("/runs/launch/", launch_form(f"{openai.code}/gpt-4o"))
    page = response.content.decode()
    assert response.status_code == 200 and "nothing was launched" in page
    assert "gpt-4o at https://api.openai.com/v1 did not answer the check (HTTP 401)" in page
    assert "Incorrect API key provided" in page
    assert not Run.objects.exists() and not AgentConfig.objects.filter(endpoint=openai).exists()


def test_it_refuses_an_endpoint_without_a_key_at_launch(researcher, client_for, fake_llm, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    openai = fake_llm.endpoints["openai"]
    page = client_for(researcher).post("/runs/launch/", launch_form(f"{openai.code}/gpt-4o")).content.decode()
    assert "OpenAI cannot be used yet: its key is not configured (ask an admin)" in page
    assert "OPENAI_API_KEY" not in page and fake_llm.checks == [] and not Run.objects.exists()


def test_it_fails_a_run_before_its_sandbox_when_the_endpoint_does_not_answer(researcher, fake_llm, redis_client):
    fake_llm.check_error(401, REFUSED_KEY)
    openai = fake_llm.endpoints["openai"]
    config = AgentConfig.objects.create(name="openai:gpt-4o", model="openai:gpt-4o", endpoint=openai)
    # A task that cannot run at all: had the sandbox step come first, the run would fail with "cannot run".
    run = make_run(owner=researcher, task=stub_task(), agent_config=config)
    run_execute(run_id=run.pk)
    run.refresh_from_db()
    # The same outcome as a model that never answered in the loop: failed, exit_api, unscored.
    assert (run.status, run.exit_status) == (Run.Status.FAILED, "exit_api")
    assert "gpt-4o at https://api.openai.com/v1 did not answer the check (HTTP 401)" in run.error
    assert not run.scores.exists()
    assert "Incorrect API key provided" in run.error and "cannot run" not in run.error
    check = run.params["preflight"]
    assert (check["ok"], check["status"], check["url"]) == (False, 401, "https://api.openai.com/v1")
    assert fake_llm.calls == [] and run.step_count == 0
    # Refused connection: the same, in the words of the network.
    fake_llm.check_refused()
    again = make_run(owner=researcher, task=stub_task(), agent_config=config)
    run_execute(run_id=again.pk)
    again.refresh_from_db()
    assert "could not connect" in again.error and "Connection refused" in again.error


def test_it_resolves_a_legacy_agent_config_to_the_default_endpoint_of_its_provider(researcher, fake_llm, redis_client):
    fake_llm.check_error(529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    config = AgentConfig.objects.create(name="anthropic:claude-old", model="anthropic:claude-old")  # no endpoint
    run = make_run(owner=researcher, task=stub_task(), agent_config=config)
    run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert fake_llm.checks[0]["url"] == "https://api.anthropic.com/v1/messages"
    assert fake_llm.checks[0]["body"]["model"] == "claude-old"
    assert "HTTP 529" in run.error and "Overloaded" in run.error


def test_it_fails_a_research_experiment_before_its_sandbox(researcher, fake_llm, redis_client, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.RESEARCH_EXPERIMENT_AGENT = ""
    fake_llm.check_error(401, REFUSED_KEY)
    task = Task.objects.create(slug="iclr2025_tiny", version_hash="t" * 64, kind=Task.Kind.MLR, title="Tiny")
    with transaction.atomic():
        run = research_launch(
            owner=researcher, task=task, backbone="openai:gpt-4o", endpoint=fake_llm.endpoints["openai"],
            stages=["experiment"], given={"idea": "# Idea", "literature": "Lit", "proposal": "# Proposal"},
        )  # fmt: skip
    research_execute(research_run_id=run.pk)
    run.refresh_from_db()
    experiment = run.artifacts.get(stage="experiment")
    assert run.status == ResearchRun.Status.FAILED and experiment.status == "failed"
    assert "did not answer the check (HTTP 401)" in experiment.error and "Incorrect API key" in experiment.error
    agent_run = Run.objects.get(task=task)  # the experiment's agent run, failed before its sandbox
    assert agent_run.status == Run.Status.FAILED and agent_run.step_count == 0
    assert agent_run.error.startswith("PreflightError") and agent_run.params["preflight"]["status"] == 401
    assert fake_llm.calls == []


def test_it_checks_the_research_launch_and_the_search_model(researcher, client_for, fake_llm, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    task = Task.objects.create(slug="iclr2025_tiny", version_hash="t" * 64, kind=Task.Kind.MLR, title="Tiny")
    openai = fake_llm.endpoints["openai"]
    form = {
        "task": task.pk, "backbone": f"{openai.code}/gpt-4.1", "mode": "end2end",
        "literature_provider": "openai_search", "literature_model": "", "temperature": 0,
    }  # fmt: skip
    page = client_for(researcher).post(reverse("benchmark:research_new"), form).content.decode()
    assert "the OpenAI search provider needs a search model" in page
    search = f"{openai.code}/gpt-4o-search-preview"
    assert (
        client_for(researcher).get(reverse("benchmark:research_new")).context["form"]["literature_model"].initial
        == search
    )
    response = client_for(researcher).post(reverse("benchmark:research_new"), {**form, "literature_model": search})
    assert response.status_code == 302
    run = ResearchRun.objects.get()
    assert run.settings["literature_endpoint"] == str(openai.code)
    assert run.settings["literature_model"] == "openai:gpt-4o-search-preview" and "base_url" not in run.settings
