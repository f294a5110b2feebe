"""Request bodies bounded before anything reads them (issue 30).

A body's size is known from its Content-Length before a byte of it is read; Django reads it only
when something asks for `request.POST`, `FILES` or `body`, and the first to ask is usually the CSRF
check (CsrfViewMiddleware.process_view), before the view could refuse. This middleware, placed
before it, answers 413 when the declared length is over

- the global cap (`REQUEST_BODY_MAX`, every URL, also those that resolve to nothing), checked as
  the request comes in, and
- the limit of the route (`REQUEST_BODY_LIMITS`, by URL name, else `REQUEST_BODY_DEFAULT`), checked
  once the URL is resolved: small for the sign-in forms anyone can post to, large only for uploads.

A client that sends its whole body before it reads an answer (a browser's form, most HTTP
libraries) would see a reset instead of the 413 if the server closed the connection at once with
the body unread (gunicorn drains at most 64 kB): so the refused body is read and thrown away, 64 kB
at a time (memory flat), for at most REQUEST_BODY_DISCARD_SECONDS, as nginx's lingering close does
in deploy/. Past that the connection closes.

What passes is read the way Django ships it: non-file fields held to DATA_UPLOAD_MAX_MEMORY_SIZE,
files streamed to temporary files past FILE_UPLOAD_MAX_MEMORY_SIZE (the default upload handlers). A
body sent without Content-Length (chunked) is not read by Django at all. nginx in deploy/ applies
the same limits first (`client_max_body_size`, per location).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string

KB, MB = 1024, 1024 * 1024


def human(size: int) -> str:
    for unit, name in ((MB, "MB"), (KB, "kB")):
        if size >= unit:
            return f"{size / unit:.1f}".removesuffix(".0") + f" {name}"
    return f"{size} bytes"


def declared_length(request: HttpRequest) -> int:
    try:
        return max(0, int(request.META.get("CONTENT_LENGTH") or 0))
    except ValueError:
        return 0  # Django reads no body it cannot size


def too_large(request: HttpRequest, size: int, limit: int) -> HttpResponse:
    """413 with a plain message: a page for a browser, JSON for a script that sent or asks for JSON,
    else text."""
    message = f"The request is too large: {human(size)} sent, and this address accepts at most {human(limit)}."
    wants_json = request.content_type == "application/json" or "application/json" in request.headers.get("Accept", "")
    if wants_json:
        response: HttpResponse = JsonResponse({"error": message, "limit_bytes": limit}, status=413)
    elif request.accepts("text/html"):
        html = render_to_string("413.html", {"message": message, "limit": human(limit)}, request=None)
        response = HttpResponse(html, status=413)
    else:
        response = HttpResponse(message + "\n", status=413, content_type="text/plain; charset=utf-8")
    return response


def discard_body(request: HttpRequest, size: int) -> None:
    """Read the refused body and drop it, so that the client gets to read the 413 (see above)."""
    stream = request.META.get("wsgi.input")
    if stream is None:
        return
    deadline = time.monotonic() + settings.REQUEST_BODY_DISCARD_SECONDS
    left = size
    try:
        while left > 0 and time.monotonic() < deadline:
            chunk = stream.read(min(left, 64 * KB))
            if not chunk:
                break
            left -= len(chunk)
    except OSError:  # the client gave up
        pass


def refuse(request: HttpRequest, size: int, limit: int) -> HttpResponse:
    discard_body(request, size)
    return too_large(request, size, limit)


def route_limit(view_name: str | None) -> int:
    limits: dict[str, int] = settings.REQUEST_BODY_LIMITS
    return min(limits.get(view_name or "", settings.REQUEST_BODY_DEFAULT), settings.REQUEST_BODY_MAX)


class RequestBodyLimitMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        size = declared_length(request)
        if size > settings.REQUEST_BODY_MAX:
            return refuse(request, size, settings.REQUEST_BODY_MAX)
        return self.get_response(request)

    def process_view(self, request: HttpRequest, view: Callable, args: Any, kwargs: Any) -> HttpResponse | None:
        size = declared_length(request)
        if not size:
            return None
        limit = route_limit(request.resolver_match.view_name if request.resolver_match else None)
        return refuse(request, size, limit) if size > limit else None
