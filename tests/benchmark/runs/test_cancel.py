"""Cancel: confirmation, no command after the cancel, a running command stopped within seconds, and
the viewers' last word equal to the database's (issue 30, item 6)."""

from __future__ import annotations

import time
import uuid
from io import StringIO

import pytest
from asgiref.sync import sync_to_async
from django.core.management import call_command

from benchmark.llm.transport import override_transport
from benchmark.models import Run
from benchmark.runs import progress
from benchmark.runs.services import run_cancel, run_share
from tests.benchmark.runs.cancel_support import HeldCall, Worker, cancel_when_held, llm_run, reply
from tests.benchmark.runs.test_stream import connect
from tests.benchmark.runs_support import builtin_task, make_run

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def running(researcher):
    run = make_run(owner=researcher, status=Run.Status.RUNNING)
    progress.step_append(run=run, thought="t", action="ls\n", observation="o", publish=False)
    return run


@pytest.fixture
def task(db):
    return builtin_task("prisoners_dilemma")


# -- the view: confirmation and the permission checklist -------------------------------------------


def test_it_asks_to_confirm_first_and_writes_nothing_until_confirmed(running, researcher, client_for, redis_client):
    url = f"/runs/{running.code}/cancel/"
    page = client_for(researcher).post(url)
    assert page.status_code == 200
    body = page.content.decode()
    assert "Cancel this run?" in body and 'name="confirm" value="yes"' in body
    running.refresh_from_db()
    assert running.status == Run.Status.RUNNING
    assert client_for(researcher).post(url, {"confirm": "no"}).status_code == 200
    assert Run.objects.get(pk=running.pk).status == Run.Status.RUNNING


def test_it_shows_the_confirmation_only_to_who_may_cancel(
    running, researcher, other_researcher, admin_user, reviewer, client_for, redis_client
):
    url = f"/runs/{running.code}/cancel/"
    run_share(run=running, user=other_researcher)  # may watch, may not cancel
    for user, status in [(other_researcher, 403), (reviewer, 403), (None, 302)]:
        for data in ({}, {"confirm": "yes"}):
            response = client_for(user).post(url, data)
            assert response.status_code == status
            assert running.task.title not in response.content.decode()
    stranger = make_run(owner=other_researcher, status=Run.Status.RUNNING)
    assert client_for(researcher).post(f"/runs/{stranger.code}/cancel/").status_code == 404
    assert client_for(researcher).post(f"/runs/{uuid.uuid4()}/cancel/").status_code == 404
    assert client_for(researcher).get(url).status_code == 405
    assert Run.objects.get(pk=running.pk).status == Run.Status.RUNNING
    assert client_for(admin_user).post(url, {"confirm": "yes"}).status_code == 302
    assert Run.objects.get(pk=running.pk).status == Run.Status.CANCELLING


def test_it_cancels_a_queued_run_at_once_and_a_running_one_through_its_worker(researcher, client_for, redis_client):
    queued = make_run(owner=researcher)
    running = make_run(owner=researcher, status=Run.Status.RUNNING)
    client = client_for(researcher)
    client.post(f"/runs/{queued.code}/cancel/", {"confirm": "yes"})
    page = client.post(f"/runs/{running.code}/cancel/", {"confirm": "yes"}, follow=True).content.decode()
    queued.refresh_from_db()
    running.refresh_from_db()
    assert (queued.status, queued.exit_status) == (Run.Status.CANCELLED, "exit_cancelled") and queued.finished_at
    assert running.status == Run.Status.CANCELLING and running.finished_at is None
    assert "Cancel requested" in page and 'id="cancel-form"' not in page  # asked already
    again = client.post(f"/runs/{queued.code}/cancel/", {"confirm": "yes"}, follow=True).content.decode()
    assert "already Cancelled" in again


def test_it_reaps_a_cancelling_run_whose_worker_died_as_cancelled(running, redis_client, settings):
    settings.RUN_HEARTBEAT_TTL = 1
    while float(redis_client.info("server")["uptime_in_seconds"]) < settings.RUN_HEARTBEAT_TTL:
        time.sleep(0.1)
    Run.objects.filter(pk=running.pk).update(status=Run.Status.CANCELLING, worker_name="0123456789abcdef")
    call_command("reap_runs", stdout=StringIO())
    running.refresh_from_db()
    assert (running.status, running.exit_status) == (Run.Status.CANCELLED, "exit_cancelled")
    assert running.steps.count() == 1 and running.finished_at


# -- real runs: the real sandbox, the LLM faked at its HTTP transport ------------------------------


@pytest.mark.docker
def test_it_runs_no_command_of_a_reply_that_came_after_the_cancel(researcher, task, fake_llm, redis_client):
    fake_llm.openai(reply("echo one"), tokens_in=1000, tokens_out=100)
    fake_llm.openai(reply("touch /workspace/second-ran"), tokens_in=2000, tokens_out=200)
    run = llm_run(researcher, task)
    held = HeldCall(fake_llm, at=2)
    with override_transport(held):
        worker = Worker(run).start()
        assert held.entered.wait(120)  # step 1 is committed; the model thinks about step 2
        assert run_cancel(run=Run.objects.get(pk=run.pk))
        assert Run.objects.get(pk=run.pk).status == Run.Status.CANCELLING
        held.release.set()
        assert worker.join(120)
    run.refresh_from_db()
    assert (run.status, run.exit_status) == (Run.Status.CANCELLED, "exit_cancelled")
    assert [s.action.strip() for s in run.steps.order_by("index")] == ["echo one"]
    assert len(fake_llm.calls) == 2
    # The second call was paid for: in the run's totals, and said to be in no step.
    assert (run.api_calls, run.tokens_sent, run.tokens_received) == (2, 3000, 300)
    assert run.cost == pytest.approx((3000 * 3 + 300 * 15) / 1e6)
    assert run.params["cancel_unrecorded"] == {
        "api_calls": 1,
        "tokens_sent": 2000,
        "tokens_received": 200,
        "cost": pytest.approx((2000 * 3 + 200 * 15) / 1e6),
    }


@pytest.mark.docker
def test_it_stops_a_long_command_within_seconds_of_the_cancel(researcher, task, fake_llm, redis_client):
    fake_llm.openai(reply("echo started; sleep 300; echo finished"))
    fake_llm.openai(reply("echo after"))
    run = llm_run(researcher, task)
    worker = Worker(run).start()
    deadline = time.monotonic() + 120
    while not fake_llm.calls and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(3)  # the reply is parsed and `sleep 300` is running in the sandbox
    assert run_cancel(run=Run.objects.get(pk=run.pk))
    cancelled_at = time.monotonic()
    assert worker.join(120), "the run was still going two minutes after the cancel"
    stopped_after = time.monotonic() - cancelled_at
    run.refresh_from_db()
    assert (run.status, run.exit_status) == (Run.Status.CANCELLED, "exit_cancelled")
    assert stopped_after < 60  # not the command's 300 s: it was interrupted
    assert run.steps.count() == 0 and len(fake_llm.calls) == 1
    assert run.api_calls == 1 and run.params["cancel_unrecorded"]["api_calls"] == 1


def stored(pk: int) -> tuple[Run, list[int]]:
    """The run and its step indexes as committed; the helper thread's connection closed after."""
    from django.db import connection

    try:
        run = Run.objects.get(pk=pk)
        return run, list(run.steps.order_by("index").values_list("index", flat=True))
    finally:
        connection.close()


@pytest.mark.docker
async def test_it_sends_a_viewer_every_committed_step_and_the_final_state_last(
    researcher, task, fake_llm, redis_client
):
    for n in range(3):
        fake_llm.openai(reply(f"echo {n}"), tokens_in=1000, tokens_out=100)
    run = await sync_to_async(llm_run)(researcher, task)
    communicator, connected = await connect(researcher, run.code)
    assert connected
    await communicator.send_json_to({"after": 0})
    held = HeldCall(fake_llm, at=3)
    received: list[int] = []
    statuses: list[dict] = []
    with override_transport(held):
        worker = Worker(run).start()
        canceller = cancel_when_held(held, run)
        while not (statuses and statuses[-1]["finished"]):
            message = await communicator.receive_json_from(timeout=120)
            if message["type"] == "steps":
                received += [step["index"] for step in message["steps"]]
            elif message["type"] == "status":
                statuses.append(message["run"])
        assert await sync_to_async(worker.join)(120)
        canceller.join(10)
    await communicator.disconnect()
    run, indexes = await sync_to_async(stored)(run.pk)
    assert indexes == received == [1, 2]
    assert "cancelling" in [s["status"] for s in statuses]
    final = statuses[-1]
    assert final["status"] == "cancelled" and final["step_count"] == run.step_count == 2
    assert (final["cost"], final["tokens_sent"]) == (run.cost, run.tokens_sent) and run.api_calls == 3
    assert final["unrecorded"]["api_calls"] == 1
