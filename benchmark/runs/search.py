"""Full-text search over every step's thought, action and output: the one module that knows the
database's text-search dialect.

SQLite (the default) keeps an FTS5 table `benchmark_step_fts` in step with `benchmark_step` through
triggers (migration 0011_step_full_text_search); PostgreSQL keeps a stored, generated `tsvector`
column `search_document` of the same three columns with a GIN index on it (migration
0014_step_search_document_postgres; the column is not on the Django model, the database computes it
on every INSERT and UPDATE). Both tokenise without stemming (FTS5 `unicode61`, PostgreSQL's `simple`
configuration), so a search finds the same words on both: every word of the query must occur in one
step.

PostgreSQL is queried through the ORM and django.contrib.postgres's SearchQuery. SQLite's two reads
stay SQL, because the ORM has no words for them: FTS5's MATCH on a virtual table (no model, no
lookup), a CROSS JOIN that fixes SQLite's join order (the FTS table first, read newest rowid first),
and a common table expression of each run's rowid range.

A search reads at most MATCH_WINDOW matching steps, newest first: a word found in most of a million
steps answers with the runs of its most recent matches, and the list says that more runs match,
rather than grouping every match to count them exactly.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from django.db import connection
from django.db.models import Min, QuerySet
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
MATCH_WINDOW = 5_000  # matching steps read per search, newest first (about a page of runs of a word found everywhere)

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
# 0011's expression index, which 0013 replaces by the stored column: a query through the expression
# recomputed to_tsvector for every row the index could not decide, and PostgreSQL kept no statistics
# of the words, so it could not tell a rare word from a common one.
POSTGRES_SETUP = [f"CREATE INDEX IF NOT EXISTS step_fulltext ON benchmark_step USING gin ({POSTGRES_DOCUMENT})"]
POSTGRES_TEARDOWN = ["DROP INDEX IF EXISTS step_fulltext"]
POSTGRES_COLUMN_SETUP = [
    "DROP INDEX IF EXISTS step_fulltext",
    f"ALTER TABLE benchmark_step ADD COLUMN search_document tsvector GENERATED ALWAYS AS ({POSTGRES_DOCUMENT}) STORED",
    "CREATE INDEX step_fulltext ON benchmark_step USING gin (search_document)",
    "ANALYZE benchmark_step",
]
POSTGRES_COLUMN_TEARDOWN = [
    "DROP INDEX IF EXISTS step_fulltext",
    "ALTER TABLE benchmark_step DROP COLUMN IF EXISTS search_document",
    *POSTGRES_SETUP,
]


def query_terms(text: str) -> list[str]:
    """The words of a query that can match anything (pure punctuation cannot), at most MAX_TERMS."""
    return [term for term in text.split() if re.search(r"[^\W_]", term)][:MAX_TERMS]


def _fts5_query(terms: list[str]) -> str:
    # Each term becomes a quoted FTS5 phrase, so the user's text is never read as FTS5 syntax
    # (AND, NEAR, column filters, stray quotes); "train.py" is the phrase "train py".
    return " ".join('"' + term.replace('"', '""') + '"' for term in terms)


@dataclass
class Matches:
    """The runs with a step matching a query, most recent match first."""

    run_ids: list[int]
    # True when more than MATCH_WINDOW steps matched: run_ids are the runs of the MATCH_WINDOW most
    # recently recorded matching steps, and older matching runs are left out (the list says so).
    capped: bool


def _postgres_matching(terms: list[str]) -> QuerySet[Any]:
    """Steps whose stored `search_document` matches every term, through django.contrib.postgres's
    SearchQuery (`@@ plainto_tsquery('simple', ...)`). The column is not on the model (SQLite has none;
    a model cannot hold a field on one database only), so the query names it in one RawSQL column."""
    from django.contrib.postgres.search import SearchQuery, SearchVectorField

    from benchmark.models import Step

    document = RawSQL(f"{Step._meta.db_table}.search_document", [], output_field=SearchVectorField())
    query = SearchQuery(" ".join(terms), config="simple", search_type="plain")
    return Step.objects.annotate(document=document).filter(document=query).order_by()


def recent_matches(text: str, runs: QuerySet[Any]) -> Matches | None:
    """The runs among `runs` with a step matching `text`; None when the query has no words.

    One bounded read: the matching steps newest first (step ids grow as steps are recorded), at most
    MATCH_WINDOW of them. A rare word reads all its matches; a word in most steps stops after
    MATCH_WINDOW instead of grouping a million matches by run to count them all."""
    terms = query_terms(text)
    if not terms:
        return None
    if connection.vendor == "postgresql":
        steps = _postgres_matching(terms).filter(run__in=runs.order_by().values("pk")).order_by("-id")
        hits = list(steps.values_list("run_id", flat=True)[: MATCH_WINDOW + 1])
        return Matches(run_ids=list(dict.fromkeys(hits[:MATCH_WINDOW])), capped=len(hits) > MATCH_WINDOW)
    runs_sql, runs_params = runs.order_by().values("pk").query.sql_with_params()
    if connection.vendor == "sqlite":
        # The FTS table drives (CROSS JOIN keeps SQLite from starting at the steps table) in
        # descending rowid order, each hit joined back to its step by primary key.
        sql = (
            f"SELECT s.run_id FROM {FTS_TABLE} CROSS JOIN benchmark_step s ON s.id = {FTS_TABLE}.rowid "
            f"WHERE {FTS_TABLE} MATCH %s AND s.run_id IN ({runs_sql}) ORDER BY {FTS_TABLE}.rowid DESC LIMIT %s"
        )
        params = [_fts5_query(terms), *runs_params, MATCH_WINDOW + 1]
    else:
        raise NotImplementedError(f"full-text search is not set up for {connection.vendor}")
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        hits = [row[0] for row in cursor.fetchall()]
    capped = len(hits) > MATCH_WINDOW
    return Matches(run_ids=list(dict.fromkeys(hits[:MATCH_WINDOW])), capped=capped)


def first_match_indexes(text: str, run_ids: list[int]) -> dict[int, int]:
    """{run id: index of its first step matching `text`} for a page of runs (exact, whatever the window)."""
    terms = query_terms(text)
    if not terms or not run_ids:
        return {}
    if connection.vendor == "postgresql":
        firsts = _postgres_matching(terms).filter(run_id__in=run_ids).values("run_id").annotate(first=Min("index"))
        return {row["run_id"]: row["first"] for row in firsts}
    # Per run of the page, one read of the FTS index over that run's range of step ids (a rowid
    # range FTS5 seeks to): probing the index once per step would cost a seek into the whole
    # match list of a common word for each of the page's thousands of steps.
    sql = (
        "WITH page(run_id, lo, hi) AS (SELECT run_id, MIN(id), MAX(id) FROM benchmark_step "
        "WHERE run_id IN (SELECT value FROM json_each(%s)) GROUP BY run_id) "
        f'SELECT page.run_id, MIN(s."index") FROM page CROSS JOIN {FTS_TABLE} CROSS JOIN benchmark_step s '
        f"WHERE {FTS_TABLE} MATCH %s AND {FTS_TABLE}.rowid BETWEEN page.lo AND page.hi "
        f"AND s.id = {FTS_TABLE}.rowid AND s.run_id = page.run_id GROUP BY page.run_id"
    )
    params = [json.dumps(run_ids), _fts5_query(terms)]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return dict(cursor.fetchall())


def id_in(ids: list[int]) -> RawSQL:
    """`ids` as one bound parameter (a JSON array on SQLite, an array on PostgreSQL), for
    `filter(pk__in=...)`: no limit on how many, unlike one placeholder per id."""
    if connection.vendor == "postgresql":
        return RawSQL("SELECT unnest(%s::bigint[])", [ids])
    return RawSQL("SELECT value FROM json_each(%s)", [json.dumps(ids)])
