"""config.asgi's HTTP handler: a request's sync code in one thread hop, in a thread kept between requests (issue 16)."""

from __future__ import annotations

import asyncio
import threading

import pytest
from asgiref import sync
from asgiref.testing import ApplicationCommunicator
from channels.testing import HttpCommunicator
from django.contrib.auth import get_user_model
from django.core import signals
from django.core.handlers.asgi import ASGIHandler
from django.urls import reverse

from config.asgi import OneHopASGIHandler, django_asgi_app
from tests.config import asgi_urls


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
def test_a_request_crosses_to_a_thread_once_not_once_per_middleware(hops, reviewer, client):
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
    assert one_hop == 1 < stock, (one_hop, stock)


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


# -- the request's thread: kept between requests, one per request in flight -----------------------


def _scope(path: str) -> dict:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"testserver")],
        "client": ("127.0.0.1", 5000),
        "server": ("testserver", 80),
    }


async def _body_of(communicator: ApplicationCommunicator) -> tuple[dict, bytes]:
    start = await communicator.receive_output(20)
    body = b""
    while True:
        message = await communicator.receive_output(20)
        body += message.get("body", b"")
        if not message.get("more_body"):
            return start, body


async def _fetch(path: str) -> tuple[dict, bytes]:
    communicator = ApplicationCommunicator(django_asgi_app, _scope(path))
    await communicator.send_input({"type": "http.request", "body": b""})
    try:
        return await _body_of(communicator)
    finally:
        await communicator.wait(20)


@pytest.fixture
def test_views(settings):
    settings.ROOT_URLCONF = "tests.config.asgi_urls"
    asgi_urls.seen.clear()
    asgi_urls.release.clear()
    yield asgi_urls.seen
    asgi_urls.release.set()


@pytest.mark.django_db(transaction=True)
def test_sequential_requests_reuse_one_thread_and_concurrent_ones_get_their_own(test_views):
    async def scenario() -> tuple[list[list[int]], int, int]:
        sequential = [[int(v) for v in (await _fetch("/where"))[1].split()] for _ in range(20)]
        held = asyncio.ensure_future(_fetch("/held"))
        while not test_views.get("held"):
            await asyncio.sleep(0.01)
        alongside = int((await _fetch("/where"))[1].split()[0])  # answered while /held is in flight
        asgi_urls.release.set()
        return sequential, alongside, int((await held)[1])

    threads_before = threading.active_count()
    sequential, alongside, held = asyncio.run(scenario())
    assert len({ident for ident, _ in sequential}) == 1
    served = [count for _, count in sequential]
    assert served == list(range(served[0], served[0] + 20))  # one thread served all twenty in turn
    assert alongside != held  # the request in flight kept its own thread
    assert threading.active_count() <= threads_before + 2


@pytest.mark.django_db(transaction=True)
def test_a_request_is_finished_before_its_bytes_go_out(test_views):
    """request_finished (which gives the database connection back) runs in the request's thread
    before the response is sent, not after the client has it."""
    order: list[tuple] = []

    def finished(**kwargs):  # type: ignore[no-untyped-def]
        order.append(("finished", threading.get_ident()))

    async def scenario() -> None:
        messages = [{"type": "http.request", "body": b""}]

        async def receive():  # type: ignore[no-untyped-def]
            if messages:
                return messages.pop()
            await asyncio.Event().wait()  # no disconnect: the client stays

        async def send(message):  # type: ignore[no-untyped-def]
            order.append((message["type"], message.get("status"), message.get("body")))

        await django_asgi_app(_scope("/where"), receive, send)

    signals.request_finished.connect(finished)
    try:
        asyncio.run(scenario())
    finally:
        signals.request_finished.disconnect(finished)
    ident = int(order[-1][2].split()[0])  # the view's thread, from the body
    assert [entry[:2] for entry in order] == [
        ("finished", ident),
        ("http.response.start", 200),
        ("http.response.body", None),
    ]


@pytest.mark.django_db(transaction=True)
def test_a_streamed_response_is_read_and_closed_in_the_views_thread(test_views, reviewer):
    finished: list[int] = []

    def on_finished(**kwargs):  # type: ignore[no-untyped-def]
        finished.append(threading.get_ident())

    signals.request_finished.connect(on_finished)
    try:
        start, body = asyncio.run(_fetch("/streamed"))
    finally:
        signals.request_finished.disconnect(on_finished)
    users = get_user_model().objects.count()
    assert start["status"] == 200
    assert body == f"0:{users}\n1:{users}\n2:{users}\n".encode()
    assert test_views["parts"] == [test_views["view"]] * 3
    assert finished == [test_views["view"]]  # closed once, after the last part, in the same thread


@pytest.mark.django_db(transaction=True)
def test_a_client_that_leaves_mid_stream_stops_the_stream(test_views):
    async def scenario() -> None:
        communicator = ApplicationCommunicator(django_asgi_app, _scope("/endless"))
        await communicator.send_input({"type": "http.request", "body": b""})
        start = await communicator.receive_output(20)
        assert start["status"] == 200
        assert (await communicator.receive_output(20))["body"]
        await communicator.send_input({"type": "http.disconnect"})
        await communicator.wait(20)  # the app returns: it does not stream to the end

    asyncio.run(scenario())
    assert "closed" in test_views  # the generator was closed (its finally ran)
    assert test_views["yielded"] < 100


@pytest.mark.django_db(transaction=True)
def test_async_to_sync_in_a_view_runs_on_the_servers_event_loop(test_views):
    async def scenario() -> tuple[int, bytes]:
        return id(asyncio.get_running_loop()), (await _fetch("/loop"))[1]

    loop, body = asyncio.run(scenario())
    assert int(body) == loop
