from django.urls import path

from benchmark.consumers import RunStreamConsumer

websocket_urlpatterns = [path("ws/runs/<uuid:code>/", RunStreamConsumer.as_asgi())]
