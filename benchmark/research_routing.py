from django.urls import path

from benchmark.research_consumers import ResearchStreamConsumer

websocket_urlpatterns = [path("ws/research/<uuid:code>/", ResearchStreamConsumer.as_asgi())]
