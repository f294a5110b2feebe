"""Runs under faults, with the session's real redis-server killed and started again around them.

Redis dies at a chosen model call (the fake LLM transport pulls the trigger, so the moment is
exact): a short outage loses nothing and changes nothing; a longer one leaves the run interrupted
with every committed step, and Resume replays them into a fresh sandbox and goes on.
"""

from __future__ import annotations

import threading

import pytest

from benchmark.llm.transport import override_transport
from benchmark.models import AgentConfig, Run
from benchmark.runs.services import run_execute
from tests.benchmark.runs.faults_support import RedisKiller
from tests.benchmark.runs_support import agent, builtin_task, make_run
from tests.redis_plugin import session_redis_start

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.docker]


def reply(thought: str, command: str) -> str:
    return f"DISCUSSION\n{thought}\n\n```\n{command}\n```"


def llm_run(owner, **fields) -> Run:
    config = agent(AgentConfig.Kind.MODEL, model="anthropic:claude-test", price_input_per_mtok=1.0, **fields)
    return make_run(owner=owner, task=builtin_task("prisoners_dilemma"), agent_config=config)


def test_it_keeps_a_run_going_through_a_short_redis_outage(researcher, fake_llm, redis_control):
    fake_llm.anthropic(reply("one", "echo one"), tokens_in=1000)
    fake_llm.anthropic(reply("two", "echo two"), tokens_in=1000)
    fake_llm.anthropic(reply("done", "submit"), tokens_in=1000)
    restart = lambda: threading.Timer(1.5, session_redis_start).start()  # noqa: E731
    run = llm_run(researcher)
    with override_transport(RedisKiller(fake_llm, at=2, then=restart)):
        run_execute(run_id=run.pk)  # step 2's push waits for Redis; the run goes on
    run.refresh_from_db()
    assert (run.status, run.exit_status, run.error) == (Run.Status.FINISHED, "submitted", "")
    assert [s.action.strip() for s in run.steps.order_by("index")] == ["echo one", "echo two", "submit"]
    assert run.tokens_sent == 3000


def test_it_interrupts_a_run_when_redis_stays_away_and_resumes_it_from_its_committed_steps(
    researcher, fake_llm, redis_control, settings, client_for
):
    settings.RUN_REDIS_OUTAGE_LIMIT = 1.0
    fake_llm.anthropic(reply("one", "echo one > one.txt"), tokens_in=1000)
    fake_llm.anthropic(reply("two", "cd /tmp && echo two"), tokens_in=1000)
    run = llm_run(researcher, max_steps=4)
    with override_transport(RedisKiller(fake_llm, at=2)):
        run_execute(run_id=run.pk)
    run.refresh_from_db()
    # Interrupted, not failed: both steps are committed (step 2 before its push failed).
    assert (run.status, run.exit_status) == (Run.Status.INTERRUPTED, "interrupted")
    assert "unreachable for more than 1 s" in run.error and "ConnectionError" not in run.error
    assert run.steps.count() == 2 and run.tokens_sent == 2000

    session_redis_start()
    assert client_for(researcher).post(f"/runs/{run.code}/resume/").status_code == 302
    run.refresh_from_db()
    assert run.status == Run.Status.QUEUED and run.params["resumes"][0]["after_step"] == 2
    fake_llm.anthropic(reply("three", "cat /workspace/one.txt"), tokens_in=1000)
    fake_llm.anthropic(reply("four", "echo four"), tokens_in=1000)
    run_execute(run_id=run.pk)  # as the worker would, from the job the resume queued
    run.refresh_from_db()
    # The step limit counts both parts: two more steps, then the autosubmission at max_steps.
    steps = list(run.steps.order_by("index"))
    assert [s.index for s in steps] == [1, 2, 3, 4, 5]
    assert "autosubmission after max_steps" in steps[-1].thought and run.exit_status == "autosubmission (max_steps)"
    assert "one" in steps[2].observation  # the replay rebuilt the workspace the agent had left
    # The model saw its whole earlier conversation, and the step counter went on from 2.
    first_after = fake_llm.calls[2]["body"]["messages"]
    assert [m["content"] for m in first_after if m["role"] == "assistant"][:2] == [
        reply("one", "echo one > one.txt"),
        reply("two", "cd /tmp && echo two"),
    ]
    assert "(Current Step: 2, Remaining Steps: 2)" in first_after[-1]["content"]
    assert "(Current directory: /tmp)" in first_after[-1]["content"]
    assert run.tokens_sent == 4000 and run.cost == pytest.approx(4000 / 1e6)
    assert run.params["resumes"][0]["replayed"] == 2 and run.params["resumes"][0]["replay_differs"] == []
    page = client_for(researcher).get(f"/runs/{run.code}/").content.decode()
    assert "Resumed after step 2 by" in page and "2 committed step(s) replayed" in page
