"""Where HTTP to the providers goes.

Every SDK client gets its httpx2 client from `http_client`: redirects are never followed (an
API that answers 3xx is an error, not a reason to carry its key elsewhere), and for endpoints a
researcher supplied (those with a `Guard`):

- the connection goes through `netguard.GuardedBackend`, which checks the resolved address at
  connect time and connects to that very address;
- no proxy from the environment is used (a proxy would reach the private network for us);
- only allow-listed headers leave, and the only credential among them is the endpoint's own key:
  whatever else an SDK picks up from the server's environment (ANTHROPIC_CUSTOM_HEADERS,
  OPENAI_ORG_ID, ...) is dropped.

Tests (and offline demos) install a handler with `override_transport`, so that the real SDK code
builds the request and parses the reply and only the HTTP exchange is replaced; the guard's
address check still runs in front of the handler.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import httpx2
from django.views.decorators.debug import sensitive_variables

from benchmark.llm import netguard
from benchmark.llm.base import Endpoint

Handler = Callable[[httpx2.Request], httpx2.Response]

_lock = threading.Lock()
_handler: Handler | None = None

_SAFE_HEADERS = frozenset(
    {
        "host",
        "accept",
        "accept-encoding",
        "connection",
        "content-length",
        "content-type",
        "user-agent",
        "anthropic-version",
        "anthropic-beta",
        "idempotency-key",
    }
)
_CREDENTIAL_HEADERS = frozenset({"authorization", "x-api-key", "api-key"})


@sensitive_variables("key", "own")
def _strip_foreign_headers(endpoint: Endpoint) -> Callable[[httpx2.Request], None]:
    key = endpoint.api_key.reveal()
    own = {key, f"Bearer {key}"} if key else set()

    @sensitive_variables("own")
    def hook(request: httpx2.Request) -> None:
        for name in list(request.headers.keys()):
            lowered = name.lower()
            if lowered in _CREDENTIAL_HEADERS:
                if request.headers[name] not in own:
                    del request.headers[name]
            elif lowered not in _SAFE_HEADERS and not lowered.startswith("x-stainless-"):
                del request.headers[name]

    return hook


def _guarded_handler(handler: Handler, allowed: list[netguard.Network]) -> Handler:
    def guarded(request: httpx2.Request) -> httpx2.Response:
        host = request.url.host
        port = request.url.port or (443 if request.url.scheme == "https" else 80)
        try:
            netguard.checked_addresses(host, port, allowed)
        except netguard.BlockedAddress as exc:
            raise httpx2.ConnectError(f"refused to connect: {exc}", request=request) from None
        return handler(request)

    return guarded


class GuardedTransport(httpx2.HTTPTransport):
    """httpx2's own transport with the guarded network backend under its connection pool."""

    def __init__(self, allowed: list[netguard.Network]) -> None:
        super().__init__(trust_env=False, retries=0)
        pool = self._pool
        if not hasattr(pool, "_network_backend"):  # httpx2 changed: fail closed rather than connect unchecked
            raise RuntimeError("httpx2's connection pool has no network backend to guard")
        pool._network_backend = netguard.GuardedBackend(allowed)


def http_client(timeout: float, *, endpoint: Endpoint | None = None) -> httpx2.Client:
    """The httpx2 client to give an SDK (or to use directly) for one call to `endpoint`."""
    guard = endpoint.guard if endpoint is not None else None
    allowed = netguard.parse_networks(guard.allowed) if guard is not None else []
    hooks = {"request": [_strip_foreign_headers(endpoint)]} if guard is not None and endpoint else {}
    handler = _handler
    transport: httpx2.BaseTransport | None = None
    if handler is not None:
        transport = httpx2.MockTransport(_guarded_handler(handler, allowed) if guard is not None else handler)
    elif guard is not None:
        transport = GuardedTransport(allowed)
    # An admin's endpoint keeps httpx2's default transport, and with it the proxy the server's
    # environment names (HTTPS_PROXY); a guarded one never uses a proxy.
    return httpx2.Client(
        transport=transport, timeout=timeout, follow_redirects=False, trust_env=guard is None, event_hooks=hooks
    )


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
