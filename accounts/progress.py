"""The channel layer for sync code: one sender loop per process, per-user notifications (e.g. "your
run finished"), and "access changed" signals that make open websockets check their permission again.

Group messages go out through one event loop per process, kept in a daemon thread, so that the
Redis connection of the channel layer is reused instead of reopened for every message, and so that
sending works from any thread, also one that runs an event loop of its own (async_to_sync refuses
those). Every app's progress module sends through `group_send`.
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

_loop_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_loop_pid: int | None = None


def _sender_loop() -> asyncio.AbstractEventLoop:
    """One loop per process (RQ forks a work horse per job: a forked child starts its own)."""
    global _loop, _loop_pid
    with _loop_lock:
        if _loop is None or _loop_pid != os.getpid() or _loop.is_closed():
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="progress-sender", daemon=True).start()
            _loop, _loop_pid = loop, os.getpid()
        return _loop


def group_send(group: str, message: dict[str, Any], *, timeout: float = 10.0) -> None:
    layer = get_channel_layer()
    future = asyncio.run_coroutine_threadsafe(layer.group_send(group, message), _sender_loop())
    try:
        future.result(timeout=timeout)
    except BaseException:
        future.cancel()  # a send stuck on a dead Redis must not pile up in the loop behind retries
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
                group_send(group, dict(ACCESS_CHANGED), timeout=5.0)
            except Exception:  # the layer is down: the backstop re-check closes the socket later
                log.warning("access change not sent to %s", group, exc_info=True)

    transaction.on_commit(send)


def user_access_changed(*user_ids: int) -> None:
    access_changed(*(access_group(user_id) for user_id in user_ids))
