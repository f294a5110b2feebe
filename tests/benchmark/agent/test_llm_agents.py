"""The LLM agent through both SDKs (HTTP faked at the transport), in a real sandbox, through every exit status."""

from __future__ import annotations

import pytest

from benchmark.models import AgentConfig, ModelEndpoint, Run, Score
from benchmark.runs.services import run_cancel, run_execute
from tests.benchmark.runs_support import agent, builtin_task, make_run, stub_task

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.docker]


def reply(thought: str, command: str) -> str:
    return f"DISCUSSION\n{thought}\n\n```\n{command}\n```"


@pytest.fixture
def task(db):
    return builtin_task("prisoners_dilemma")


def llm_run(owner, task, model="anthropic:claude-test", **fields):
    config = agent(AgentConfig.Kind.MODEL, model=model, **fields)
    return make_run(owner=owner, task=task, agent_config=config)


def finish(run: Run) -> Run:
    run_execute(run_id=run.pk)
    run.refresh_from_db()
    return run


def test_it_runs_an_anthropic_agent_to_submission_with_costs(researcher, task, fake_llm, redis_client):
    fake_llm.anthropic(reply("Look at the files.", "ls"), tokens_in=1000, tokens_out=100)
    fake_llm.anthropic(reply("Score it.", "validate"), tokens_in=2000, tokens_out=100)
    fake_llm.anthropic(reply("Done.", "submit"), tokens_in=3000, tokens_out=100)
    run = finish(llm_run(researcher, task, price_input_per_mtok=3.0, price_output_per_mtok=15.0))
    assert (run.status, run.exit_status) == (Run.Status.FINISHED, "submitted")
    assert (run.tokens_sent, run.tokens_received, run.api_calls) == (6000, 300, 3)
    assert run.cost == pytest.approx((6000 * 3 + 300 * 15) / 1e6)
    steps = list(run.steps.order_by("index"))
    assert [s.action.strip() for s in steps] == ["ls", "validate", "submit"]
    assert "strategy.py" in steps[0].observation and steps[0].thought.startswith("DISCUSSION")
    assert steps[0].tokens_sent == 1000 and steps[0].raw_response.endswith("```")
    # The model saw the task, the tools and, on the next call, the observation with the step counter.
    first, second = fake_llm.calls[0]["body"], fake_llm.calls[1]["body"]
    assert "validate" in first["system"] and "Prisoner" in first["messages"][0]["content"]
    assert "strategy.py" in second["messages"][-1]["content"]
    assert "(Current Step: 1, Remaining Steps: 49)" in second["messages"][-1]["content"]
    assert set(run.scores.values_list("kind", flat=True)) == {Score.Kind.VALIDATE, Score.Kind.SUBMIT}


def test_it_elides_old_observations_beyond_the_history_window(researcher, task, fake_llm, redis_client):
    for n in range(3):
        fake_llm.openai(reply(f"step {n}", f"echo out-{n}"))
    fake_llm.openai(reply("done", "submit"))
    run = finish(llm_run(researcher, task, model="openai:gpt-test", history_window=1))
    assert run.exit_status == "submitted"
    last = fake_llm.calls[-1]["body"]["messages"]
    users = [m["content"] for m in last if m["role"] == "user"]
    assert "out-2" in users[-1]
    assert "Old environment output" in users[1] and "out-0" not in users[1]


def test_it_reasks_a_malformed_reply_and_stops_after_three_with_exit_format(researcher, task, fake_llm, redis_client):
    fake_llm.openai("no command here")
    fake_llm.openai(reply("now right", "ls"))
    for _ in range(3):
        fake_llm.openai("still no command")
    run = finish(llm_run(researcher, task, model="openai:gpt-test"))
    assert run.exit_status == "exit_format"
    assert run.api_calls == 5
    assert "not formatted correctly" in fake_llm.calls[1]["body"]["messages"][-1]["content"]
    # The re-ask is not kept in the history: the next call sees ls's output after the good reply.
    assert all("not formatted" not in m["content"] for m in fake_llm.calls[2]["body"]["messages"])
    # The run's own submission is still scored (autosubmission), visibly.
    last = run.steps.order_by("-index").first()
    assert last.action.strip() == "submit" and "autosubmission after exit_format" in last.thought
    assert run.best_submission is not None


def test_it_stops_on_context_overflow_with_exit_context(researcher, task, fake_llm, redis_client):
    fake_llm.anthropic(reply("look", "ls"))
    fake_llm.error(
        400,
        {
            "type": "error",
            "error": {"type": "invalid_request_error", "message": "prompt is too long: 300000 tokens > 200000 maximum"},
        },
    )
    run = finish(llm_run(researcher, task))
    assert run.exit_status == "exit_context" and run.status == Run.Status.FINISHED
    assert "prompt is too long" in run.params["exit_detail"]


def test_it_retries_provider_errors_then_stops_with_exit_api(researcher, task, fake_llm, redis_client, settings):
    settings.LLM_MAX_RETRIES = 1
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    fake_llm.error(529, overloaded).error(529, overloaded)
    run = finish(llm_run(researcher, task))
    assert run.exit_status == "exit_api"
    assert len(fake_llm.calls) == 2  # the SDK retried once, with its backoff


def test_it_stops_at_the_cost_limit_and_autosubmits(researcher, task, fake_llm, redis_client):
    fake_llm.openai(reply("look", "ls"), tokens_in=1_000_000, tokens_out=0)
    fake_llm.openai(reply("more", "ls"), tokens_in=1_000_000, tokens_out=0)
    run = finish(llm_run(researcher, task, model="openai:gpt-test", price_input_per_mtok=1.0, cost_limit=1.5))
    assert run.exit_status == "autosubmission (exit_cost)"
    assert run.cost == pytest.approx(2.0)  # the call that crossed the limit is paid for and counted
    assert run.steps.count() == 2  # ls, then the autosubmission


def test_it_autosubmits_at_the_step_limit(researcher, task, fake_llm, redis_client):
    fake_llm.openai(reply("a", "ls")).openai(reply("b", "pwd"))
    local = ModelEndpoint.objects.create(
        name="local", provider="compat", base_url="http://127.0.0.1:9/v1", offers=[{"model": "local-model"}]
    )
    run = llm_run(researcher, task, model="compat:local-model", endpoint=local)
    run.params = {"max_steps": 2}
    run.save()
    run = finish(run)
    assert run.exit_status == "autosubmission (max_steps)"
    assert fake_llm.calls[0]["url"] == "http://127.0.0.1:9/v1/chat/completions"
    assert fake_llm.checks[0]["url"] == fake_llm.calls[0]["url"]  # checked there before the sandbox opened
    assert run.params["preflight"]["ok"] is True and run.params["preflight"]["words"] == "ok"
    assert run.best_submission is not None


def test_it_reports_a_missing_submission_at_the_step_limit(researcher, task, fake_llm, redis_client):
    fake_llm.openai(reply("delete it", "rm strategy.py"))
    run = llm_run(researcher, task, model="openai:gpt-test")
    run.params = {"max_steps": 1}
    run.save()
    run = finish(run)
    assert run.exit_status.endswith("(max_steps)") and not run.exit_status.startswith("autosubmission")
    assert run.scores.get(kind=Score.Kind.SUBMIT).error


def test_it_fails_visibly_with_exit_error_when_the_task_cannot_run(researcher, redis_client):
    run = finish(make_run(owner=researcher, task=stub_task()))
    assert (run.status, run.exit_status) == (Run.Status.FAILED, "exit_error")
    assert "cannot run" in run.error


def test_it_never_starts_a_run_cancelled_while_queued(researcher, task, redis_client):
    run = make_run(owner=researcher, task=task)
    assert run_cancel(run=run)
    assert run_execute(run_id=run.pk) is None
    run.refresh_from_db()
    assert (run.status, run.exit_status, run.step_count) == (Run.Status.CANCELLED, "exit_cancelled", 0)


def test_it_stops_a_running_run_at_the_next_step_when_cancelled(researcher, task, fake_llm, redis_client):
    from collections import deque

    run = llm_run(researcher, task, model="openai:gpt-test")

    class CancelOnSecondCall(deque):
        def popleft(self):
            if len(fake_llm.calls) == 2:  # the researcher presses Cancel while the model thinks
                run_cancel(run=Run.objects.get(pk=run.pk))
            return super().popleft()

    fake_llm.replies = CancelOnSecondCall()
    for n in range(5):
        fake_llm.openai(reply(f"step {n}", f"echo {n}"))
    run = finish(run)
    assert (run.status, run.exit_status) == (Run.Status.CANCELLED, "exit_cancelled")
    # The reply that came after the cancel never ran; no further step, no autosubmission. Its call
    # is paid for, though: in the run's totals, and named as recorded in no step.
    assert run.steps.count() == 1
    assert not run.scores.exists()
    assert run.api_calls == 2 and run.tokens_sent == 200
    assert run.params["cancel_unrecorded"]["api_calls"] == 1


def dead_endpoint(request):
    """An endpoint nobody listens on: the transport fails to connect."""
    import httpx2

    raise httpx2.ConnectError("[Errno 111] Connection refused", request=request)


def test_it_fails_a_run_whose_endpoint_never_answers_and_scores_nothing(researcher, task, fake_llm, settings):
    from benchmark.llm.transport import override_transport

    settings.LLM_MAX_RETRIES = 0
    local = ModelEndpoint.objects.create(
        name="local", provider="compat", base_url="http://127.0.0.1:9/v1", offers=[{"model": "local-model"}]
    )
    with override_transport(dead_endpoint):
        run = finish(llm_run(researcher, task, model="compat:local-model", endpoint=local))
    assert (run.status, run.exit_status) == (Run.Status.FAILED, "exit_api")
    assert "http://127.0.0.1:9/v1" in run.error and "Connection refused" in run.error
    # No autosubmission of the untouched starter code: nothing to score, nothing scored.
    assert run.steps.count() == 0 and not run.scores.exists()
    assert (run.best_attempt, run.best_submission, run.api_calls) == (None, None, 0)


def test_it_fails_a_run_whose_key_is_rejected_and_shows_the_providers_words(researcher, task, fake_llm, client_for):
    fake_llm.error(401, {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}})
    run = finish(llm_run(researcher, task))
    assert (run.status, run.exit_status) == (Run.Status.FAILED, "exit_api")
    assert "https://api.anthropic.com" in run.error and "invalid x-api-key" in run.error
    assert "sk-ant-test" not in run.error  # the key itself is never shown
    assert not run.scores.exists() and run.best_submission is None
    page = client_for(researcher).get(f"/runs/{run.code}/").content.decode()
    head = page[page.index('class="run-head') : page.index('class="toolbar')]
    assert 'class="badge bad"' in head and "invalid x-api-key" in head and "https://api.anthropic.com" in head


def test_it_keeps_autosubmission_for_a_run_that_lost_its_endpoint_after_answers(researcher, task, fake_llm, settings):
    from benchmark.llm.transport import override_transport

    settings.LLM_MAX_RETRIES = 0
    fake_llm.anthropic(reply("look", "ls"))

    def answers_then_dies(request):
        # The endpoint check and the first model call are answered; then the endpoint is gone.
        return fake_llm(request) if not fake_llm.calls else dead_endpoint(request)

    with override_transport(answers_then_dies):
        run = finish(llm_run(researcher, task))
    # MLGym's semantics: the run stops with exit_api and what the agent left is scored.
    assert (run.status, run.exit_status) == (Run.Status.FINISHED, "exit_api")
    last = run.steps.order_by("-index").first()
    assert last.action.strip() == "submit" and "autosubmission after exit_api" in last.thought
    assert run.best_submission is not None and run.scores.filter(kind=Score.Kind.SUBMIT).exists()
