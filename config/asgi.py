"""ASGI entry point: HTTP through Django, websockets through each app's routing."""

import asyncio
import os
from concurrent.futures import ThreadPoolExecutor

import django
from asgiref.sync import sync_to_async
from django.core import signals
from django.core.exceptions import RequestAborted
from django.core.handlers.asgi import ASGIHandler, get_script_prefix
from django.http import FileResponse
from django.urls import set_script_prefix


class _Workers:
    """The threads that run requests' sync code: one per request in flight, as under Django's own
    handler, but kept between requests instead of started and joined for each (on a 2-core VM a
    thread's start and join cost 0.9 ms of CPU, a fifth of a request's ASGI overhead). Used from
    the event loop's thread only."""

    def __init__(self, keep: int) -> None:
        self._idle: list[ThreadPoolExecutor] = []
        self._keep = keep

    def acquire(self) -> ThreadPoolExecutor:
        if self._idle:
            return self._idle.pop()  # the most recently used: its stack and connection are warm
        return ThreadPoolExecutor(max_workers=1, thread_name_prefix="referee-request")

    def release(self, worker: ThreadPoolExecutor) -> None:
        if len(self._idle) < self._keep:
            self._idle.append(worker)
        else:
            worker.shutdown(wait=False)


class OneHopASGIHandler(ASGIHandler):
    """Django's ASGI handler, running each request's sync code in one thread hop.

    Under the stock handler the sync middleware (all of ours and Django's) runs in async mode:
    each `process_request` and `process_response` is a hop of its own from the event loop to the
    request's thread and back, 15 for a page (tests/config/test_asgi_handler.py), each waiting for
    the event loop, which every other request and socket of the process shares; and every request
    starts a thread of its own and joins it. Here the request_started signal, the middleware chain
    (built as under WSGI), the view and the response's close (request_finished, which gives the
    database connection back) run in one call, in a thread kept for the request while it is in
    flight (`_Workers`); only a streaming response crosses again, for its chunks and its close, in
    the same thread (its iterator may read the database through that thread's connection)."""

    workers = _Workers(keep=64)

    def load_middleware(self, is_async: bool = False) -> None:
        super().load_middleware(is_async=False)

    async def __call__(self, scope, receive, send):  # type: ignore[no-untyped-def]
        if scope["type"] != "http":
            raise ValueError(f"Django can only handle ASGI/HTTP connections, not {scope['type']}.")
        worker = self.workers.acquire()
        try:
            await self._handle(worker, scope, receive, send)
        finally:
            self.workers.release(worker)

    async def _handle(self, worker: ThreadPoolExecutor, scope, receive, send) -> None:  # type: ignore[no-untyped-def]
        def in_worker(fn, *args):  # type: ignore[no-untyped-def]
            return sync_to_async(fn, thread_sensitive=False, executor=worker)(*args)

        try:
            body_file = await self.read_body(receive)
        except RequestAborted:
            return
        try:
            set_script_prefix(get_script_prefix(scope))
            response = await in_worker(self._respond, scope, body_file)
            if not response.streaming:
                await self.send_response(response, send)  # closed already, its content kept
                return
            try:
                await self._stream(response, receive, send, in_worker)
            finally:
                await in_worker(response.close)
        finally:
            body_file.close()

    def _respond(self, scope, body_file):  # type: ignore[no-untyped-def]
        signals.request_started.send(sender=self.__class__, scope=scope)
        request, response = self.create_request(scope, body_file)
        if request is not None:
            response = self.get_response(request)
            response._handler_class = self.__class__
            if isinstance(response, FileResponse):
                response.block_size = self.chunk_size
        if not response.streaming:
            response.close()  # request_finished: the connection goes back before the bytes go out
        return response

    async def _stream(self, response, receive, send, in_worker) -> None:  # type: ignore[no-untyped-def]
        """Headers, then the chunks as the iterator yields them, stopping when the client leaves.
        (Django's handler reads a sync iterator to its end into a list before sending a byte.)"""
        await send({"type": "http.response.start", "status": response.status_code, "headers": _headers(response)})
        gone = asyncio.ensure_future(receive())  # the next message after the body can only be a disconnect
        try:
            if response.is_async:
                async for part in response.streaming_content:
                    if gone.done():
                        return
                    await send({"type": "http.response.body", "body": part, "more_body": True})
            else:
                parts = iter(response.streaming_content)
                while not gone.done():
                    batch = await in_worker(_next_parts, parts)
                    if not batch:
                        break
                    for part in batch:
                        await send({"type": "http.response.body", "body": part, "more_body": True})
            await send({"type": "http.response.body"})
        finally:
            gone.cancel()


def _next_parts(parts, size: int = 64 * 1024) -> list[bytes]:  # type: ignore[no-untyped-def]
    """The iterator's next parts, about `size` bytes of them ([] at its end)."""
    batch, total = [], 0
    for part in parts:
        batch.append(part)
        total += len(part)
        if total >= size:
            break
    return batch


def _headers(response) -> list[tuple[bytes, bytes]]:  # type: ignore[no-untyped-def]
    headers = [
        (
            header.encode("ascii") if isinstance(header, str) else bytes(header),
            value.encode("latin1") if isinstance(value, str) else bytes(value),
        )
        for header, value in response.items()
    ]
    headers += [(b"Set-Cookie", c.output(header="").encode("ascii").strip()) for c in response.cookies.values()]
    return headers


os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# A web process: on PostgreSQL its requests share a connection pool (config.settings, DATABASE_POOL_SIZE).
# Marked only while the settings load, so that no process this one starts inherits the mark.
os.environ["REFEREE_WEB_PROCESS"] = "1"
try:
    django.setup(set_prefix=False)  # as django.core.asgi.get_asgi_application()
finally:
    del os.environ["REFEREE_WEB_PROCESS"]
django_asgi_app = OneHopASGIHandler()

from channels.auth import AuthMiddleware  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402
from channels.sessions import CookieMiddleware  # noqa: E402

from config.routing import ReadOnlySessionMiddleware, websocket_urlpatterns  # noqa: E402

# channels' AuthMiddlewareStack, with the session read-only (config.routing.ReadOnlySessionMiddleware).
application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": AllowedHostsOriginValidator(
            CookieMiddleware(ReadOnlySessionMiddleware(AuthMiddleware(URLRouter(websocket_urlpatterns))))
        ),
    }
)


def _plain_autobahn_logs() -> None:
    """autobahn formats the arguments of a debug log line on every frame it sends, even with debug
    off, and colours them with click when click is importable (rq brings it): a sixth of relaying a
    step to one socket at 50 viewers (issue 20, cProfile in a daphne). Plain text costs little."""
    import autobahn.util

    if hasattr(autobahn.util, "_HAS_CLICK"):
        autobahn.util._HAS_CLICK = False


_plain_autobahn_logs()

from config.gc_tuning import tune  # noqa: E402

tune()
