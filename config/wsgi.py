"""WSGI entry point: every HTTP request, served by gunicorn (config/gunicorn.py) as Django ships it."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# A web process: its database connections persist between requests (config.settings, WEB_CONN_MAX_AGE).
# Marked only while the settings load, so that no process this one starts inherits the mark.
os.environ["REFEREE_WEB_SERVER"] = "wsgi"
try:
    application = get_wsgi_application()
finally:
    del os.environ["REFEREE_WEB_SERVER"]

from config.gc_tuning import tune  # noqa: E402

tune()
