"""The live run stream. Relays only: permission check in connect, one group per run, no writes.

The socket closes with 4403 when its user loses access (a share revoked, a role removed...):
see accounts.consumers.AccessGuard, which re-checks on "access.changed" messages to the run's
group and the user's, never per relayed step.

Reconnect rule: the client says the last step index it holds ({"after": N}); the consumer sends
every committed step after it from the database, then relays live steps, skipping any index it
already sent and filling any gap from the database - so nothing is lost and nothing repeats.

Steps arrive encoded (benchmark.runs.progress, "encode once"): live and caught-up steps are sent
as the stored text, never decoded and encoded again per viewer. They come through the process's
fan-out (accounts.fanout): a relay sends and returns; a read (the hello's catch-up, a gap) is a
held job of this socket (AccessGuard.hold), live steps waiting in order behind it.
"""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async

from accounts.consumers import ACCESS_LOST, AccessGuard
from benchmark.models import Run
from benchmark.runs import progress
from benchmark.runs.permissions import can_view_run

BATCH = 200


class RunStreamConsumer(AccessGuard):
    last_sent: int | None = None  # nothing is relayed until the client says where it stands
    relay_types = frozenset({"run.step", "run.status"})

    async def connect(self) -> None:
        user = self.scope.get("user")
        code = self.scope["url_route"]["kwargs"]["code"]
        self.run_id: int | None = await database_sync_to_async(self._run_id)(code)
        # Unknown run, anonymous and foreign look the same.
        if self.run_id is None or user is None or not user.is_authenticated:
            await self.close(code=ACCESS_LOST)
            return
        if not await self.guard_start(user, progress.run_group(code)):
            await self.close(code=ACCESS_LOST)
            return
        await self.accept()
        self.fanout_open()

    def _run_id(self, code: Any) -> int | None:
        return Run.objects.filter(code=code).values_list("pk", flat=True).first()

    def allowed(self, user: Any) -> bool:
        run = Run.objects.filter(pk=self.run_id).first()
        return run is not None and can_view_run(user, run)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        after = content.get("after") if isinstance(content, dict) else None
        if not isinstance(after, int) or isinstance(after, bool) or after < -1:
            await self.send_json({"type": "error", "error": 'send {"after": <last step index held, -1 for none>}'})
            return
        self.hold(lambda: self._hello(after))

    async def _hello(self, after: int) -> None:
        self.last_sent = after
        await self._catch_up()
        await self.send_json({"type": "status", "run": await database_sync_to_async(self._run_payload)()})

    def _run_payload(self) -> dict[str, Any]:
        return dict(progress.run_payload(Run.objects.get(pk=self.run_id)))

    async def _catch_up(self) -> None:
        while True:
            rows = await database_sync_to_async(progress.wires_after)(self.run_id, self.last_sent, limit=BATCH)
            if not rows:
                return
            await self.send(text_data=progress.steps_frame([wire for _, wire in rows]))
            self.last_sent = rows[-1][0]
            if len(rows) < BATCH:
                return

    async def run_step(self, message: dict[str, Any]) -> None:
        if self.last_sent is None:
            return  # the client's first message will read this step from the database
        index = message["index"]
        if index <= self.last_sent:
            return
        if index > self.last_sent + 1:  # a gap (e.g. a full channel dropped messages): read it back
            if self.held:
                await self._catch_up()  # replaying held deliveries: this is that task already
            else:
                self.hold(self._catch_up)
            return
        self.last_sent = index
        frame = message.get("frame")
        if frame is None:  # the process's one copy of the message, handed to each of its sockets
            frame = message["frame"] = progress.steps_frame([message["wire"]])
        await self.send(text_data=frame)

    async def run_status(self, message: dict[str, Any]) -> None:
        if self.last_sent is not None:
            await self.send_json({"type": "status", "run": message["run"]})
