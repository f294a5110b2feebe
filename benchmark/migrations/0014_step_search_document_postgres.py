"""PostgreSQL: full-text search reads a stored, generated tsvector column with a GIN index instead of
an expression index (benchmark.runs.search says why). SQLite keeps its FTS5 table: nothing to do."""

from django.db import migrations


def _run(name: str):
    def apply(apps, schema_editor) -> None:
        from benchmark.runs import search

        if schema_editor.connection.vendor == "postgresql":
            for statement in getattr(search, name):
                schema_editor.execute(statement)

    return apply


class Migration(migrations.Migration):
    # No SQLite operation: the steps table is not rebuilt, so 0011's FTS triggers stay.
    dependencies = [("benchmark", "0013_artifact_status_interrupted")]

    operations = [migrations.RunPython(_run("POSTGRES_COLUMN_SETUP"), _run("POSTGRES_COLUMN_TEARDOWN"))]
