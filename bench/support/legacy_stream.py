"""The run stream's encoding as it was before "encode once" (issue 20), for `bench/stream_latency.py --runs`.

Every consumer received the step as a dict and encoded it to JSON itself (`send_json`), once per
viewer; the catch-up read whole rows and encoded them per viewer too. Served by a daphne process
of its own (`daphne bench.support.legacy_stream:application`), beside the real app, so that both paths are
measured in one run on the same machine, channel layer and database. Not used by the platform.

Only the encoding is the old one: the consumer is today's RunStreamConsumer otherwise, so its
sockets get their messages through the process's fan-out (accounts.fanout) too, and the
comparison isolates what encoding once saves. (channels' own session middleware, which the app
no longer uses for websockets, is kept here as it was.)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

from django.core.asgi import get_asgi_application  # noqa: E402

django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.db import database_sync_to_async  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402
from django.urls import path  # noqa: E402

from benchmark.runs import progress  # noqa: E402
from benchmark.runs.consumers import BATCH, RunStreamConsumer  # noqa: E402


class PerViewerEncoding(RunStreamConsumer):
    """The old relay: the group message carries the step as a dict; each viewer encodes it."""

    async def _catch_up(self) -> None:
        while True:
            steps = await database_sync_to_async(progress.steps_after)(self.run_id, self.last_sent, limit=BATCH)
            if not steps:
                return
            await self.send_json({"type": "steps", "steps": steps})
            self.last_sent = steps[-1]["index"]
            if len(steps) < BATCH:
                return

    async def run_step(self, message: dict[str, Any]) -> None:
        if self.last_sent is None:
            return
        index = message["step"]["index"]
        if index <= self.last_sent:
            return
        if index > self.last_sent + 1:
            await self._catch_up()
            return
        await self.send_json({"type": "steps", "steps": [message["step"]]})
        self.last_sent = index


def legacy_publish(run: Any, step: Any) -> None:
    """What the old step_append published: the payload dict (the bench appends with publish=False)."""
    message = {"type": "run.step", "step": dict(progress.step_payload(step, None))}
    progress.group_send(progress.run_group(run.code), message)


application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": AllowedHostsOriginValidator(
            AuthMiddlewareStack(URLRouter([path("ws/runs/<uuid:code>/", PerViewerEncoding.as_asgi())]))
        ),
    }
)
