"""accounts.fanout.LocalFanout with the real Redis: one membership per process, inline relays, faults."""

from __future__ import annotations

import asyncio

from channels_redis.core import RedisChannelLayer as ChannelLayer
from django.conf import settings

from accounts.fanout import LocalFanout
from config.redis_server import free_port, start_redis


class Socket:
    """What the fan-out calls: records what it is given, in order; can be made to fail."""

    def __init__(self, fail: bool = False) -> None:
        self.got: list[dict] = []
        self.broken = asyncio.Event()
        self.arrived = asyncio.Event()
        self.fail = fail

    async def fanout_deliver(self, message: dict) -> None:
        if self.fail:
            raise RuntimeError("this socket's send failed")
        self.got.append(message)
        self.arrived.set()

    async def fanout_broken(self) -> None:
        self.broken.set()


def _layer(url: str = "") -> ChannelLayer:
    return ChannelLayer(hosts=[{"address": url or settings.REDIS_URL}], prefix="test-fanout")


async def _until(socket: Socket, count: int) -> None:
    async def wait() -> None:
        while len(socket.got) < count:
            socket.arrived.clear()
            await socket.arrived.wait()

    await asyncio.wait_for(wait(), 5)


async def test_one_membership_per_process_however_many_sockets_watch(redis_client):
    layer = _layer()
    fanout = LocalFanout(layer)
    sockets = [Socket() for _ in range(3)]
    for socket in sockets:
        await fanout.join("run_a", socket)

    assert redis_client.zrange(layer._group_key("run_a"), 0, -1) == [fanout.channel_of("run_a").encode()]
    await layer.group_send("run_a", {"type": "run.step", "index": 1, "wire": "{}"})
    await layer.group_send("run_a", {"type": "run.step", "index": 2, "wire": "{}"})
    for socket in sockets:
        await _until(socket, 2)
        assert [m["index"] for m in socket.got] == [1, 2]

    for socket in sockets:
        await fanout.leave("run_a", socket)
    assert redis_client.zrange(layer._group_key("run_a"), 0, -1) == []  # the last one out leaves the group
    assert fanout.watching("run_a") == 0


async def test_a_failing_socket_does_not_stop_the_others(redis_client):
    fanout = LocalFanout(_layer())
    bad, good = Socket(fail=True), Socket()
    await fanout.join("run_b", bad)
    await fanout.join("run_b", good)
    await fanout.layer.group_send("run_b", {"type": "run.status", "run": {"status": "finished"}})
    await _until(good, 1)
    await fanout.layer.group_send("run_b", {"type": "run.status", "run": {"status": "failed"}})
    await _until(good, 2)  # the pump survived the first failure
    await fanout.leave("run_b", bad)
    await fanout.leave("run_b", good)


async def test_a_rejoin_after_everyone_left_gets_new_messages_and_nothing_stale(redis_client):
    fanout = LocalFanout(_layer())
    first = Socket()
    await fanout.join("run_c", first)
    await fanout.layer.group_send("run_c", {"type": "run.step", "index": 1, "wire": "{}"})
    await _until(first, 1)
    await fanout.leave("run_c", first)
    await fanout.layer.group_send("run_c", {"type": "run.step", "index": 2, "wire": "{}"})  # nobody watching

    second = Socket()
    await fanout.join("run_c", second)
    await fanout.layer.group_send("run_c", {"type": "run.step", "index": 3, "wire": "{}"})
    await _until(second, 1)
    assert [m["index"] for m in second.got] == [3]
    await fanout.leave("run_c", second)


async def test_when_redis_goes_away_every_socket_of_the_group_is_told(tmp_path):
    port = free_port()
    server = start_redis(data_dir=tmp_path / "redis", port=port, persist=False)
    try:
        fanout = LocalFanout(_layer(f"redis://127.0.0.1:{port}/0"))
        sockets = [Socket(), Socket()]
        for socket in sockets:
            await fanout.join("run_d", socket)
        await fanout.layer.group_send("run_d", {"type": "run.step", "index": 1, "wire": "{}"})
        for socket in sockets:
            await _until(socket, 1)
        server.terminate()
        server.wait(timeout=10)
        for socket in sockets:
            await asyncio.wait_for(socket.broken.wait(), 40)  # the pump's read fails: each socket closes
        assert fanout.watching("run_d") == 0  # and the next socket starts a new pump
    finally:
        if server.poll() is None:
            server.terminate()
