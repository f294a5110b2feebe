"""A per-run heartbeat in Redis: how the run reaper tells a hard-killed worker within a minute.

The process that drives a run (an RQ work horse, or `run_execute` called inline) keeps the key
`referee:run-heartbeat:<code>` alive from a daemon thread, every RUN_HEARTBEAT_EVERY seconds with
an expiry of RUN_HEARTBEAT_TTL. kill -9 of that process (or of its host) stops the thread with it,
the key expires, and `reap_runs` marks the run interrupted on its next pass. RQ's own worker key
would tell only after it expires (about 7 minutes), and it outlives a killed work horse anyway.

The key is written on the `runs` queue's Redis, so every worker host and every reaper sees the
same keys. A Redis that restarted without its data has none: missing keys prove nothing until the
server has been up for a whole TTL (see `missing_keys_prove_death`).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from django.conf import settings

from sandbox.conf import host_id

log = logging.getLogger(__name__)

# A failed beat is tried again this soon: after a Redis restart the key is back within about a second.
RETRY_AFTER_FAILURE = 1.0


def heartbeat_key(code: Any) -> str:
    return f"referee:run-heartbeat:{code}"


def _connection() -> Any:
    import django_rq

    return django_rq.get_queue("runs").connection


def _ttl_ms() -> int:
    return max(1, int(settings.RUN_HEARTBEAT_TTL * 1000))


class Heartbeat:
    """Keeps one run's key alive until `stop()`; a beat that fails (Redis away) is retried soon."""

    def __init__(self, code: Any) -> None:
        self.key = heartbeat_key(code)
        self.value = f"{host_id()}:{os.getpid()}"
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._loop, name=f"heartbeat-{code}", daemon=True)
        self.connection = _connection()

    def beat(self) -> bool:
        try:
            self.connection.set(self.key, self.value, px=_ttl_ms())
        except Exception as exc:  # Redis away: the run goes on; the reaper cannot look either
            log.warning("heartbeat %s not written: %s", self.key, exc)
            return False
        return True

    def start(self) -> None:
        self.beat()  # at once: the key exists from the claim on
        self.thread.start()

    def _loop(self) -> None:
        wait = settings.RUN_HEARTBEAT_EVERY
        while not self.stopping.wait(wait):
            wait = settings.RUN_HEARTBEAT_EVERY if self.beat() else min(RETRY_AFTER_FAILURE, wait)

    def stop(self) -> None:
        """Stop beating. The key is left to expire: the run's final status is already committed."""
        self.stopping.set()
        self.thread.join(timeout=5)


@contextmanager
def beating(code: Any) -> Iterator[Heartbeat]:
    heartbeat = Heartbeat(code)
    heartbeat.start()
    try:
        yield heartbeat
    finally:
        heartbeat.stop()


def beating_codes(codes: Iterable[Any], connection: Any = None) -> set[str]:
    """The run codes among `codes` whose key is alive (one round trip)."""
    codes = [str(code) for code in codes]
    if not codes:
        return set()
    connection = connection or _connection()
    values = connection.mget([heartbeat_key(code) for code in codes])
    return {code for code, value in zip(codes, values, strict=True) if value is not None}


def missing_keys_prove_death(connection: Any = None) -> bool:
    """True once Redis has been up for a whole TTL: before that a key may be missing only because
    the server restarted without its data and the worker has not beaten since."""
    connection = connection or _connection()
    uptime = float(connection.info("server").get("uptime_in_seconds", 0))
    return uptime >= settings.RUN_HEARTBEAT_TTL
