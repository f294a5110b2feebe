"""Full-text search over steps: an FTS5 table with triggers on SQLite, a GIN index on PostgreSQL
(benchmark.runs.search owns the SQL of both)."""

from django.db import migrations


def _run(statements_for: dict[str, list[str]]):
    def apply(apps, schema_editor) -> None:
        for statement in statements_for.get(schema_editor.connection.vendor, []):
            schema_editor.execute(statement)

    return apply


def _statements() -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    from benchmark.runs import search

    setup = {"sqlite": search.SQLITE_SETUP, "postgresql": search.POSTGRES_SETUP}
    teardown = {"sqlite": search.SQLITE_TEARDOWN, "postgresql": search.POSTGRES_TEARDOWN}
    return setup, teardown


SETUP, TEARDOWN = _statements()


class Migration(migrations.Migration):
    # After every migration that rebuilds the steps table on SQLite (0010 alters a column): a
    # rebuild drops the table's triggers, which keep the FTS index in step.
    dependencies = [("benchmark", "0010_step_wire_encoded_once")]

    operations = [migrations.RunPython(_run(SETUP), _run(TEARDOWN))]
