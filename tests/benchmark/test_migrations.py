"""Data migrations: what they do to rows that exist before them."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)


def migrate(target: tuple[str, str]):
    executor = MigrationExecutor(connection)
    executor.migrate([target])
    executor.loader.build_graph()
    return executor.loader.project_state([target]).apps


def test_it_renames_the_model_free_agent_apart_from_the_reference_row():
    apps = migrate(("benchmark", "0007_step_execution_time_unknown"))
    Task, AgentConfig, Run = (apps.get_model("benchmark", name) for name in ("Task", "AgentConfig", "Run"))
    task = Task.objects.create(slug="t", version_hash="0" * 64, kind="mlgym", title="t")
    free = AgentConfig.objects.create(name="baseline", kind="baseline")
    model = AgentConfig.objects.create(name="baseline", kind="model", model="openai:baseline")
    Run.objects.create(task=task, agent=free, method="baseline")
    Run.objects.create(task=task, agent=model, method="baseline")
    try:
        apps = migrate(("benchmark", "0008_starter_code_agent"))
        AgentConfig, Run = apps.get_model("benchmark", "AgentConfig"), apps.get_model("benchmark", "Run")
        assert AgentConfig.objects.get(pk=free.pk).name == "starter-code"
        # A model someone named "baseline" keeps its name: only the model-free agent is renamed.
        assert AgentConfig.objects.get(pk=model.pk).name == "baseline"
        assert sorted(Run.objects.values_list("agent__kind", "method")) == [
            ("baseline", "starter-code"),
            ("model", "baseline"),
        ]
    finally:
        migrate_to_latest()


def migrate_to_latest() -> None:
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
