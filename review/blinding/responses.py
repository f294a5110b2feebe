"""How a stored file of an item reaches a browser: the headers every served figure or supplementary
file carries, on the reviewer's page and on the admin's preview alike."""

from __future__ import annotations

from django.http import HttpResponse


def file_response(data: bytes, content_type: str) -> HttpResponse:
    # Built by hand, not FileResponse: that one would name the stored file in Content-Disposition.
    response = HttpResponse(data, content_type=content_type)
    response["Cache-Control"] = "private, max-age=3600"
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "default-src 'none'; style-src 'unsafe-inline'"
    return response
