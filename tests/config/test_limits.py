"""config/limits.py: a body over its route's limit or the global cap is refused with 413 before a
byte of it is read (the test client's body here is never parsed; the served stack's tests in
tests/ops/test_floods.py send the real bytes)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from config.limits import MB, route_limit

pytestmark = pytest.mark.django_db


class Refused:
    """A request body that is only ever read to be dropped: anything that parses it (a line read,
    as the multipart parser does) fails the test."""

    def __init__(self) -> None:
        self.dropped = 0

    def read(self, size: int = -1) -> bytes:
        self.dropped += 1
        return b""  # the client sent nothing more

    def readline(self, *args: object) -> bytes:
        raise AssertionError("the body was parsed")


def _post(client, path: str, length: int, **headers: str):
    return client.generic(
        "POST",
        path,
        data=b"",  # so the client sets neither length nor type: the request declares them below
        CONTENT_TYPE=headers.pop("content_type", "multipart/form-data; boundary=x"),
        CONTENT_LENGTH=str(length),
        **{"wsgi.input": Refused()},
        **headers,
    )


def test_it_refuses_a_login_post_over_16_kb_before_reading_it(client) -> None:
    response = _post(client, reverse("accounts:login"), MB, HTTP_ACCEPT="text/html")
    assert response.status_code == 413
    page = response.content.decode()
    assert "<h1>Request too large</h1>" in page
    assert "The request is too large: 1 MB sent, and this address accepts at most 16 kB." in page
    # Over the global cap it is refused before the URL is even resolved.
    capped = _post(client, reverse("accounts:login"), 100 * MB, HTTP_ACCEPT="text/html")
    assert "100 MB sent, and this address accepts at most 64 MB." in capped.content.decode()


def test_it_answers_json_to_a_script_and_text_to_anything_else(client, researcher, client_for) -> None:
    path = reverse("accounts:login")
    as_json = _post(client, path, 20 * 1024, content_type="application/json")
    assert as_json.status_code == 413 and as_json.json()["limit_bytes"] == 16 * 1024
    plain = _post(client, path, 20 * 1024, HTTP_ACCEPT="text/plain")
    assert plain.status_code == 413 and plain["Content-Type"].startswith("text/plain")
    assert plain.content.decode().startswith("The request is too large: 20 kB sent")


def test_it_caps_every_url_also_one_that_resolves_to_nothing(client, settings) -> None:
    settings.REQUEST_BODY_MAX = 2 * MB
    assert _post(client, "/no/such/page/", 3 * MB).status_code == 413
    assert _post(client, "/no/such/page/", MB).status_code == 404  # under the cap: the URL's own answer


def test_it_gives_uploads_more_and_everything_else_the_default(settings) -> None:
    assert route_limit("benchmark:research_new") == settings.REQUEST_BODY_MAX == 64 * MB
    assert route_limit("accounts:login") == 16 * 1024
    assert route_limit("review:item") == settings.REQUEST_BODY_DEFAULT == MB
    settings.REQUEST_BODY_MAX = 8 * MB  # the cap wins over a route's own limit
    assert route_limit("benchmark:research_new") == 8 * MB


def test_it_lets_a_small_body_through_to_the_view(client) -> None:
    response = client.post(reverse("accounts:login"), {"username": "nobody", "password": "wrong"})
    assert response.status_code == 200 and b"password didn't match" in response.content
