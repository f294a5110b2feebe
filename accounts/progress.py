"""The channel layer for sync code: group messages, per-user notifications (e.g. "your run
finished"), and "access changed" signals that make open websockets check their permission again.

Every app's progress module sends through `group_send`: the calling thread writes the message to
Redis itself (config.channel_layer.ChannelLayer.group_send_now, two round trips), from any thread,
also one that runs an event loop of its own (async_to_sync refuses those). It raises redis-py's
ConnectionError/TimeoutError within config.channel_layer.SEND_TIMEOUT when Redis is away.
"""

from __future__ import annotations

import logging
from typing import Any, TypedDict

from channels.layers import get_channel_layer
from django.db import transaction

log = logging.getLogger(__name__)


def group_send(group: str, message: dict[str, Any]) -> None:
    get_channel_layer().group_send_now(group, message)


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
