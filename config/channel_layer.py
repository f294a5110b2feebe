"""The channel layer: channels_redis, plus a group send for sync code in one Redis round trip.

Sync code (a run worker appending a step, a web request saying "access changed") used to send a
group message through an event loop kept in a thread: a thread hop, then channels_redis's
`group_send`, which makes four round trips with the asyncio Redis client (prune the group, read
it, prune every member's queue, queue the message). That was 1.8 ms of each step's append with
nobody watching, and more under fan-out (issue 20, bench/stream_latency.py); on an idle machine
each round trip also waits for Redis to wake up (0.15 ms hot, 0.7 ms after 5 ms of quiet).

`group_send_now` writes exactly what `group_send` writes - the same keys, the same serialised
message per receiving process, the same capacity and expiry rules, so the stock `receive` of every
daphne reads it - from the calling thread with the sync client, in one EVALSHA: the script prunes
the group, reads its members, and queues on each receiving process's key the message with that
process's channels (`__asgi_channel__`), which it appends to the message serialised here.

Receiving: channels_redis pops a message (BZPOPMIN), then copies it to an "in flight" backup
queue (ZADD) before handing it over, and after that removes it from there (ZPOPMIN), running a
script that moves backups back before every pop. Nothing is awaited between the pop's reply and
the hand-over, so the copy guards no window a cancellation could hit; it cost one round trip
before every message reached its socket and two more after. `_brpop_with_clean` here just pops.

It supports what config.settings configures: one Redis host, msgpack, no encryption, one capacity
for every channel; anything else is refused when the layer is made.

Failures surface as redis-py's ConnectionError/TimeoutError after SEND_TIMEOUT seconds, with no
retry here: the callers decide (benchmark.runs.progress.send_retrying backs off; a web request
logs and goes on, the state being committed and read again on reconnect).
"""

from __future__ import annotations

import logging
import os
import random
import threading
import time
from typing import Any

import msgpack
import redis
from channels_redis.core import RedisChannelLayer
from channels_redis.serializers import MsgPackSerializer
from redis.backoff import NoBackoff
from redis.retry import Retry

log = logging.getLogger(__name__)

SEND_TIMEOUT = 5.0  # seconds for the sync client to connect or to get a reply
RANDOM_PREFIX = 12  # channels_redis's default: sorted-set members must differ

# KEYS[1]: the group. ARGV: now, group expiry, message expiry, capacity, key prefix, the message
# serialised up to its "__asgi_channel__" value. Returns how many queues were full (the message
# dropped there, as channels_redis drops it).
_GROUP_SEND_LUA = """
local now = tonumber(ARGV[1])
local group_expiry, expiry, capacity = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local prefix, head = ARGV[5], ARGV[6]
redis.call('ZREMRANGEBYSCORE', KEYS[1], 0, math.floor(now) - group_expiry)
local keys, channels = {}, {}
for _, channel in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
    local bang = string.find(channel, '!', 1, true)
    local key = prefix .. (bang and string.sub(channel, 1, bang) or channel)
    if channels[key] == nil then
        channels[key] = {}
        keys[#keys + 1] = key
    end
    table.insert(channels[key], channel)
end
local full = 0
for _, key in ipairs(keys) do
    redis.call('ZREMRANGEBYSCORE', key, 0, math.floor(now) - expiry)
    if redis.call('ZCARD', key) < capacity then
        redis.call('ZADD', key, now, head .. cmsgpack.pack(channels[key]))
        redis.call('EXPIRE', key, expiry)
    else
        full = full + 1
    end
end
return full
"""


class ChannelLayer(RedisChannelLayer):
    """channels_redis's layer with `group_send_now` for code that runs outside an event loop."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        problems = []
        if self.ring_size != 1:
            problems.append(f"{self.ring_size} Redis hosts (one is supported)")
        if not isinstance(self._serializer, MsgPackSerializer) or self._serializer.crypter:
            problems.append("a serializer other than plain msgpack")
        if self._serializer.random_prefix_length != RANDOM_PREFIX:
            problems.append(f"random_prefix_length {self._serializer.random_prefix_length}")
        if self.channel_capacity:
            problems.append("per-channel capacities")
        if problems:
            raise ValueError("config.channel_layer.ChannelLayer does not support " + ", ".join(problems))
        self._sync_lock = threading.Lock()
        self._sync_pid: int | None = None
        self._sync_client: redis.Redis | None = None
        self._sync_script: Any = None

    async def _brpop_with_clean(self, index: int, channel: str, timeout: float) -> bytes | None:
        result = await self.connection(index).bzpopmin(channel, timeout=timeout)
        return None if result is None else result[1]

    async def _clean_receive_backup(self, index: int, channel: str) -> None:
        return None  # nothing was copied to a backup queue

    def _script(self) -> Any:
        with self._sync_lock:
            if self._sync_pid != os.getpid() or self._sync_script is None:  # a forked child opens its own
                options = dict(self.hosts[0])
                address = options.pop("address", None)
                options.pop("socket_timeout", None)
                options.update(
                    socket_timeout=SEND_TIMEOUT, socket_connect_timeout=SEND_TIMEOUT, retry=Retry(NoBackoff(), 0)
                )
                self._sync_client = redis.Redis.from_url(address, **options) if address else redis.Redis(**options)
                self._sync_script = self._sync_client.register_script(_GROUP_SEND_LUA)
                self._sync_pid = os.getpid()
            return self._sync_script

    def group_send_now(self, group: str, message: dict[str, Any]) -> None:
        """`group_send` from sync code: one round trip, blocking the calling thread."""
        assert self.require_valid_group_name(group), "Group name not valid"
        packed = msgpack.packb({**message, "__asgi_channel__": []})
        if not packed.endswith(b"\x90"):  # the empty array last: the script appends the real one
            raise ValueError("message does not serialise with __asgi_channel__ last")
        head = random.getrandbits(8 * RANDOM_PREFIX).to_bytes(RANDOM_PREFIX, "big") + packed[:-1]
        args = [time.time(), self.group_expiry, self.expiry, self.capacity, self.prefix, head]
        full = self._script()(keys=[self._group_key(group)], args=args)
        if full:
            log.info("%s channel queue(s) over capacity in group %s", full, group)
