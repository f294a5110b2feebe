"""The step append's writes as they were before issue 31: hand-written INSERT and UPDATE statements
built once per model (the former config.db.insert_row / update_rows), for
`bench/stream_latency.py --append-variants`, which times them beside the ORM's (benchmark.runs.
progress._write) in one run. Not used by the platform.

They write what the ORM writes for Step and Score as those models are today (each field's pre_save
and get_db_prep_save; no signals), but only because neither has a GeneratedField, a db_default or
an auto_now field on the Step: the ORM path needs no such knowledge.
"""

from __future__ import annotations

from typing import Any

from django.db import connection
from django.db.models import Model

from benchmark.models import Run, Score, Step
from benchmark.runs import progress

_SQL: dict[tuple, str] = {}


def _insert_row(obj: Model) -> None:
    model = type(obj)
    fields = [f for f in model._meta.concrete_fields if not (f.primary_key and f.db_returning)]
    key = ("insert", model, connection.vendor)
    quote = connection.ops.quote_name
    sql = _SQL.get(key)
    if sql is None:
        columns = ", ".join(quote(f.column) for f in fields)
        sql = f"INSERT INTO {quote(model._meta.db_table)} ({columns}) VALUES ({', '.join(['%s'] * len(fields))})"
        if connection.features.can_return_columns_from_insert:
            sql += f" RETURNING {quote(model._meta.pk.column)}"
        _SQL[key] = sql
    values = [f.get_db_prep_save(f.pre_save(obj, True), connection) for f in fields]
    with connection.cursor() as cursor:
        cursor.execute(sql, values)
        if connection.features.can_return_columns_from_insert:
            pk = cursor.fetchone()[0]
        else:
            pk = connection.ops.last_insert_id(cursor, model._meta.db_table, model._meta.pk.column)
    obj.pk = pk
    obj._state.adding = False
    obj._state.db = connection.alias


def _update_run(pk: int, *, status: str | None, set: dict[str, Any], add: dict[str, Any]) -> int:
    meta, quote = Run._meta, connection.ops.quote_name
    where = f"{quote('id')} = %s" + (f" AND {quote('status')} = %s" if status else "")
    key = ("update", connection.vendor, tuple(set), tuple(add), where)
    sql = _SQL.get(key)
    if sql is None:
        parts = [f"{quote(meta.get_field(n).column)} = %s" for n in set]
        parts += [f"{quote(meta.get_field(n).column)} = {quote(meta.get_field(n).column)} + %s" for n in add]
        sql = f"UPDATE {quote(meta.db_table)} SET {', '.join(parts)} WHERE {where}"
        _SQL[key] = sql
    values = [meta.get_field(n).get_db_prep_save(v, connection) for n, v in set.items()]
    values += [meta.get_field(n).get_db_prep_save(v, connection) for n, v in add.items()]
    with connection.cursor() as cursor:
        cursor.execute(sql, [*values, pk, *([status] if status else [])])
        return cursor.rowcount


def legacy_write(
    *, run: Run, step: Step, score: Score | None, changes: dict[str, Any], counters: dict[str, Any], while_running: bool
) -> None:
    """progress._write with the statements built once (same order, same compare-and-set)."""
    status = Run.Status.RUNNING if while_running else None
    if not _update_run(run.pk, status=status, set=changes, add=counters) and while_running:
        raise progress.RunNotRunning(f"run {run.code} is no longer running")
    step.wire = progress.step_wire(step, score)
    _insert_row(step)
    if score is not None:
        score.step_id = step.pk
        _insert_row(score)


class written_by:
    """`with written_by(legacy_write):` step_append writes through that function meanwhile."""

    def __init__(self, write: Any) -> None:
        self.write = write

    def __enter__(self) -> None:
        self.saved = progress._write
        progress._write = self.write

    def __exit__(self, *exc: object) -> None:
        progress._write = self.saved
