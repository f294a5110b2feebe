"""ASGI entry point: HTTP through Django, websockets through each app's routing."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django_asgi_app = get_asgi_application()

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
