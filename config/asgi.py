"""ASGI entry point: HTTP through Django, websockets through each app's routing."""

import os

import django
from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIHandler


class OneHopASGIHandler(ASGIHandler):
    """Django's ASGI handler, running each request's middleware and view in one thread hop.

    Under the stock handler the sync middleware (all of ours and Django's) runs in async mode:
    each `process_request` and `process_response` is a hop of its own from the event loop to the
    request's thread and back, 15 for a page (tests/config/test_asgi_handler.py), each waiting for
    the event loop, which every other request and socket of the process shares (issue 16: the item
    page's p95 at 100 reviewers went from 188 to 129-137 ms). Here the chain is built as under WSGI and called once, in the request's own thread
    (the one the stock handler runs a sync view in), so a request crosses to a thread three times:
    this, and Django's request_started and close around it."""

    def load_middleware(self, is_async: bool = False) -> None:
        super().load_middleware(is_async=False)

    async def get_response_async(self, request):  # type: ignore[no-untyped-def]
        return await sync_to_async(self.get_response, thread_sensitive=True)(request)


os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# A web process: on PostgreSQL its requests share a connection pool (config.settings, DATABASE_POOL_SIZE).
# Marked only while the settings load, so that no process this one starts inherits the mark.
os.environ["REFEREE_WEB_PROCESS"] = "1"
try:
    django.setup(set_prefix=False)  # as django.core.asgi.get_asgi_application()
finally:
    del os.environ["REFEREE_WEB_PROCESS"]
django_asgi_app = OneHopASGIHandler()

from channels.auth import AuthMiddleware  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402
from channels.sessions import CookieMiddleware  # noqa: E402

from config.routing import ReadOnlySessionMiddleware, websocket_urlpatterns  # noqa: E402

# channels' AuthMiddlewareStack, with the session read-only (config.routing.ReadOnlySessionMiddleware).
application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": AllowedHostsOriginValidator(
            CookieMiddleware(ReadOnlySessionMiddleware(AuthMiddleware(URLRouter(websocket_urlpatterns))))
        ),
    }
)


def _plain_autobahn_logs() -> None:
    """autobahn formats the arguments of a debug log line on every frame it sends, even with debug
    off, and colours them with click when click is importable (rq brings it): a sixth of relaying a
    step to one socket at 50 viewers (issue 20, cProfile in a daphne). Plain text costs little."""
    import autobahn.util

    if hasattr(autobahn.util, "_HAS_CLICK"):
        autobahn.util._HAS_CLICK = False


_plain_autobahn_logs()

from config.gc_tuning import tune  # noqa: E402

tune()
