"""The live run stream through the real ASGI app and channels_redis: permissions and the reconnect rule."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.test import Client

from benchmark.models import Run
from benchmark.runs import progress
from benchmark.runs.services import run_share
from tests.benchmark.runs_support import make_run

pytestmark = pytest.mark.django_db(transaction=True)


async def connect(user, code):
    from config.asgi import application

    headers = [(b"origin", b"http://127.0.0.1"), (b"host", b"127.0.0.1")]
    if user is not None:
        client = Client()
        await sync_to_async(client.force_login)(user)
        cookie = f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"
        headers.append((b"cookie", cookie.encode()))
    communicator = WebsocketCommunicator(application, f"/ws/runs/{code}/", headers=headers)
    connected, _ = await communicator.connect(timeout=5)
    return communicator, connected


def append(run: Run, n: int, *, publish: bool = True) -> None:
    for _ in range(n):
        progress.step_append(
            run=run, thought="t", action=f"echo {run.step_count + 1}\n", observation="o", publish=publish
        )


async def indexes(communicator, *, until: int) -> list[int]:
    """Step indexes received until index `until` arrives (status messages skipped)."""
    seen: list[int] = []
    while not seen or seen[-1] < until:
        message = await communicator.receive_json_from(timeout=5)
        if message["type"] == "steps":
            seen += [step["index"] for step in message["steps"]]
    return seen


@pytest.fixture
def run(researcher):
    return make_run(owner=researcher, status=Run.Status.RUNNING)


async def test_it_sends_committed_steps_then_live_ones(run, researcher, redis_client):
    await sync_to_async(append)(run, 3)
    communicator, connected = await connect(researcher, run.code)
    assert connected
    await communicator.send_json_to({"after": 0})
    assert await indexes(communicator, until=3) == [1, 2, 3]
    status = await communicator.receive_json_from(timeout=5)
    assert status["type"] == "status" and status["run"]["step_count"] == 3
    await sync_to_async(append)(run, 1)
    message = await communicator.receive_json_from(timeout=5)
    assert [s["index"] for s in message["steps"]] == [4] and message["steps"][0]["action"] == "echo 4\n"
    await communicator.disconnect()


async def test_it_resumes_after_the_last_step_the_client_holds(run, researcher, redis_client):
    await sync_to_async(append)(run, 2)
    first, _ = await connect(researcher, run.code)
    await first.send_json_to({"after": 0})
    assert await indexes(first, until=2) == [1, 2]
    await first.disconnect()
    await sync_to_async(append)(run, 3)  # committed while the viewer was away
    second, _ = await connect(researcher, run.code)
    await second.send_json_to({"after": 2})
    await sync_to_async(append)(run, 1)
    assert await indexes(second, until=6) == [3, 4, 5, 6]  # no gap, no duplicate
    leftover = []
    while not await second.receive_nothing(timeout=0.3):
        leftover.append((await second.receive_json_from())["type"])
    assert "steps" not in leftover  # step 6 came once, whether read back or relayed
    await second.disconnect()


async def test_it_skips_duplicates_and_fills_gaps_from_the_database(run, researcher, redis_client):
    await sync_to_async(append)(run, 1)
    communicator, _ = await connect(researcher, run.code)
    await communicator.send_json_to({"after": 0})
    assert await indexes(communicator, until=1) == [1]
    await communicator.receive_json_from(timeout=5)  # status
    # A step whose message was lost (never published), then one that is: the consumer reads the gap back.
    await sync_to_async(append)(run, 1, publish=False)
    await sync_to_async(append)(run, 1)
    assert await indexes(communicator, until=3) == [2, 3]
    # A repeated message of a step already sent is dropped.
    index, wire = await sync_to_async(lambda: progress.wires_after(run.pk, 2)[0])()
    message = {"type": "run.step", "index": index, "wire": wire}
    await sync_to_async(progress.group_send)(progress.run_group(run.code), message)
    await sync_to_async(append)(run, 1)
    assert await indexes(communicator, until=4) == [4]
    await communicator.disconnect()


async def test_it_sends_the_text_stored_at_recording_live_and_on_catch_up(run, researcher, redis_client):
    from types import SimpleNamespace

    from benchmark.models import Score, Step

    live, _ = await connect(researcher, run.code)
    await live.send_json_to({"after": 0})
    assert (await live.receive_json_from(timeout=5))["type"] == "status"
    scored = SimpleNamespace(primary=0.5, metrics={"Score": 0.5}, error="")
    step = await sync_to_async(progress.step_append)(
        run=run, thought="t", action="validate", observation="out\x00put", score_kind="validate", score=scored
    )
    live_text = await live.receive_from(timeout=5)
    await live.disconnect()
    late, _ = await connect(researcher, run.code)
    await late.send_json_to({"after": 0})
    caught_up = await late.receive_from(timeout=5)
    await late.disconnect()

    stored = await sync_to_async(lambda: Step.objects.get(pk=step.pk))()
    assert live_text == caught_up == progress.steps_frame([stored.wire])  # one encoding, sent as it is
    # ...and it says what the database holds: the NUL as stored, the score of the step.
    row_score = await sync_to_async(lambda: Score.objects.get(step=stored))()
    assert json.loads(stored.wire) == progress.step_payload(stored, row_score)
    assert json.loads(stored.wire)["observation"] == "out\u2400put"
    assert json.loads(stored.wire)["score"]["primary"] == 0.5


async def test_it_encodes_a_step_stored_without_text_when_it_is_read(run, researcher, redis_client):
    from benchmark.models import Step

    def imported() -> None:  # as the trajectory import writes them: bulk rows, no stored text
        Step.objects.bulk_create([Step(run=run, index=i, action=f"echo {i}") for i in (1, 2)])
        run.step_count = 2

    await sync_to_async(imported)()
    await sync_to_async(append)(run, 1)  # a recorded step after them
    communicator, _ = await connect(researcher, run.code)
    await communicator.send_json_to({"after": 0})
    message = await communicator.receive_json_from(timeout=5)
    assert [(s["index"], s["action"]) for s in message["steps"]] == [(1, "echo 1"), (2, "echo 2"), (3, "echo 3\n")]
    await communicator.disconnect()


async def test_it_relays_status_changes(run, researcher, redis_client):
    communicator, _ = await connect(researcher, run.code)
    await communicator.send_json_to({"after": 0})
    assert (await communicator.receive_json_from(timeout=5))["type"] == "status"
    from benchmark.runs.services import run_cancel

    await sync_to_async(run_cancel)(run=run)
    message = await communicator.receive_json_from(timeout=5)
    # A running run: its worker is asked to stop; the viewer stays until the worker says it has.
    assert message["run"]["status"] == "cancelling" and message["run"]["finished"] is False
    await communicator.disconnect()


async def test_it_rejects_a_bad_hello(run, researcher, redis_client):
    communicator, _ = await connect(researcher, run.code)
    await communicator.send_json_to({"after": "zero"})
    assert (await communicator.receive_json_from(timeout=5))["type"] == "error"
    await communicator.disconnect()


@pytest.mark.parametrize(
    "who, allowed",
    [
        ("owner", True),
        ("admin_user", True),
        ("shared", True),
        ("other_researcher", False),
        ("reviewer", False),
        ("anonymous", False),
    ],
)
async def test_it_lets_only_owner_sharers_and_admins_watch(who, allowed, run, researcher, request, redis_client):
    if who == "owner":
        user = researcher
    elif who == "anonymous":
        user = None
    elif who == "shared":
        user = await sync_to_async(request.getfixturevalue)("other_researcher")
        await sync_to_async(run_share)(run=run, user=user)
    else:
        user = await sync_to_async(request.getfixturevalue)(who)
    communicator, connected = await connect(user, run.code)
    assert connected is allowed
    # Also after a refusal: end the application instance so no task outlives the test's loop.
    await communicator.disconnect()


async def test_it_refuses_an_unknown_run(researcher, redis_client):
    import uuid

    communicator, connected = await connect(researcher, uuid.uuid4())
    assert not connected
    await communicator.disconnect()


async def test_it_relays_steps_and_statuses_without_a_thread_hop_each(run, researcher, redis_client, monkeypatch):
    """Channels closes stale database connections in a worker thread before every handler; a relay
    reads nothing, so steps and statuses skip it (a fifth of a daphne's CPU at 500 viewers). The
    client's own message ({"after": N}), which reads the database, still goes through it."""
    import channels.consumer

    hops: list[str] = []
    original = channels.consumer.aclose_old_connections

    async def counted() -> None:
        hops.append("hop")
        await original()

    monkeypatch.setattr(channels.consumer, "aclose_old_connections", counted)
    communicator, connected = await connect(researcher, run.code)
    assert connected
    await communicator.send_json_to({"after": -1})
    assert (await communicator.receive_json_from(timeout=5))["type"] == "status"
    before = len(hops)
    assert before >= 1  # connect and the client's message took the hop
    await sync_to_async(append)(run, 3)
    assert await indexes(communicator, until=3) == [1, 2, 3]
    await sync_to_async(progress.run_status_send)(run)
    assert (await communicator.receive_json_from(timeout=5))["type"] == "status"
    assert len(hops) == before
    await communicator.disconnect()
