"""Live stage updates of a research run over `ws/research/<code>/`: permission check, then relay."""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async

from accounts.consumers import ACCESS_LOST, AccessGuard
from benchmark.models import ResearchRun
from benchmark.research.permissions import can_view_research
from benchmark.research.progress import research_group, research_wire


@database_sync_to_async
def _snapshot(user, code) -> str | None:  # type: ignore[no-untyped-def]
    run = ResearchRun.objects.filter(code=code).select_related("task").first()
    if run is None or not can_view_research(user, run):
        return None
    return research_wire("snapshot", run)


class ResearchStreamConsumer(AccessGuard):
    """Closed with 4403 when the user loses access (accounts.consumers.AccessGuard)."""

    relay_types = frozenset({"research.update"})

    async def connect(self) -> None:
        user = self.scope.get("user")
        self.code = self.scope["url_route"]["kwargs"]["code"]
        if user is None or not user.is_authenticated:
            await self.close(code=4401)
            return
        # Joined before the snapshot is read: an update landing in between arrives after it, never lost.
        if not await self.guard_start(user, research_group(self.code)):
            await self.close(code=ACCESS_LOST)  # unknown run and foreign run look the same
            return
        snapshot = await _snapshot(user, self.code)
        if snapshot is None:
            await self.close(code=ACCESS_LOST)
            return
        await self.accept()
        await self.send(text_data=snapshot)
        self.fanout_open()  # updates that came in meanwhile follow the snapshot

    def allowed(self, user: Any) -> bool:
        run = ResearchRun.objects.filter(code=self.code).first()
        return run is not None and can_view_research(user, run)

    async def research_update(self, message: dict) -> None:
        await self.send(text_data=message["wire"])  # encoded once by research_send
