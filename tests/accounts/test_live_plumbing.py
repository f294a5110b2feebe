"""Websockets through the full ASGI app and the real channels_redis layer; RQ after commit."""

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.db import transaction

from accounts.progress import user_group


async def _communicator(path, cookie=None):
    from config.asgi import application

    headers = [(b"origin", b"http://127.0.0.1"), (b"host", b"127.0.0.1")]
    if cookie:
        headers.append((b"cookie", cookie.encode()))
    return WebsocketCommunicator(application, path, headers=headers)


@pytest.mark.django_db(transaction=True)
async def test_it_refuses_an_anonymous_websocket():
    communicator = await _communicator("/ws/me/")
    connected, _ = await communicator.connect()
    assert not connected
    await communicator.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_it_delivers_a_group_message_to_a_signed_in_user(researcher):
    from django.test import Client

    client = Client()
    await sync_to_async(client.force_login)(researcher)
    cookie = f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"
    communicator = await _communicator("/ws/me/", cookie)
    connected, _ = await communicator.connect()
    assert connected
    layer = get_channel_layer()
    assert type(layer).__name__ == "RedisChannelLayer"  # channels_redis's own
    await layer.group_send(
        user_group(researcher.pk), {"type": "user.event", "event": {"kind": "run", "message": "done", "url": "/runs/"}}
    )
    assert await communicator.receive_json_from(timeout=5) == {"kind": "run", "message": "done", "url": "/runs/"}
    await communicator.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_it_refuses_a_foreign_origin(researcher):
    from config.asgi import application

    communicator = WebsocketCommunicator(
        application, "/ws/me/", headers=[(b"origin", b"http://evil.example"), (b"host", b"127.0.0.1")]
    )
    connected, _ = await communicator.connect()
    assert not connected


@pytest.mark.django_db(transaction=True)
def test_it_runs_an_rq_job_after_commit_not_before(researcher, redis_client):
    import django_rq
    from rq import SimpleWorker

    from accounts.models import Profile

    queue = django_rq.get_queue("default")
    queue.empty()
    with transaction.atomic():
        profile = Profile.objects.create(user=researcher, expertise=[])
        transaction.on_commit(
            lambda: queue.enqueue("tests.accounts.jobs_for_tests.tag_profile", profile.pk, "seen-by-worker")
        )
        assert queue.count == 0  # nothing is enqueued while the transaction is open
    assert queue.count == 1
    worker = SimpleWorker([queue], connection=queue.connection)
    worker.work(burst=True)
    profile.refresh_from_db()
    assert profile.expertise == ["seen-by-worker"]


@pytest.mark.django_db(transaction=True)
def test_it_enqueues_nothing_when_the_transaction_rolls_back(researcher, redis_client):
    import django_rq

    queue = django_rq.get_queue("default")
    queue.empty()
    with pytest.raises(RuntimeError):
        with transaction.atomic():
            transaction.on_commit(lambda: queue.enqueue("tests.accounts.jobs_for_tests.tag_profile", 1, "x"))
            raise RuntimeError("rollback")
    assert queue.count == 0
