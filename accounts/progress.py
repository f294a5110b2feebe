"""The accounts app's use of the channel layer: per-user notifications (e.g. "your run finished")."""

from __future__ import annotations

from typing import TypedDict

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer


class UserEvent(TypedDict):
    kind: str
    message: str
    url: str


def user_group(user_id: int) -> str:
    return f"user_{user_id}"


def user_notify(*, user_id: int, event: UserEvent) -> None:
    layer = get_channel_layer()
    async_to_sync(layer.group_send)(user_group(user_id), {"type": "user.event", "event": dict(event)})
