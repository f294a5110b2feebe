"""Django's stock ASGI handler for HTTP, for bench/web_servers.py: the one-ASGI-server alternative
(daphne serving the pages too) measured beside gunicorn."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_asgi_application()
