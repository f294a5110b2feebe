"""Database helpers shared by the apps."""

from __future__ import annotations

from django.db import connection
from django.db.models import Model


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
