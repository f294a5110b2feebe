"""config.asgi's HTTP handler: Django's middleware chain and view in one thread hop (issue 16)."""

from __future__ import annotations

import asyncio

import pytest
from asgiref import sync
from channels.testing import HttpCommunicator
from django.core.handlers.asgi import ASGIHandler
from django.urls import reverse

from config.asgi import OneHopASGIHandler, django_asgi_app


@pytest.fixture
def hops(monkeypatch):
    """How many times a request crossed from the event loop to a thread."""
    count = [0]
    original = sync.SyncToAsync.__call__

    async def counted(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        count[0] += 1
        return await original(self, *args, **kwargs)

    monkeypatch.setattr(sync.SyncToAsync, "__call__", counted)
    return count


def _get(app, path: str, cookie: str = "") -> dict:  # type: ignore[no-untyped-def]
    headers = [(b"host", b"testserver")] + ([(b"cookie", cookie.encode())] if cookie else [])
    communicator = HttpCommunicator(app, "GET", path, headers=headers)
    return asyncio.run(communicator.get_response(timeout=30))


def _headers(response: dict) -> dict[bytes, bytes]:
    return {name.lower(): value for name, value in response["headers"]}


@pytest.mark.django_db(transaction=True)
def test_a_request_crosses_to_its_thread_a_few_times_not_once_per_middleware(hops, reviewer, client):
    client.force_login(reviewer)
    cookie = f"sessionid={client.cookies['sessionid'].value}"
    assert isinstance(django_asgi_app, OneHopASGIHandler)
    response = _get(django_asgi_app, reverse("review:queue"), cookie)
    assert response["status"] == 200
    assert b"<h1>My reviews</h1>" in response["body"]
    one_hop = hops[0]
    hops[0] = 0
    assert _get(ASGIHandler(), reverse("review:queue"), cookie)["status"] == 200  # Django's own
    stock = hops[0]
    assert one_hop <= 3 < stock, (one_hop, stock)


@pytest.mark.django_db(transaction=True)
def test_errors_and_redirects_come_through_as_under_the_stock_handler(reviewer, client):
    assert _get(django_asgi_app, "/no-such-page/")["status"] == 404
    anonymous = _get(django_asgi_app, reverse("review:queue"))
    assert anonymous["status"] == 302
    assert _headers(anonymous)[b"location"].startswith(reverse("accounts:login").encode())
    client.force_login(reviewer)
    cookie = f"sessionid={client.cookies['sessionid'].value}"
    forbidden = _get(django_asgi_app, reverse("benchmark:run_list"), cookie)  # a reviewer may not see runs
    assert forbidden["status"] == 403
    assert _headers(forbidden)[b"x-frame-options"] == b"DENY"  # the outermost middleware still ran
