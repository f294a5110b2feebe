"""An open websocket closes (4403) as soon as its user loses access: share revoked, role removed,
account deactivated, password changed, session ended - through the real ASGI app and channels_redis.

Closing is driven by "access.changed" group messages (no query per relayed step); the periodic
re-check catches changes made behind the app's back.
"""

from __future__ import annotations

import asyncio

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import Group
from django.utils import timezone

from accounts.roles import RESEARCHER
from benchmark.models import ResearchRun, Run, RunShare
from benchmark.runs.services import run_share, run_share_revoke
from tests.benchmark.runs.test_stream import append, connect, indexes
from tests.benchmark.runs_support import builtin_task, make_run

pytestmark = pytest.mark.django_db(transaction=True)
CLOSE_WITHIN = 2.0  # seconds; the message path takes milliseconds


async def closed_code(communicator, timeout: float = CLOSE_WITHIN) -> int | None:
    """The close code the server sends within `timeout`, skipping data frames; None if it stays open."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        # receive_nothing, not receive_output(timeout): a timed-out receive_output cancels the app.
        if await communicator.receive_nothing(timeout=0.05, interval=0.01):
            continue
        output = await communicator.receive_output()
        if output["type"] == "websocket.close":
            return output.get("code")
    return None


async def session_socket(user, path: str):
    """(communicator, the Django test client whose session opened it): a socket of one signed-in session."""
    from channels.testing import WebsocketCommunicator
    from django.conf import settings
    from django.test import Client

    from config.asgi import application

    client = Client()
    await sync_to_async(client.force_login)(user)
    cookie = f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"
    headers = [(b"origin", b"http://127.0.0.1"), (b"host", b"127.0.0.1"), (b"cookie", cookie.encode())]
    communicator = WebsocketCommunicator(application, path, headers=headers)
    connected, _ = await communicator.connect(timeout=5)
    assert connected
    return communicator, client


@pytest.fixture
def shared(researcher, other_researcher):
    run = make_run(owner=researcher, status=Run.Status.RUNNING)
    run_share(run=run, user=other_researcher)
    return run


async def _watching(user, run):
    communicator, connected = await connect(user, run.code)
    assert connected
    await communicator.send_json_to({"after": 0})
    assert (await communicator.receive_json_from(timeout=5))["type"] == "status"
    return communicator


async def test_it_closes_the_stream_when_the_share_is_revoked(shared, researcher, other_researcher, redis_client):
    viewer = await _watching(other_researcher, shared)
    owner = await _watching(researcher, shared)
    await sync_to_async(append)(shared, 1)
    assert await indexes(viewer, until=1) == [1]
    await sync_to_async(run_share_revoke)(run=shared, user=other_researcher, by=researcher)
    assert await closed_code(viewer) == 4403
    # The owner's socket on the same run stays open and keeps streaming.
    await sync_to_async(append)(shared, 1)
    assert await indexes(owner, until=2) == [1, 2]
    await viewer.disconnect()
    await owner.disconnect()
    # And a new connection is refused.
    again, connected = await connect(other_researcher, shared.code)
    assert not connected
    await again.disconnect()


async def test_it_sends_no_step_after_the_revocation(shared, other_researcher, redis_client):
    viewer = await _watching(other_researcher, shared)
    await sync_to_async(run_share_revoke)(run=shared, user=other_researcher)
    assert await closed_code(viewer) == 4403
    await sync_to_async(append)(shared, 3)
    assert await viewer.receive_nothing(timeout=0.3)
    await viewer.disconnect()


@pytest.mark.parametrize("change", ["role_removed", "group_emptied", "deactivated", "password_changed", "deleted"])
async def test_it_closes_the_stream_when_the_account_loses_access(change, shared, other_researcher, redis_client):
    viewer = await _watching(other_researcher, shared)

    def lose() -> None:
        if change == "role_removed":
            other_researcher.groups.remove(Group.objects.get(name=RESEARCHER))
        elif change == "group_emptied":
            Group.objects.get(name=RESEARCHER).user_set.clear()
        elif change == "deactivated":
            other_researcher.is_active = False
            other_researcher.save()
        elif change == "password_changed":
            other_researcher.set_password("a-new-Password-77")
            other_researcher.save(update_fields=["password"])
        else:
            other_researcher.delete()

    await sync_to_async(lose)()
    assert await closed_code(viewer) == 4403
    await viewer.disconnect()


async def test_it_keeps_the_stream_of_an_unrelated_change(
    shared, researcher, other_researcher, admin_user, redis_client
):
    viewer = await _watching(other_researcher, shared)
    other_run = await sync_to_async(make_run)(owner=researcher)
    await sync_to_async(run_share)(run=other_run, user=admin_user)
    await sync_to_async(run_share_revoke)(run=other_run, user=admin_user)  # another run's share
    await sync_to_async(run_share_revoke)(run=shared, user=admin_user)  # not shared with admin: no-op
    await sync_to_async(lambda: researcher.groups.remove(Group.objects.get(name=RESEARCHER)))()  # another user
    assert await closed_code(viewer, timeout=0.5) is None
    await sync_to_async(append)(shared, 1)
    assert await indexes(viewer, until=1) == [1]
    await viewer.disconnect()


async def test_it_catches_a_change_made_behind_the_apps_back_on_the_timer(
    shared, other_researcher, settings, redis_client
):
    settings.WS_ACCESS_RECHECK_SECONDS = 0.2
    viewer = await _watching(other_researcher, shared)
    # A queryset update sends no signal, so no group message: only the periodic re-check sees it.
    await sync_to_async(RunShare.objects.filter(run=shared).update)(revoked_at=timezone.now())
    assert await closed_code(viewer) == 4403
    await viewer.disconnect()


async def test_it_closes_the_sockets_of_a_session_that_logged_out(shared, other_researcher, redis_client):
    communicator, client = await session_socket(other_researcher, f"/ws/runs/{shared.code}/")
    other = await _watching(other_researcher, shared)  # a second session of the same user
    await sync_to_async(client.post)("/accounts/logout/")
    assert await closed_code(communicator) == 4403
    assert await closed_code(other, timeout=0.5) is None
    await communicator.disconnect()
    await other.disconnect()


async def test_it_closes_a_research_stream_when_the_role_goes(researcher, redis_client):
    def research_run():
        return ResearchRun.objects.create(task=builtin_task(), backbone="b", source=ResearchRun.Source.MLRBENCH)

    run = await sync_to_async(research_run)()
    communicator, _ = await session_socket(researcher, f"/ws/research/{run.code}/")
    assert (await communicator.receive_json_from(timeout=5))["type"] == "snapshot"
    await sync_to_async(lambda: researcher.groups.remove(Group.objects.get(name=RESEARCHER)))()
    assert await closed_code(communicator) == 4403
    await communicator.disconnect()


async def test_it_closes_the_notification_socket_of_a_deactivated_account(researcher, redis_client):
    from accounts.progress import user_notify

    communicator, _ = await session_socket(researcher, "/ws/me/")
    await sync_to_async(user_notify)(user_id=researcher.pk, event={"kind": "k", "message": "m", "url": "/"})
    assert (await communicator.receive_json_from(timeout=5))["kind"] == "k"

    def deactivate():
        researcher.is_active = False
        researcher.save(update_fields=["is_active"])

    await sync_to_async(deactivate)()
    assert await closed_code(communicator) == 4403
    await communicator.disconnect()


async def test_it_checks_access_on_changes_not_per_relayed_step(
    shared, other_researcher, monkeypatch, settings, redis_client
):
    """Relaying is group message -> socket: the permission check (a database read) runs on
    connect and on access changes, never per step."""
    from benchmark.runs.consumers import RunStreamConsumer

    settings.WS_ACCESS_RECHECK_SECONDS = 3600  # the backstop timer stays out of the count

    checks = []
    original = RunStreamConsumer.allowed
    monkeypatch.setattr(RunStreamConsumer, "allowed", lambda self, user: checks.append(1) or original(self, user))
    viewer = await _watching(other_researcher, shared)
    assert len(checks) == 1  # at connect
    await sync_to_async(append)(shared, 20)
    assert await indexes(viewer, until=20) == list(range(1, 21))
    assert len(checks) == 1
    await sync_to_async(run_share_revoke)(run=shared, user=other_researcher)
    assert await closed_code(viewer) == 4403
    assert len(checks) == 2
    await viewer.disconnect()
