"""The full-text search's database objects survive every migration.

On SQLite a migration that alters a column of the steps table rebuilds the table, and the rebuild
drops its triggers: the FTS index would then silently stop following new steps. The test database is
built by every migration, so it catches a later migration that does that."""

from __future__ import annotations

import pytest
from django.db import connection

from benchmark.runs.search import FTS_TABLE

pytestmark = pytest.mark.django_db


def test_it_keeps_the_search_index_of_the_steps_table_after_all_migrations():
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("select name from sqlite_master where type = 'trigger' and tbl_name = 'benchmark_step'")
            names = {row[0] for row in cursor.fetchall()}
            assert names == {f"{FTS_TABLE}_insert", f"{FTS_TABLE}_delete", f"{FTS_TABLE}_update"}
        else:
            cursor.execute("select indexdef from pg_indexes where tablename = 'benchmark_step'")
            definitions = [row[0] for row in cursor.fetchall()]
            assert any("step_fulltext" in d and "gin (search_document)" in d.lower() for d in definitions), definitions
            cursor.execute(
                "select is_generated from information_schema.columns "
                "where table_name = 'benchmark_step' and column_name = 'search_document'"
            )
            assert cursor.fetchall() == [("ALWAYS",)]  # computed by the database on every write
