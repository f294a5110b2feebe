from django.urls import path

from accounts.consumers import UserEventsConsumer

websocket_urlpatterns = [path("ws/me/", UserEventsConsumer.as_asgi())]
