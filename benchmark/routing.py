"""Websocket routes of the benchmark app (config/routing.py gathers every app's list)."""

from benchmark.research_routing import websocket_urlpatterns as research_websockets

websocket_urlpatterns = [*research_websockets]
