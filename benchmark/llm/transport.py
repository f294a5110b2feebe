"""Where HTTP to the providers goes.

The Anthropic and OpenAI SDKs send their requests through httpx2. In production each
client uses the SDK's own transport; tests (and offline demos) install a handler with
`override_transport`, so that the real SDK code builds the request and parses the reply
and only the HTTP exchange is replaced.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import httpx2

Handler = Callable[[httpx2.Request], httpx2.Response]

_lock = threading.Lock()
_handler: Handler | None = None


def http_client(timeout: float) -> httpx2.Client | None:
    """The client to give an SDK, or None for the SDK's default."""
    handler = _handler
    if handler is None:
        return None
    return httpx2.Client(transport=httpx2.MockTransport(handler), timeout=timeout)


@contextmanager
def override_transport(handler: Handler) -> Iterator[None]:
    global _handler
    with _lock:
        previous, _handler = _handler, handler
    try:
        yield
    finally:
        with _lock:
            _handler = previous


Response = httpx2.Response
Request = httpx2.Request
