"""The channel layer for sync code: group messages, per-user notifications (e.g. "your run
finished"), and "access changed" signals that make open websockets check their permission again.

Every app's progress module sends through `group_send`: channels_redis's own `group_send`, called
from sync code with asgiref's `async_to_sync` as the Channels docs show. A thread that runs an event
loop of its own cannot use `async_to_sync` (asgiref refuses), so there the send runs in a short-lived
thread. It raises redis-py's ConnectionError/TimeoutError when Redis is away (within the hosts'
socket timeouts, config/settings.py).
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypedDict

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

log = logging.getLogger(__name__)


def _send(group: str, message: dict[str, Any]) -> None:
    async_to_sync(get_channel_layer().group_send)(group, message)


def group_send(group: str, message: dict[str, Any]) -> None:
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # the usual case: a worker, a view, a command
        _send(group, message)
        return
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="group-send") as pool:
        pool.submit(_send, group, message).result()


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
