"""ASGI entry point: the websockets, served by daphne, as the Channels docs lay it out.

HTTP goes to gunicorn (config/wsgi.py, config/gunicorn.py); nginx in deploy/ routes `/ws/` here,
and under `make up` this server has a port of its own (WEBSOCKET_PORT), which the pages connect to.
A websocket is authenticated by the session cookie of the page (cookies do not depend on the port)
and refused unless its Origin is one of ALLOWED_HOSTS (AllowedHostsOriginValidator).
"""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# A web process: on PostgreSQL its consumers share a connection pool (config.settings,
# DATABASE_POOL_SIZE), as Django's docs advise under ASGI. Marked only while the settings load.
os.environ["REFEREE_WEB_SERVER"] = "asgi"
try:
    get_asgi_application()  # sets Django up before the consumers import models
finally:
    del os.environ["REFEREE_WEB_SERVER"]

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from config.routing import websocket_urlpatterns  # noqa: E402

application = ProtocolTypeRouter(
    {"websocket": AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns)))}
)

from config.gc_tuning import tune  # noqa: E402

tune()
