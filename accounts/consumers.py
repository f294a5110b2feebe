"""Websocket consumers of the accounts app, and the guard every websocket of the project uses.

AccessGuard closes a socket with 4403 as soon as its user loses access to what it streams, with
no database query per relayed message. Access shrinks through a few known changes (a share
revoked, a role removed, an account deactivated, a password changed, a logout); each sends
"access.changed" to the groups of the affected object and user (accounts.progress), and every
socket in them checks its permission once, in the database, and closes if it is gone. A timer
re-checks every WS_ACCESS_RECHECK_SECONDS as a backstop for changes made behind the app's back
(raw SQL, a queryset .update(), a lost group message while Redis restarted).

The object's group (a run's, a research run's, the user's notifications) is read once per process
(accounts.fanout) and each socket gets its messages through `fanout_deliver`. Deliveries are held
- queued in order - until the consumer calls `fanout_open()` (after accept and what it sends first),
and while a held job runs (`hold(job)`: a catch-up read, say): a relay never overtakes what the
consumer is still sending, and a socket that waits on the database never holds up the others.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from importlib import import_module
from typing import Any

from channels.consumer import get_handler_name
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings
from django.contrib.auth import HASH_SESSION_KEY, SESSION_KEY, get_user_model
from django.utils.crypto import constant_time_compare

from accounts.fanout import FANOUT_BROKEN, local_fanout
from accounts.progress import access_group, user_group

log = logging.getLogger(__name__)
ACCESS_LOST = 4403
BACKLOG_MAX = 1000  # held deliveries per socket; beyond, dropped as a full channel drops them


class AccessGuard(AsyncJsonWebsocketConsumer):
    """Base of guarded consumers. Subclasses implement `allowed(user)` (sync, may query) and call
    `guard_start(user, *groups)` in connect, before they read anything for the client."""

    guard_user_id: int | None = None
    access_lost = False
    # Message types that only relay what they carry (a step, a status, a notification). Channels runs
    # aclose_old_connections - a hop to a worker thread - before every handler; a relay touches no
    # database (what it may read goes through database_sync_to_async, which closes stale connections
    # itself), so it skips that hop: at 500 viewers it was a fifth of a daphne's CPU (issue 20).
    relay_types: frozenset[str] = frozenset()

    _opened = False
    _holder: asyncio.Task | None = None

    def allowed(self, user: Any) -> bool:
        raise NotImplementedError

    # -- deliveries from the process's fan-out (accounts.fanout) -----------------------------------
    @property
    def held(self) -> bool:
        """Deliveries wait in the backlog: not opened yet, or a held job or the replay is running."""
        return not self._opened or self._holder is not None

    async def fanout_deliver(self, message: dict[str, Any]) -> None:
        if self.access_lost:
            return
        if self.held:
            if len(self._backlog) < BACKLOG_MAX:
                self._backlog.append(message)
            else:
                log.warning("socket backlog full: %s dropped", message.get("type"))
            return
        await self._deliver(message)

    async def _deliver(self, message: dict[str, Any]) -> None:
        if message["type"] in self.relay_types:
            await getattr(self, get_handler_name(message))(message)  # sends only: runs inline
        else:
            self.spawn(self.dispatch(message))  # e.g. access.changed: it reads the database

    async def fanout_broken(self) -> None:
        await self.close(code=FANOUT_BROKEN)

    def fanout_open(self) -> None:
        """Start relaying: what arrived since guard_start is sent first, in order."""
        self._opened = True
        self.hold(None)

    def hold(self, job: Callable[[], Awaitable[None]] | None) -> None:
        """Run `job` in a task of this socket with deliveries held, then replay them in order.

        Jobs run one at a time, in the order given; a relay handler called during the replay
        (`self.held` is true) may read the database inline, being in that task already."""
        if job is not None:
            self._jobs.append(job)
        if self._holder is None and self._opened and (self._jobs or self._backlog):
            self._holder = self.spawn(self._replay())

    async def _replay(self) -> None:
        try:
            while self._jobs or self._backlog:
                if self._jobs:
                    await self._jobs.popleft()()
                elif not self.access_lost:
                    await self._deliver(self._backlog.popleft())
                else:
                    self._backlog.clear()
        except Exception:
            log.warning("websocket catch-up failed; closing so that the page reconnects", exc_info=True)
            self._jobs.clear()
            self._backlog.clear()
            await self.close(code=FANOUT_BROKEN)
        finally:
            self._holder = None

    def spawn(self, work: Awaitable[None]) -> asyncio.Task:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("websocket task failed", exc_info=task.exception())

    async def dispatch(self, message: dict[str, Any]) -> None:
        if message["type"] in self.relay_types:
            handler = getattr(self, get_handler_name(message), None)
            if handler is not None:
                await handler(message)
                return
        await super().dispatch(message)

    async def guard_start(self, user: Any, *groups: str) -> bool:
        """Join the user's and the object's groups, then check: a change that commits after the
        check is announced to a socket already listening, so no revocation falls in between."""
        self.guard_user_id = user.pk
        self._backlog: deque[dict[str, Any]] = deque()
        self._jobs: deque[Callable[[], Awaitable[None]]] = deque()
        self._tasks: set[asyncio.Task] = set()
        self.guard_groups = [access_group(user.pk)]  # this socket's own channel: its user's changes
        await self.channel_layer.group_add(access_group(user.pk), self.channel_name)
        self._fanout = local_fanout(self.channel_layer)
        self.fanout_groups = list(groups)  # read once per process, delivered to fanout_deliver
        for group in self.fanout_groups:
            await self._fanout.join(group, self)
        if not await database_sync_to_async(self._still_allowed)():
            await self._leave()
            return False
        self._guard_timer = asyncio.create_task(self._recheck_forever())
        return True

    async def _recheck_forever(self) -> None:
        while True:
            await asyncio.sleep(float(settings.WS_ACCESS_RECHECK_SECONDS))
            try:
                await self._recheck()
            except Exception:  # a database hiccup must not end the backstop; the next round retries
                log.warning("websocket access re-check failed", exc_info=True)

    async def access_changed(self, message: dict[str, Any]) -> None:
        await self._recheck()

    async def _recheck(self) -> None:
        if self.access_lost or await database_sync_to_async(self._still_allowed)():
            return
        self.access_lost = True  # from here on nothing more is sent
        await self._leave()
        await self.close(code=ACCESS_LOST)

    def _still_allowed(self) -> bool:
        user = get_user_model().objects.filter(pk=self.guard_user_id, is_active=True).first()
        return user is not None and self._session_valid(user) and self.allowed(user)

    def _session_valid(self, user: Any) -> bool:
        """The session the socket was opened with still exists and still belongs to this user with
        this password (what django.contrib.auth.get_user checks on every HTTP request)."""
        session = self.scope.get("session")
        key = getattr(session, "session_key", None)
        if session is None or key is None:
            return True  # opened without a session (tests building the scope by hand)
        data = import_module(settings.SESSION_ENGINE).SessionStore(session_key=key).load()  # {} once gone
        if str(data.get(SESSION_KEY)) != str(user.pk):
            return False  # logged out, flushed or expired
        return constant_time_compare(data.get(HASH_SESSION_KEY, ""), user.get_session_auth_hash())

    async def _leave(self) -> None:
        current = asyncio.current_task()
        timer = getattr(self, "_guard_timer", None)
        if timer is not None and timer is not current:
            timer.cancel()
        for task in list(getattr(self, "_tasks", ())):
            if task is not current:
                task.cancel()
        for group in getattr(self, "fanout_groups", ()):
            await self._fanout.leave(group, self)
        self.fanout_groups = []
        for group in getattr(self, "guard_groups", ()):
            await self.channel_layer.group_discard(group, self.channel_name)
        self.guard_groups = []

    async def send(self, text_data: Any = None, bytes_data: Any = None, close: bool = False) -> None:
        if self.access_lost and not close:
            return  # a message dispatched before the groups were left: dropped
        await super().send(text_data=text_data, bytes_data=bytes_data, close=close)

    async def disconnect(self, code: int) -> None:
        await self._leave()


class UserEventsConsumer(AccessGuard):
    """Relays a signed-in user's own notifications; anonymous connections are refused."""

    relay_types = frozenset({"user.event"})

    def allowed(self, user: Any) -> bool:
        return True  # any active account with a valid session: its own notifications

    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=4401)
            return
        if not await self.guard_start(user, user_group(user.pk)):
            await self.close(code=ACCESS_LOST)
            return
        await self.accept()
        self.fanout_open()

    async def user_event(self, message: dict) -> None:
        await self.send_json(message["event"])
