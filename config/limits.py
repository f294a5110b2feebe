"""Request bodies bounded before anything reads them (issue 30).

A body's size is known from its Content-Length before a byte of it is read; Django reads it only
when something asks for `request.POST`, `FILES` or `body`, and the first to ask is usually the CSRF
check (CsrfViewMiddleware.process_view), before the view could refuse. This middleware, placed
before it, answers 413 when the declared length is over

- the global cap (`REQUEST_BODY_MAX`, every URL, also those that resolve to nothing), checked as
  the request comes in, and
- the limit of the route (`REQUEST_BODY_LIMITS`, by URL name, else `REQUEST_BODY_DEFAULT`), checked
  once the URL is resolved: small for the sign-in forms anyone can post to, large only for uploads.

What passes is read the way Django ships it: non-file fields held to DATA_UPLOAD_MAX_MEMORY_SIZE,
files streamed to temporary files past FILE_UPLOAD_MAX_MEMORY_SIZE (the default upload handlers). A
body sent without Content-Length (chunked) is not read by Django at all. nginx in deploy/ applies
the same limits first (`client_max_body_size`, per location).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string

KB, MB = 1024, 1024 * 1024


def human(size: int) -> str:
    if size >= MB:
        return f"{size / MB:g} MB"
    return f"{size / KB:g} kB" if size >= KB else f"{size} bytes"


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


def route_limit(view_name: str | None) -> int:
    limits: dict[str, int] = settings.REQUEST_BODY_LIMITS
    return min(limits.get(view_name or "", settings.REQUEST_BODY_DEFAULT), settings.REQUEST_BODY_MAX)


class RequestBodyLimitMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        size = declared_length(request)
        if size > settings.REQUEST_BODY_MAX:
            return too_large(request, size, settings.REQUEST_BODY_MAX)
        return self.get_response(request)

    def process_view(self, request: HttpRequest, view: Callable, args: Any, kwargs: Any) -> HttpResponse | None:
        size = declared_length(request)
        if not size:
            return None
        limit = route_limit(request.resolver_match.view_name if request.resolver_match else None)
        return too_large(request, size, limit) if size > limit else None
