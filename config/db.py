"""Database helpers shared by the apps."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TypeVar

from django.db import InterfaceError, OperationalError, connection
from django.db.models import Model

log = logging.getLogger(__name__)
T = TypeVar("T")


def planner_statistics_refresh(*models: type[Model]) -> None:
    """After a bulk import, give PostgreSQL's planner the new row counts at once.

    Autovacuum analyses a table a while after a large insert, and never inside the transaction that
    made it: until then the planner believes the tables hold a few rows and can pick nested loops of
    sequential scans. Measured on MLR-Bench's stepwise data (4,824 judgments): the leaderboard's score
    query took 1 s with statistics and ran for more than 30 minutes without. SQLite plans by indexes
    without such statistics; there it is a no-op."""
    if connection.vendor != "postgresql" or not models:
        return
    tables = ", ".join(connection.ops.quote_name(m._meta.db_table) for m in models)
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {tables}")


# -- a dropped connection (the server restarted, a pooler or an admin cut it) -----------------------
RECONNECT_ATTEMPTS = 5
RECONNECT_FIRST_WAIT = 0.2  # seconds; doubled per attempt (0.2 + 0.4 + 0.8 + 1.6: about 3 s in all)


def reconnecting(work: Callable[[], T], *, committed: Callable[[], T | None] | None = None, what: str = "") -> T:
    """`work()` (one transaction of its own), done again on a fresh connection if the connection
    dropped under it (OperationalError/InterfaceError). Django reconnects only at request
    boundaries; a worker holds one connection for a whole run, so it must drop a dead one itself.

    `committed()` is asked first after a drop: the server may have committed before the connection
    died (the acknowledgement lost); it returns what `work()` would have, or None to do it again.
    Inside an outer atomic block nothing is retried: the block's earlier writes are gone with it."""
    wait = RECONNECT_FIRST_WAIT
    for attempt in range(1, RECONNECT_ATTEMPTS + 1):
        try:
            return work()
        except (OperationalError, InterfaceError) as exc:
            if connection.in_atomic_block or attempt == RECONNECT_ATTEMPTS:
                raise
            log.warning("database connection lost during %s (%s); reconnecting in %.1f s", what or "a write", exc, wait)
        try:
            connection.close()  # the next query opens a new connection
        except (OperationalError, InterfaceError):
            connection.connection = None
        time.sleep(wait)
        wait *= 2
        if committed is not None:
            try:
                found = committed()
            except (OperationalError, InterfaceError):
                continue  # still away: the next attempt reconnects again
            if found is not None:
                return found
    raise AssertionError("unreachable")
