"""The platform's ASGI app (config.asgi) with the review bench's timer around each request.

bench/review_load.py serves the review pages with this under daphne, as `make up` and deploy/ serve
them: Django's ASGI handler runs each request's sync code in a thread of its own, and the database
connections come from the same pool settings as the platform's. The timer runs from the moment
daphne hands the request to the app to the moment the app sends the last body byte (server time,
not client latency), and counts the request's SQL queries. Each timed request is a line
"unix-time kind ms queries" in this process's own file in REVIEW_BENCH_STATS; the render cache is
off while the file REVIEW_BENCH_STATS/cache-off exists.
"""

from __future__ import annotations

import contextvars
import os
import time
from pathlib import Path

from django.db.backends.signals import connection_created

from config.asgi import application as platform_app  # sets up Django
from review import blinding

STATS = Path(os.environ["REVIEW_BENCH_STATS"])
CACHE_OFF = STATS / "cache-off"
_log = open(STATS / f"server-{os.getpid()}.log", "a", buffering=1, encoding="utf-8")  # noqa: SIM115
# The request's query counter; sync_to_async copies the context into the thread running the view.
_queries: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar("review_bench_queries", default=None)


def _count(execute, sql, params, many, context):  # type: ignore[no-untyped-def]
    counter = _queries.get()
    if counter is not None:
        counter[0] += 1
    return execute(sql, params, many, context)


def _wrap_connection(sender, connection, **kwargs) -> None:  # type: ignore[no-untyped-def]
    if _count not in connection.execute_wrappers:
        connection.execute_wrappers.append(_count)


connection_created.connect(_wrap_connection)


def kind_of(scope: dict) -> str | None:
    path, method = scope["path"], scope["method"]
    if not path.startswith("/review/a/"):
        return None
    if path.endswith("/draft"):
        return "draft_json"
    if "/f/" in path:
        return "figure"
    if method == "POST":
        return "draft_form"
    return "item_page" if blinding.RENDER_CACHE else "item_page_uncached"


async def application(scope, receive, send):  # type: ignore[no-untyped-def]
    if scope["type"] != "http":
        return await platform_app(scope, receive, send)
    blinding.RENDER_CACHE = not CACHE_OFF.exists()
    counter = [0]
    _queries.set(counter)
    t0 = time.perf_counter()
    done = [0.0]

    async def timed_send(message):  # type: ignore[no-untyped-def]
        await send(message)
        if message["type"] == "http.response.body" and not message.get("more_body"):
            done[0] = time.perf_counter()

    await platform_app(scope, receive, timed_send)
    kind = kind_of(scope)
    if kind and done[0]:
        _log.write(f"{time.time():.6f} {kind} {(done[0] - t0) * 1000:.3f} {counter[0]}\n")


(STATS / f"ready-{os.getpid()}").touch()  # the app is imported: the bench may send requests
