"""The channel layer as Channels ships it: channels_redis's RedisChannelLayer on the real Redis, with
sync code sending through `accounts.progress.group_send` (asgiref's async_to_sync)."""

import asyncio
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

    # From this thread, which runs an event loop: the send goes through a thread of its own.
    progress.user_notify(user_id=41, event=event)
    # From a plain thread (a worker), as async_to_sync is meant to be used.
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
