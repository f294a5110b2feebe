"""config.asgi holds only the websocket application (HTTP is gunicorn's, config.wsgi). Under `make
up` the page (port 8000) and the socket (daphne's port) differ in port only: the page's session
cookie signs the socket in, and the Origin check still refuses another site's page."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from channels.testing import HttpCommunicator, WebsocketCommunicator
from django.conf import settings
from django.test import Client

from config.asgi import application

pytestmark = pytest.mark.django_db(transaction=True)


async def _socket(origin: bytes, cookie: str) -> bool:
    headers = [(b"origin", origin), (b"host", b"127.0.0.1:8001"), (b"cookie", cookie.encode())]
    communicator = WebsocketCommunicator(application, "/ws/me/", headers=headers)
    connected, _ = await communicator.connect()
    await communicator.disconnect()
    return connected


async def test_the_pages_origin_on_another_port_signs_in_and_another_site_does_not(researcher) -> None:
    client = Client()
    await sync_to_async(client.force_login)(researcher)
    cookie = f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"
    assert await _socket(b"http://127.0.0.1:8000", cookie) is True
    assert await _socket(b"http://evil.example", cookie) is False  # cross-site websocket hijacking
    assert await _socket(b"http://127.0.0.1:8000", "") is False  # no session: refused by the consumer


async def test_it_serves_no_http() -> None:
    with pytest.raises(ValueError, match="No application configured for scope type 'http'"):
        await HttpCommunicator(application, "GET", "/healthz").get_response(timeout=5)
