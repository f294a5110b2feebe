"""The platform's WSGI app (config.wsgi) with the review bench's timer around each request.

bench/review_load.py serves the review pages with this under gunicorn, with the settings `make up`
and deploy/ use (config/gunicorn.py, config/servers.py). The timer runs from the moment gunicorn
calls the app to the moment the response's iterable is closed, after its last byte was handed to
the server (server time, not client latency), and counts the request's SQL queries. Each timed
request is a line "unix-time kind ms queries" in the worker process's own file in
REVIEW_BENCH_STATS; the render cache is off while the file REVIEW_BENCH_STATS/cache-off exists.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from django.db.backends.signals import connection_created

from config.wsgi import application as platform_app  # sets up Django
from review.blinding import blinded

STATS = Path(os.environ["REVIEW_BENCH_STATS"])
CACHE_OFF = STATS / "cache-off"
_local = threading.local()  # the request's query counter (a gunicorn thread serves one at a time)
_logs: dict[int, object] = {}


def _log():  # type: ignore[no-untyped-def]
    """This process's stats file, opened in the worker (the app is preloaded in gunicorn's master)."""
    pid = os.getpid()
    if pid not in _logs:
        _logs[pid] = open(STATS / f"server-{pid}.log", "a", buffering=1, encoding="utf-8")  # noqa: SIM115
    return _logs[pid]


def _count(execute, sql, params, many, context):  # type: ignore[no-untyped-def]
    counter = getattr(_local, "counter", None)
    if counter is not None:
        counter[0] += 1
    return execute(sql, params, many, context)


def _wrap_connection(sender, connection, **kwargs) -> None:  # type: ignore[no-untyped-def]
    if _count not in connection.execute_wrappers:
        connection.execute_wrappers.append(_count)


connection_created.connect(_wrap_connection)


def kind_of(environ: dict) -> str | None:
    path, method = environ.get("PATH_INFO", ""), environ["REQUEST_METHOD"]
    if not path.startswith("/review/a/"):
        return None
    if path.endswith("/draft"):
        return "draft_json"
    if "/f/" in path:
        return "figure"
    if method == "POST":
        return "draft_form"
    return "item_page" if blinded.RENDER_CACHE else "item_page_uncached"


def application(environ, start_response):  # type: ignore[no-untyped-def]
    blinded.RENDER_CACHE = not CACHE_OFF.exists()
    _local.counter = counter = [0]
    t0, c0 = time.perf_counter(), time.thread_time()
    body = platform_app(environ, start_response)
    try:
        yield from body
    finally:
        if hasattr(body, "close"):
            body.close()
        kind = kind_of(environ)
        if kind:
            ms, cpu = (time.perf_counter() - t0) * 1000, (time.thread_time() - c0) * 1000
            _log().write(f"{time.time():.6f} {kind} {ms:.3f} {counter[0]} {cpu:.3f}\n")
        _local.counter = None
