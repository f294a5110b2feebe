"""Group messages from sync code as they were sent before issue 31's kept loop: asgiref's
`async_to_sync` per message, which makes a new event loop (and so a new Redis connection in
channels_redis) for each call from a thread without a loop, for `bench/stream_latency.py
--append-variants`. Not used by the platform."""

from __future__ import annotations

from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from benchmark.runs import progress


def legacy_group_send(group: str, message: dict[str, Any]) -> None:
    async_to_sync(get_channel_layer().group_send)(group, message)


class sent_by:
    """`with sent_by(legacy_group_send):` the run's messages go through that function meanwhile."""

    def __init__(self, send: Any) -> None:
        self.send = send

    def __enter__(self) -> None:
        self.saved = progress.group_send
        progress.group_send = self.send

    def __exit__(self, *exc: object) -> None:
        progress.group_send = self.saved
