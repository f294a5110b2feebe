"""Rows from before endpoints keep working: the migration seeds the defaults from the environment
and gives every LLM agent config and research run its endpoint; `seed_demo` seeds idempotently."""

from __future__ import annotations

import io

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from benchmark.llm.seed import endpoints_seed_from_settings
from benchmark.models import AgentConfig, ModelEndpoint, ResearchRun

BEFORE = [("benchmark", "0003_model_endpoints")]
AFTER = [("benchmark", "0005_agentconfig_drop_base_url")]


@pytest.fixture
def back_to_latest():
    """Migrating back to BEFORE unapplies every later migration: put the schema back at the leaves."""
    yield
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("back_to_latest")
def test_it_moves_typed_base_urls_and_provider_strings_onto_endpoints(settings, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    settings.OPENAI_BASE_URL = "http://gpu-box:8000/v1"
    settings.ANTHROPIC_BASE_URL = None
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    User = old.get_model("auth", "User")
    Task = old.get_model("benchmark", "Task")
    Agent = old.get_model("benchmark", "AgentConfig")
    Research = old.get_model("benchmark", "ResearchRun")
    old.get_model("benchmark", "ModelEndpoint").objects.all().delete()  # seeded again below, from this environment
    rita = User.objects.create(username="rita")
    task = Task.objects.create(slug="t", version_hash="0" * 64, kind="mlr", title="T")
    Agent.objects.create(name="a", kind="model", model="anthropic:claude-sonnet-4-5", created_by=rita)
    Agent.objects.create(
        name="b", kind="model", model="openai:gpt-4o", base_url="https://evil.example/v1", created_by=rita
    )
    Agent.objects.create(name="c", kind="model", model="compat:llama3", base_url="http://gpu-box:8000/v1/")
    Agent.objects.create(name="d", kind="model", model="mlgym:gpt4o")  # imported: never called
    Agent.objects.create(name="e", kind="baseline")
    Research.objects.create(
        task=task,
        owner=rita,
        backbone="compat:qwen",
        settings={"base_url": "https://evil.example/v1", "temperature": 0.2},
    )
    Research.objects.create(task=task, source="mlrbench", backbone="claude", settings={"model": "claude-3-7"})

    executor = MigrationExecutor(connection)
    executor.migrate(AFTER)

    seeded = {e.seed: e for e in ModelEndpoint.objects.exclude(seed="")}
    assert set(seeded) == {"anthropic", "openai", "compat"}
    assert (seeded["anthropic"].key_source, seeded["anthropic"].key_env_var) == ("env", "ANTHROPIC_API_KEY")
    assert seeded["openai"].base_url == seeded["compat"].base_url == "http://gpu-box:8000/v1"
    assert seeded["compat"].open_models and seeded["compat"].key_env_var == "OPENAI_API_KEY"
    agents = {a.name: a for a in AgentConfig.objects.select_related("endpoint")}
    assert agents["a"].endpoint == seeded["anthropic"]
    typed = agents["b"].endpoint
    assert (typed.scope, typed.owner.username, typed.provider, typed.base_url, typed.key_source) == (
        "personal", "rita", "compat", "https://evil.example/v1", "none"
    )  # fmt: skip
    assert agents["c"].endpoint == seeded["compat"]  # the admin's own URL (trailing slash aside)
    assert agents["d"].endpoint is None and agents["e"].endpoint is None
    mine = ResearchRun.objects.get(source="referee")
    assert mine.endpoint == typed  # the same researcher's same URL: one endpoint
    assert mine.settings == {"temperature": 0.2}
    assert ResearchRun.objects.get(source="mlrbench").endpoint is None


@pytest.mark.django_db
def test_it_seeds_the_defaults_once_and_leaves_the_admins_edits_alone(settings, monkeypatch):
    settings.ANTHROPIC_BASE_URL = settings.OPENAI_BASE_URL = None
    ModelEndpoint.objects.all().delete()
    first = endpoints_seed_from_settings()
    assert [e.name for e in first] == ["Anthropic", "OpenAI"]  # no OPENAI_BASE_URL: no compatible server
    ModelEndpoint.objects.filter(seed="openai").update(enabled=False, base_url="https://proxy.example/v1")
    assert endpoints_seed_from_settings() == []
    assert ModelEndpoint.objects.get(seed="openai").base_url == "https://proxy.example/v1"
    settings.OPENAI_BASE_URL = "http://localhost:11434/v1"
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    (compat,) = endpoints_seed_from_settings()
    assert (compat.name, compat.key_source, compat.open_models) == ("OpenAI-compatible server", "none", True)
    prices = {
        o["model"]: (o["input_per_mtok"], o["output_per_mtok"])
        for o in ModelEndpoint.objects.get(seed="anthropic").offers
    }
    assert prices["claude-sonnet-4-5"] == (3.0, 15.0)


@pytest.mark.django_db
def test_it_reports_the_endpoints_and_their_keys_in_seed_demo(settings, monkeypatch):
    from benchmark.demo import model_endpoints_seed

    settings.ANTHROPIC_BASE_URL = settings.OPENAI_BASE_URL = None
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-demo-key")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out = io.StringIO()
    model_endpoints_seed(out)
    text = out.getvalue()
    assert "model endpoint Anthropic: key from the environment variable ANTHROPIC_API_KEY (set)" in text
    assert "! model endpoint OpenAI: key from the environment variable OPENAI_API_KEY, which is not set" in text
    assert "sk-ant-demo-key" not in text
