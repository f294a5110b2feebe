"""Websocket routes of the benchmark app (config/routing.py gathers every app's list)."""

from django.urls import path

from benchmark.consumers import RunStreamConsumer
from benchmark.research_routing import websocket_urlpatterns as research_websockets

websocket_urlpatterns = [path("ws/runs/<uuid:code>/", RunStreamConsumer.as_asgi()), *research_websockets]
