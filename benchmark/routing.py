"""Websocket routes of the benchmark app (config/routing.py gathers every app's list)."""

from django.urls import path

from benchmark.research.consumers import ResearchStreamConsumer
from benchmark.runs.consumers import RunStreamConsumer

websocket_urlpatterns = [
    path("ws/runs/<uuid:code>/", RunStreamConsumer.as_asgi()),
    path("ws/research/<uuid:code>/", ResearchStreamConsumer.as_asgi()),
]
