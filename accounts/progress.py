"""The channel layer for sync code: group messages, per-user notifications (e.g. "your run
finished"), and "access changed" signals that make open websockets check their permission again.

Every app's progress module sends through `group_send`: channels_redis's own `group_send`, run on
one event loop per process that lives as long as the process (a daemon thread), the way an ASGI
server's loop would run it. channels_redis keeps its Redis connections per event loop and closes
them with the loop; asgiref's `async_to_sync`, called from a thread without a loop (the run
worker), makes a new loop for every call, so each message paid a new TCP connection to Redis and a
thread: 8 ms of a shell step's 13 ms of harness overhead (bench/stream_latency.py, issue 31). On
one loop the layer keeps its connections and a send is its Redis round trips.

It raises redis-py's ConnectionError/TimeoutError when Redis is away (within the hosts' socket
timeouts, config/settings.py); redis-py reconnects a connection Redis dropped on the next send.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from typing import Any, TypedDict

from channels.layers import get_channel_layer
from django.db import transaction

log = logging.getLogger(__name__)

# A send waits at most this long for the loop (Redis's socket timeouts end a stuck send first).
SEND_TIMEOUT = 30.0

_loop: asyncio.AbstractEventLoop | None = None
_loop_pid = 0
_loop_lock = threading.Lock()


def _sending_loop() -> asyncio.AbstractEventLoop:
    """This process's sending loop, started on first use; a forked child (an RQ job's work horse)
    starts its own, since the parent's thread did not come with it."""
    global _loop, _loop_pid
    with _loop_lock:
        if _loop is None or _loop_pid != os.getpid():
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="channel-layer-send", daemon=True).start()
            _loop, _loop_pid = loop, os.getpid()
        return _loop


def group_send(group: str, message: dict[str, Any]) -> None:
    """channels_redis's group_send, from sync code (any thread, also one that runs a loop of its own)."""
    loop = _sending_loop()
    future = asyncio.run_coroutine_threadsafe(get_channel_layer().group_send(group, message), loop)
    try:
        future.result(timeout=SEND_TIMEOUT)
    except TimeoutError:
        future.cancel()
        raise


class UserEvent(TypedDict):
    kind: str
    message: str
    url: str


def user_group(user_id: int) -> str:
    return f"user_{user_id}"


def access_group(user_id: int) -> str:
    """Every guarded websocket of a user joins this group (accounts.consumers.AccessGuard)."""
    return f"access_{user_id}"


def user_notify(*, user_id: int, event: UserEvent) -> None:
    group_send(user_group(user_id), {"type": "user.event", "event": dict(event)})


ACCESS_CHANGED = {"type": "access.changed"}


def access_changed(*groups: str) -> None:
    """After the current transaction commits, tell the sockets in `groups` to check their permission.

    Sent after the commit so that the check reads the new state. A lost message (Redis down) is
    caught by the consumers' periodic re-check; the change itself is committed either way.
    """

    def send() -> None:
        for group in groups:
            try:
                group_send(group, dict(ACCESS_CHANGED))
            except Exception:  # the layer is down: the backstop re-check closes the socket later
                log.warning("access change not sent to %s", group, exc_info=True)

    transaction.on_commit(send)


def user_access_changed(*user_ids: int) -> None:
    access_changed(*(access_group(user_id) for user_id in user_ids))
