"""Views for tests/config/test_asgi_handler.py: what thread each part of a request runs in."""

from __future__ import annotations

import asyncio
import threading
import time

from asgiref.sync import async_to_sync
from django.contrib.auth import get_user_model
from django.http import HttpResponse, StreamingHttpResponse
from django.urls import path

seen: dict[str, object] = {}
release = threading.Event()
_thread = threading.local()


def where(request):  # type: ignore[no-untyped-def]
    """The thread's id and how many requests it has served (an id alone may be reused by a new thread)."""
    _thread.served = getattr(_thread, "served", 0) + 1
    return HttpResponse(f"{threading.get_ident()} {_thread.served}")


def held(request):  # type: ignore[no-untyped-def]
    """Answers once the test sets `release`: a request still in flight."""
    seen.setdefault("held", []).append(threading.get_ident())
    release.wait(20)
    return HttpResponse(str(threading.get_ident()))


def streamed(request):  # type: ignore[no-untyped-def]
    seen["view"] = threading.get_ident()

    def parts():  # type: ignore[no-untyped-def]
        for n in range(3):
            seen.setdefault("parts", []).append(threading.get_ident())
            yield f"{n}:{get_user_model().objects.count()}\n"  # the database through the view's thread

    return StreamingHttpResponse(parts())


def endless(request):  # type: ignore[no-untyped-def]
    def parts():  # type: ignore[no-untyped-def]
        try:
            n = 0
            while n < 2000:  # 20 s at most, should the handler never stop
                n += 1
                seen["yielded"] = n
                yield b"x" * 70_000  # a batch each: the handler looks for a disconnect between them
                time.sleep(0.01)
        finally:
            seen["closed"] = threading.get_ident()

    return StreamingHttpResponse(parts())


def loop_of(request):  # type: ignore[no-untyped-def]
    async def running_loop() -> int:
        await asyncio.sleep(0)
        return id(asyncio.get_running_loop())

    return HttpResponse(str(async_to_sync(running_loop)()))


urlpatterns = [
    path("where", where),
    path("held", held),
    path("streamed", streamed),
    path("endless", endless),
    path("loop", loop_of),
]
