"""Full-text search over every step's thought, action and output: the one module that knows the
database's text-search dialect.

SQLite (the default) keeps an FTS5 table `benchmark_step_fts` in step with `benchmark_step` through
triggers; PostgreSQL has a GIN index on a `to_tsvector` expression of the same three columns
(migration 0011_step_full_text_search creates whichever the database needs). Both tokenise
without stemming (FTS5 `unicode61`, PostgreSQL's `simple` configuration), so a search finds the same
words on both: every word of the query must occur in one step.
"""

from __future__ import annotations

import json
import re

from django.db import connection
from django.db.models.expressions import RawSQL

# PostgreSQL: to_tsvector of a very long output would exceed the 1 MB tsvector limit and make the
# step's INSERT fail, so the index (and the query, which must use the same expression) reads the
# first POSTGRES_INDEXED_CHARS characters of each step.
POSTGRES_INDEXED_CHARS = 100_000
POSTGRES_DOCUMENT = (
    "to_tsvector('simple'::regconfig, left(coalesce(thought, '') || ' ' || coalesce(action, '') || ' ' || "
    f"coalesce(observation, ''), {POSTGRES_INDEXED_CHARS}))"
)
FTS_TABLE = "benchmark_step_fts"
MAX_TERMS = 20

SQLITE_SETUP = [
    f"CREATE VIRTUAL TABLE {FTS_TABLE} USING fts5(thought, action, observation, "
    "content='benchmark_step', content_rowid='id', tokenize='unicode61')",
    f"""CREATE TRIGGER {FTS_TABLE}_insert AFTER INSERT ON benchmark_step BEGIN
        INSERT INTO {FTS_TABLE}(rowid, thought, action, observation)
        VALUES (new.id, new.thought, new.action, new.observation); END""",
    f"""CREATE TRIGGER {FTS_TABLE}_delete AFTER DELETE ON benchmark_step BEGIN
        INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, thought, action, observation)
        VALUES ('delete', old.id, old.thought, old.action, old.observation); END""",
    f"""CREATE TRIGGER {FTS_TABLE}_update AFTER UPDATE ON benchmark_step BEGIN
        INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, thought, action, observation)
        VALUES ('delete', old.id, old.thought, old.action, old.observation);
        INSERT INTO {FTS_TABLE}(rowid, thought, action, observation)
        VALUES (new.id, new.thought, new.action, new.observation); END""",
    f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES ('rebuild')",  # steps that exist already
]
SQLITE_TEARDOWN = [
    f"DROP TRIGGER IF EXISTS {FTS_TABLE}_insert",
    f"DROP TRIGGER IF EXISTS {FTS_TABLE}_delete",
    f"DROP TRIGGER IF EXISTS {FTS_TABLE}_update",
    f"DROP TABLE IF EXISTS {FTS_TABLE}",
]
POSTGRES_SETUP = [f"CREATE INDEX IF NOT EXISTS step_fulltext ON benchmark_step USING gin ({POSTGRES_DOCUMENT})"]
POSTGRES_TEARDOWN = ["DROP INDEX IF EXISTS step_fulltext"]


def query_terms(text: str) -> list[str]:
    """The words of a query that can match anything (pure punctuation cannot), at most MAX_TERMS."""
    return [term for term in text.split() if re.search(r"[^\W_]", term)][:MAX_TERMS]


def _fts5_query(terms: list[str]) -> str:
    # Each term becomes a quoted FTS5 phrase, so the user's text is never read as FTS5 syntax
    # (AND, NEAR, column filters, stray quotes); "train.py" is the phrase "train py".
    return " ".join('"' + term.replace('"', '""') + '"' for term in terms)


def matching_steps_sql(text: str) -> tuple[str, list[str]] | None:
    """SQL selecting (run_id, idx = step index) of the steps matching `text`; None when the query has no words."""
    terms = query_terms(text)
    if not terms:
        return None
    if connection.vendor == "postgresql":
        sql = f"SELECT run_id, \"index\" AS idx FROM benchmark_step WHERE {POSTGRES_DOCUMENT} @@ plainto_tsquery('simple', %s)"
        return sql, [" ".join(terms)]
    if connection.vendor == "sqlite":
        sql = (
            'SELECT run_id, "index" AS idx FROM benchmark_step WHERE id IN '
            f"(SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s)"
        )
        return sql, [_fts5_query(terms)]
    raise NotImplementedError(f"full-text search is not set up for {connection.vendor}")


def first_matches(text: str) -> dict[int, int] | None:
    """{run id: index of its first step matching `text`} over all runs; None when the query has no
    words. One evaluation of the full-text match per request: the list's count, its page and the
    "first match" links all read this instead of matching again."""
    found = matching_steps_sql(text)
    if found is None:
        return None
    sql, params = found
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT run_id, MIN(idx) FROM ({sql}) AS matches GROUP BY run_id", params)
        return dict(cursor.fetchall())


def id_in(ids: list[int]) -> RawSQL:
    """`ids` as one bound parameter (a JSON array on SQLite, an array on PostgreSQL), for
    `filter(pk__in=...)`: no limit on how many, unlike one placeholder per id."""
    if connection.vendor == "postgresql":
        return RawSQL("SELECT unnest(%s::bigint[])", [ids])
    return RawSQL("SELECT value FROM json_each(%s)", [json.dumps(ids)])
