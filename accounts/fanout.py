"""Local fan-out: a group's messages come into a web process once and reach its sockets from there.

With every socket a member of its run's group, channels_redis hands each message to every local
socket's own `receive`: per socket and message a wake-up, two tasks and a lock race, then the
consumer's dispatch. At 50 viewers of one run that was most of a daphne's work per step (issue 20,
bench/stream_latency.py). Here each process joins a group with one channel of its own while any
of its sockets watches the group, reads it in one task, and calls each socket's
`fanout_deliver(message)` in turn.

The contract with the consumers (accounts.consumers.AccessGuard implements it):
- `fanout_deliver` must not wait on anything but its own socket's send: it runs inline, and one
  socket waiting on the database would hold back every other. Work that reads (a catch-up, an
  access re-check) goes to a task of that socket.
- When the group's messages cannot be read (Redis gone), every socket of the group is closed with
  1011, so its page reconnects and reads what it missed from the database, as after a restart.

One LocalFanout per channel layer and event loop (tests run one loop each; daphne one).
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from dataclasses import dataclass, field
from typing import Any, Protocol

log = logging.getLogger(__name__)

FANOUT_BROKEN = 1011  # "internal error": the page reconnects and catches up


class Member(Protocol):
    async def fanout_deliver(self, message: dict[str, Any]) -> None: ...

    async def fanout_broken(self) -> None: ...


@dataclass(eq=False)
class _Group:
    channel: str
    members: dict[int, Member] = field(default_factory=dict)  # id -> member, in joining order
    task: asyncio.Task | None = None


class LocalFanout:
    def __init__(self, layer: Any) -> None:
        self.layer = layer
        self.groups: dict[str, _Group] = {}

    async def join(self, group: str, member: Member) -> None:
        entry = self.groups.get(group)
        if entry is None:
            entry = self.groups[group] = _Group(channel=self.channel_of(group))
            entry.task = asyncio.create_task(self._pump(group, entry), name=f"fanout {group}")
        entry.members[id(member)] = member
        # Every join renews the process's membership (channels_redis forgets members after its
        # group_expiry); a message sent from here on reaches this member.
        await self.layer.group_add(group, entry.channel)

    async def leave(self, group: str, member: Member) -> None:
        entry = self.groups.get(group)
        if entry is None or entry.members.pop(id(member), None) is None:
            return
        if entry.members:
            return
        del self.groups[group]
        if entry.task is not None:
            entry.task.cancel()
        await self.layer.group_discard(group, entry.channel)
        # What came in for nobody (channels_redis buffers per channel) would greet the next socket.
        getattr(self.layer, "receive_buffer", {}).pop(entry.channel, None)
        if group in self.groups:  # a socket joined while this was being discarded: renew it
            await self.layer.group_add(group, entry.channel)

    def channel_of(self, group: str) -> str:
        """The process's channel for `group`, the same every time: after Redis comes back, a new
        socket's join renews this membership instead of leaving a dead one in the group whose
        messages would pile up unread in this process."""
        return f"specific.{self.layer.client_prefix}!{group}"

    def watching(self, group: str) -> int:
        entry = self.groups.get(group)
        return len(entry.members) if entry else 0

    async def _pump(self, group: str, entry: _Group) -> None:
        while True:
            try:
                message = await self.layer.receive(entry.channel)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # Redis unreachable: nothing more can be relayed to these sockets
                log.warning("live group %s unreadable (%s); closing its %d socket(s)", group, exc, len(entry.members))
                if self.groups.get(group) is entry:
                    del self.groups[group]
                for member in list(entry.members.values()):
                    try:
                        await member.fanout_broken()
                    except Exception:
                        log.warning("closing a socket of %s failed", group, exc_info=True)
                return
            for member in list(entry.members.values()):
                try:
                    await member.fanout_deliver(message)
                except Exception:  # one socket's failure is that socket's, not the group's
                    log.warning("relaying %s to a socket of %s failed", message.get("type"), group, exc_info=True)


_fanouts: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[int, LocalFanout]] = weakref.WeakKeyDictionary()


def local_fanout(layer: Any) -> LocalFanout:
    """This event loop's LocalFanout of `layer`."""
    per_loop = _fanouts.setdefault(asyncio.get_running_loop(), {})
    fanout = per_loop.get(id(layer))
    if fanout is None or fanout.layer is not layer:
        fanout = per_loop[id(layer)] = LocalFanout(layer)
    return fanout
