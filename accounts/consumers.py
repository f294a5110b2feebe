"""Websocket consumers of the accounts app, and the guard every websocket of the project uses.

AccessGuard closes a socket with 4403 as soon as its user loses access to what it streams, with
no database query per relayed message. Access shrinks through a few known changes (a share
revoked, a role removed, an account deactivated, a password changed, a logout); each sends
"access.changed" to the groups of the affected object and user (accounts.progress), and every
socket in them checks its permission once, in the database, and closes if it is gone. A timer
re-checks every WS_ACCESS_RECHECK_SECONDS as a backstop for changes made behind the app's back
(raw SQL, a queryset .update(), a lost group message while Redis restarted).
"""

from __future__ import annotations

import asyncio
import logging
from importlib import import_module
from typing import Any

from channels.consumer import get_handler_name
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings
from django.contrib.auth import HASH_SESSION_KEY, SESSION_KEY, get_user_model
from django.utils.crypto import constant_time_compare

from accounts.progress import access_group, user_group

log = logging.getLogger(__name__)
ACCESS_LOST = 4403


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

    def allowed(self, user: Any) -> bool:
        raise NotImplementedError

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
        self.guard_groups = [access_group(user.pk), *groups]
        for group in self.guard_groups:
            await self.channel_layer.group_add(group, self.channel_name)
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
        timer = getattr(self, "_guard_timer", None)
        if timer is not None and timer is not asyncio.current_task():
            timer.cancel()
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

    async def user_event(self, message: dict) -> None:
        await self.send_json(message["event"])
