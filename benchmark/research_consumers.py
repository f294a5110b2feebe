"""Live stage updates of a research run over `ws/research/<code>/`: permission check, then relay."""

from __future__ import annotations

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from benchmark.models import ResearchRun
from benchmark.research_permissions import can_view_research
from benchmark.research_progress import research_group, research_payload


@database_sync_to_async
def _snapshot(user, code) -> dict | None:  # type: ignore[no-untyped-def]
    run = ResearchRun.objects.filter(code=code).select_related("task").first()
    if run is None or not can_view_research(user, run):
        return None
    return dict(research_payload(run))


class ResearchStreamConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self) -> None:
        user = self.scope.get("user")
        code = self.scope["url_route"]["kwargs"]["code"]
        if user is None or not user.is_authenticated:
            await self.close(code=4401)
            return
        snapshot = await _snapshot(user, code)
        if snapshot is None:
            await self.close(code=4403)  # unknown run and foreign run look the same
            return
        self.group = research_group(code)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        # Joined before the snapshot is sent: an update landing in between arrives after it, never lost.
        await self.send_json({"type": "snapshot", "run": snapshot})

    async def disconnect(self, code: int) -> None:
        if hasattr(self, "group"):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def research_update(self, message: dict) -> None:
        await self.send_json({"type": "update", "run": message["run"]})
