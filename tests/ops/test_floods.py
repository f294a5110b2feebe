"""Request floods against the served stack (`live_url`: gunicorn and daphne as `make up` runs them;
issue 30): a body over its route's limit is answered 413 with a plain message while the web
process's memory stays flat, whatever its size, and a long URL gets 414 with a message, not a
dropped connection. The bodies are really sent, byte by byte, as an attacker would."""

from __future__ import annotations

import http.client
import re
import urllib.parse
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
MB = 1024 * 1024


def _worker_rss_kb(live_url) -> int:
    master = live_url.procs[0].pid
    (worker,) = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    status = Path(f"/proc/{worker}/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+) kB", status).group(1))


def _send(
    live_url, path: str, size: int, *, headers: dict[str, str] | None = None, fields: dict[str, str] | None = None
) -> tuple[int, str, str]:
    """POST a multipart body of `size` bytes, all of it, without `Expect: 100-continue` (as a
    browser sends it), then read the answer: (status, content type, body)."""
    parsed = urllib.parse.urlsplit(live_url)
    conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=120)
    boundary = "----flood"
    head = "".join(
        f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'
        for name, value in (fields or {}).items()
    )
    head = (
        head + f'--{boundary}\r\nContent-Disposition: form-data; name="corpus"; filename="c.jsonl"\r\n\r\n'
    ).encode()
    tail = f"\r\n--{boundary}--\r\n".encode()
    conn.putrequest("POST", path)
    conn.putheader("Content-Type", f"multipart/form-data; boundary={boundary}")
    conn.putheader("Content-Length", str(len(head) + size + len(tail)))
    for name, value in (headers or {}).items():
        conn.putheader(name, value)
    conn.endheaders()
    conn.send(head)
    chunk = b"x" * MB
    for _ in range(size // MB):
        conn.send(chunk)
    conn.send(b"x" * (size % MB) + tail)
    response = conn.getresponse()
    body = response.read().decode()
    conn.close()
    return response.status, response.getheader("Content-Type", ""), body


def _warm(live_url, path: str, cookie: str = "") -> None:
    """One small refused POST first: the worker's first 413 page loads its templates."""
    _send(
        live_url,
        path,
        2 * 1024 * 1024,
        headers={"Cookie": cookie, "Accept": "text/html"} if cookie else {"Accept": "text/html"},
    )


def test_it_refuses_a_100_mb_login_post_with_a_plain_413_and_flat_memory(live_url) -> None:
    _warm(live_url, "/accounts/login/")
    before = _worker_rss_kb(live_url)
    status, kind, body = _send(live_url, "/accounts/login/", 100 * MB, headers={"Accept": "text/html"})
    after = _worker_rss_kb(live_url)
    print(f"100 MB POST to /accounts/login/: worker RSS {before / 1024:.1f} -> {after / 1024:.1f} MB")
    assert status == 413 and kind.startswith("text/html")
    assert "<h1>Request too large</h1>" in body and "this address accepts at most 64 MB" in body
    assert after - before < 20 * 1024, (before, after)  # nothing of the body was held


def test_it_refuses_a_300_mb_upload_and_a_login_post_over_its_small_limit(live_url, researcher) -> None:
    client = Client()
    client.force_login(researcher)
    cookie = f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"
    before = _worker_rss_kb(live_url)
    status, kind, body = _send(live_url, "/research/new/", 300 * MB, headers={"Cookie": cookie, "Accept": "*/*"})
    after = _worker_rss_kb(live_url)
    print(f"300 MB upload to /research/new/: worker RSS {before / 1024:.1f} -> {after / 1024:.1f} MB")
    assert status == 413 and "300 MB sent, and this address accepts at most 64 MB" in body
    assert after - before < 20 * 1024, (before, after)
    # 40 kB to the login form: under the cap, over the form's own 16 kB; a script asking for JSON gets JSON.
    status, kind, body = _send(live_url, "/accounts/login/", 40 * 1024, headers={"Accept": "application/json"})
    assert (status, kind) == (413, "application/json") and '"limit_bytes": 16384' in body


def test_it_streams_an_upload_under_the_limit_to_disk_and_the_form_names_what_is_wrong(live_url, researcher) -> None:
    """30 MB to the research form, as the researcher's browser sends it: read to temporary files (as
    Django's upload handlers do past 2.5 MB), and refused by the form with its reason; the worker's
    memory stays flat."""
    client = Client()
    client.force_login(researcher)
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    parsed = urllib.parse.urlsplit(live_url)
    conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=60)
    conn.request("GET", "/research/new/", headers={"Cookie": f"{settings.SESSION_COOKIE_NAME}={session}"})
    page = conn.getresponse()
    assert page.status == 200, page.read()[:500]
    csrf = re.search(r"csrftoken=([^;]+)", page.getheader("Set-Cookie", "")).group(1)
    page.read()
    conn.close()
    cookie = f"{settings.SESSION_COOKIE_NAME}={session}; csrftoken={csrf}"
    fields = {"csrfmiddlewaretoken": csrf, "literature_provider": "corpus"}
    _send(live_url, "/research/new/", 3 * MB, headers={"Cookie": cookie}, fields=fields)  # warm
    before = _worker_rss_kb(live_url)
    status, _, body = _send(live_url, "/research/new/", 30 * MB, headers={"Cookie": cookie}, fields=fields)
    after = _worker_rss_kb(live_url)
    print(f"30 MB upload read by /research/new/: worker RSS {before / 1024:.1f} -> {after / 1024:.1f} MB")
    assert status == 400 or status == 200, body[:2000]
    assert "the corpus file is larger than 10 MB" in body
    assert after - before < 20 * 1024, (before, after)


def test_it_answers_a_long_url_with_414_and_a_message(live_url) -> None:
    parsed = urllib.parse.urlsplit(live_url)
    conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)
    conn.request("GET", "/runs/?q=" + "a" * 20_000)
    response = conn.getresponse()
    body = response.read().decode()
    assert response.status == 414 and response.reason == "URI Too Long"
    assert "Request Line is too large (" in body and "&gt; 8190)" in body
