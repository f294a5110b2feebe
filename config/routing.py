"""Websocket routes of every app, gathered in one list; the session middleware they go through."""

from importlib import import_module
from typing import Any

from channels.middleware import BaseMiddleware
from django.conf import settings


class ReadOnlySessionMiddleware(BaseMiddleware):
    """scope["session"]: the session the cookie names, for AuthMiddleware and AccessGuard to read.

    channels' SessionMiddleware also wraps every message the app sends, to save a modified session
    on an HTTP response; a websocket never saves one, yet each relayed step paid for the check (a
    tenth of relaying it to one socket, issue 20). Websockets read the session; they never write it.
    """

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        if "cookies" not in scope:
            raise ValueError("ReadOnlySessionMiddleware needs CookieMiddleware above it")
        store = import_module(settings.SESSION_ENGINE).SessionStore
        scope = dict(scope, session=store(session_key=scope["cookies"].get(settings.SESSION_COOKIE_NAME)))
        return await self.inner(scope, receive, send)


websocket_urlpatterns = []
for _app in ("accounts", "benchmark", "judge", "review"):
    try:
        _module = import_module(f"{_app}.routing")
    except ModuleNotFoundError as exc:
        if exc.name != f"{_app}.routing":
            raise
        continue
    websocket_urlpatterns += _module.websocket_urlpatterns
