"""The channel layer as Channels ships it: channels_redis's RedisChannelLayer on the real Redis, with
sync code sending through `accounts.progress.group_send` (the layer's group_send on one long-lived loop
per process)."""

import asyncio
import multiprocessing
import threading
import time

import pytest
import redis as redis_lib
from channels_redis.core import RedisChannelLayer
from django.conf import settings

from accounts import progress
from config.redis_server import free_port


async def _receive(layer: RedisChannelLayer, channel: str, timeout: float = 5.0):
    return await asyncio.wait_for(layer.receive(channel), timeout)


def test_the_app_uses_channels_redis_own_layer():
    from channels.layers import get_channel_layer

    assert type(get_channel_layer()) is RedisChannelLayer
    assert settings.CHANNEL_LAYERS["default"]["BACKEND"] == "channels_redis.core.RedisChannelLayer"


async def test_sync_code_reaches_every_socket_of_a_group(redis_client):
    from channels.layers import get_channel_layer

    layer = get_channel_layer()
    one, two = await layer.new_channel(), await layer.new_channel()
    for channel in (one, two):
        await layer.group_add(progress.user_group(41), channel)
    event = {"kind": "run", "message": "finished", "url": "/runs/x/"}

    # From this thread, which runs an event loop: the send runs on the process's sending loop.
    progress.user_notify(user_id=41, event=event)
    # From a plain thread (a worker).
    sent = threading.Thread(target=progress.user_notify, kwargs={"user_id": 41, "event": {**event, "kind": "again"}})
    sent.start()
    await asyncio.get_running_loop().run_in_executor(None, sent.join)

    for channel in (one, two):
        assert await _receive(layer, channel) == {"type": "user.event", "event": event}
        assert (await _receive(layer, channel))["event"]["kind"] == "again"
        await layer.group_discard(progress.user_group(41), channel)


def test_an_unreachable_redis_raises_a_connection_error_promptly(settings):
    from channels.layers import channel_layers

    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [{"address": f"redis://127.0.0.1:{free_port()}/0", "socket_connect_timeout": 5}]},
        }
    }
    channel_layers.backends.clear()
    try:
        started = time.monotonic()
        with pytest.raises((redis_lib.ConnectionError, OSError)):
            progress.group_send("run_q", {"type": "run.step", "index": 1, "wire": "{}"})
        assert time.monotonic() - started < 5  # refused at once; the callers decide whether to retry
    finally:
        channel_layers.backends.clear()


def test_it_sends_every_message_over_a_connection_it_keeps(redis_client):
    progress.group_send("run_kept", {"type": "run.step", "index": 0, "wire": "{}"})  # the loop and its pool exist
    before = redis_client.info("stats")["total_connections_received"]
    for index in range(1, 21):
        progress.group_send("run_kept", {"type": "run.step", "index": index, "wire": "{}"})
    # A fresh event loop per send (async_to_sync from a worker) made channels_redis connect 20 times.
    assert redis_client.info("stats")["total_connections_received"] - before <= 1


def _send_from_child() -> None:
    progress.user_notify(user_id=43, event={"kind": "run", "message": "from the work horse", "url": "/"})


async def test_a_forked_process_sends_through_a_loop_of_its_own(redis_client):
    """An RQ job runs in a forked work horse: the parent's sending thread did not come with it."""
    from channels.layers import get_channel_layer

    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add(progress.user_group(43), channel)
    await asyncio.get_running_loop().run_in_executor(
        None, progress.group_send, "run_parent", {"type": "run.step", "index": 1, "wire": "{}"}
    )  # the parent's loop is running when it forks
    child = multiprocessing.get_context("fork").Process(target=_send_from_child)
    child.start()
    await asyncio.get_running_loop().run_in_executor(None, child.join, 20)
    assert child.exitcode == 0
    assert (await _receive(layer, channel))["event"]["message"] == "from the work horse"
    await layer.group_discard(progress.user_group(43), channel)
