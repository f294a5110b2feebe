"""config.channel_layer.ChannelLayer.group_send_now against the real Redis: what stock receive reads."""

import asyncio
import time

import pytest
import redis as redis_lib
from django.conf import settings

from config.channel_layer import ChannelLayer
from config.redis_server import free_port


def _layer(**config) -> ChannelLayer:
    return ChannelLayer(hosts=[{"address": settings.REDIS_URL}], prefix="test-layer", **config)


async def _receive(layer: ChannelLayer, channel: str, timeout: float = 5.0):
    return await asyncio.wait_for(layer.receive(channel), timeout)


async def test_it_reaches_every_process_and_every_socket_of_a_group(redis_client):
    one, two = _layer(), _layer()  # two daphne processes: each its own client prefix
    a1, a2 = await one.new_channel(), await one.new_channel()
    b1 = await two.new_channel()
    for channel in (a1, a2, b1):
        await (one if channel.startswith("specific." + one.client_prefix) else two).group_add("run_x", channel)
    message = {"type": "run.step", "index": 7, "wire": '{"index": 7, "text": "\\u00e9t\\u00e9"}'}

    one.group_send_now("run_x", message)

    assert await _receive(one, a1) == message
    assert await _receive(one, a2) == message
    assert await _receive(two, b1) == message
    # One queued message per receiving process, not per socket: the fan-out within a process is local.
    assert redis_client.zcard(f"test-layer{one.non_local_name(a1)}") == 0
    await one.flush()


async def test_it_skips_members_past_the_group_expiry_and_prunes_them(redis_client):
    layer = _layer(group_expiry=60)
    live, stale = await layer.new_channel(), await layer.new_channel()
    await layer.group_add("run_y", live)
    await layer.group_add("run_y", stale)
    redis_client.zadd(layer._group_key("run_y"), {stale: time.time() - 3600})

    layer.group_send_now("run_y", {"type": "run.status", "run": {"status": "finished"}})

    assert await _receive(layer, live) == {"type": "run.status", "run": {"status": "finished"}}
    assert redis_client.zrange(layer._group_key("run_y"), 0, -1) == [live.encode()]
    await layer.flush()


async def test_a_full_queue_drops_the_message_there_and_still_delivers_elsewhere(redis_client):
    full_layer, other = _layer(capacity=2), _layer(capacity=2)
    stuck = await full_layer.new_channel()  # a process that stopped reading
    fine = await other.new_channel()
    await full_layer.group_add("run_z", stuck)
    await other.group_add("run_z", fine)

    for index in range(1, 4):
        full_layer.group_send_now("run_z", {"type": "run.step", "index": index, "wire": "{}"})

    stuck_key = f"test-layer{full_layer.non_local_name(stuck)}"
    assert redis_client.zcard(stuck_key) == 2  # capacity 2: the third was dropped, not queued
    assert 0 < redis_client.ttl(stuck_key) <= full_layer.expiry
    assert [(await _receive(other, fine))["index"] for _ in range(2)] == [1, 2]
    await full_layer.flush()


async def test_an_empty_group_writes_nothing(redis_client):
    layer = _layer()
    layer.group_send_now("nobody_here", {"type": "run.step", "index": 1, "wire": "{}"})
    assert redis_client.keys("test-layer*") == []


def test_an_unreachable_redis_raises_a_connection_error_promptly_without_retrying():
    layer = ChannelLayer(hosts=[{"address": f"redis://127.0.0.1:{free_port()}/0"}], prefix="test-layer")
    started = time.monotonic()
    with pytest.raises(redis_lib.ConnectionError):
        layer.group_send_now("run_q", {"type": "run.step", "index": 1, "wire": "{}"})
    assert time.monotonic() - started < 5  # refused at once: no built-in retry loop behind the caller's


async def test_the_sync_senders_go_through_it_to_the_apps_layer(redis_client):
    from channels.layers import get_channel_layer

    from accounts import progress

    layer = get_channel_layer()
    assert isinstance(layer, ChannelLayer)
    channel = await layer.new_channel()
    await layer.group_add(progress.user_group(41), channel)
    event = {"kind": "run", "message": "finished", "url": "/runs/x/"}

    progress.user_notify(user_id=41, event=event)

    assert await _receive(layer, channel) == {"type": "user.event", "event": event}
    await layer.group_discard(progress.user_group(41), channel)


async def test_a_received_message_leaves_no_in_flight_copy_and_a_cancelled_receive_loses_nothing(redis_client):
    layer = _layer()
    channel = await layer.new_channel()
    await layer.group_add("run_r", channel)
    layer.group_send_now("run_r", {"type": "run.step", "index": 1, "wire": "{}"})
    assert (await _receive(layer, channel))["index"] == 1
    assert redis_client.keys("test-layer*inflight*") == []  # popped and handed over, nothing copied aside

    waiting = asyncio.ensure_future(layer.receive(channel))
    await asyncio.sleep(0.2)  # blocked in its pop
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    layer.group_send_now("run_r", {"type": "run.step", "index": 2, "wire": "{}"})
    assert (await _receive(layer, channel))["index"] == 2
    await layer.flush()
