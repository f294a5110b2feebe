"""Websocket routes of every app, gathered in one list (config/asgi.py serves them)."""

from importlib import import_module

websocket_urlpatterns = []
for _app in ("accounts", "benchmark", "judge", "review"):
    try:
        _module = import_module(f"{_app}.routing")
    except ModuleNotFoundError as exc:
        if exc.name != f"{_app}.routing":
            raise
        continue
    websocket_urlpatterns += _module.websocket_urlpatterns
