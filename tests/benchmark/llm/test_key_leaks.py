"""The attack of issue 12, tried on every path that takes a model: a real listener on 127.0.0.1 (the
attacker's) never sees a server key, whatever a researcher submits.

The admin's endpoints point at a second listener standing in for the provider, so that the server's
keys are really in play (and seen there, where they belong). The server's environment also holds
the credentials the SDKs would pick up by themselves (ANTHROPIC_AUTH_TOKEN, ANTHROPIC_CUSTOM_HEADERS,
OPENAI_ORG_ID, OPENAI_PROJECT_ID). Nothing is faked: the real SDKs talk HTTP to the listeners.
"""

from __future__ import annotations

import importlib
import logging
from types import SimpleNamespace

import pytest
from django.urls import reverse

from benchmark.llm.seed import endpoints_seed_from_settings
from benchmark.models import AgentConfig, EndpointPolicy, ModelEndpoint, ResearchRun, Run
from benchmark.research.services import research_execute
from benchmark.runs.services import run_execute
from judge.models import Judgment
from judge.services import judgment_execute
from tests.benchmark.llm.listener import Listener
from tests.benchmark.runs_support import builtin_task, make_run
from tests.judge.factories import make_artifact, make_research_run, make_task, rubric

pytestmark = pytest.mark.django_db

SERVER_SECRETS = {
    "ANTHROPIC_API_KEY": "sk-ant-SERVER-KEY-0123456789",
    "OPENAI_API_KEY": "sk-SERVER-OPENAI-KEY-0123456789",
    "ANTHROPIC_AUTH_TOKEN": "SERVER-AUTH-TOKEN-0123456789",
    "ANTHROPIC_CUSTOM_HEADERS": "X-Server-Secret: SERVER-HEADER-0123456789",
    "OPENAI_ORG_ID": "org-SERVER-ORG-0123456789",
    "OPENAI_PROJECT_ID": "proj_SERVER_PROJECT_0123456789",
}
STORED_SERVER_KEY = "sk-SERVER-STORED-KEY-0123456789"
RESEARCHER_KEY = "sk-RESEARCHER-OWN-KEY-0123456789"
SECRETS = [*SERVER_SECRETS.values(), "SERVER-HEADER-0123456789", STORED_SERVER_KEY]
PROVIDERS = ["anthropic", "openai", "compat"]


def assert_no_server_secret(text: str) -> None:
    leaked = [secret for secret in SECRETS if secret in text]
    assert not leaked, f"server secrets leaked: {leaked}"


@pytest.fixture
def world(db, monkeypatch, settings, redis_client, caplog):
    caplog.set_level(logging.DEBUG)  # the SDKs' and httpx's own debug logs are searched for keys too
    for name, value in SERVER_SECRETS.items():
        monkeypatch.setenv(name, value)
    settings.LLM_MAX_RETRIES = 0
    settings.JUDGE_MAX_ATTEMPTS = 1
    settings.ANTHROPIC_BASE_URL = settings.OPENAI_BASE_URL = None
    with Listener() as provider, Listener() as attacker:
        endpoints_seed_from_settings()
        ModelEndpoint.objects.filter(seed="anthropic").update(base_url=provider.url)
        ModelEndpoint.objects.filter(seed="openai").update(base_url=provider.url + "/v1")
        vault = ModelEndpoint(
            name="vault",
            provider="compat",
            base_url=provider.url + "/v1",
            key_source="stored",
            offers=[{"model": "llama3"}],
        )
        vault.set_key(STORED_SERVER_KEY)
        vault.save()
        yield SimpleNamespace(
            provider=provider,
            attacker=attacker,
            shared={
                "anthropic": (ModelEndpoint.objects.get(seed="anthropic"), "claude-sonnet-4-5"),
                "openai": (ModelEndpoint.objects.get(seed="openai"), "gpt-4o"),
                "compat": (vault, "llama3"),
            },
            logs=caplog,
        )
        assert_no_server_secret(caplog.text)


def run_form(model: str, **extra: str) -> dict:
    return {
        "tasks": [builtin_task().pk], "agent_kind": "model", "model": model, "temperature": 0, "top_p": 0.95,
        "history_window": 5, "n_runs": 1, "max_steps": 5, "cost_limit": 1, "command_timeout": 60, **extra,
    }  # fmt: skip


def research_form(task, backbone: str, **extra: str) -> dict:
    return {
        "task": task.pk, "backbone": backbone, "mode": "stepwise", "stage": "idea",
        "literature_provider": "semantic_scholar", "temperature": 0, **extra,
    }  # fmt: skip


def allow_researcher_endpoints(networks: str = "") -> None:
    policy = EndpointPolicy.current()
    policy.researcher_endpoints, policy.allowed_networks = True, networks
    policy.save()


@pytest.mark.parametrize("provider", PROVIDERS)
def test_it_sends_a_typed_base_url_nothing_on_the_launch_forms(provider, world, researcher, client_for):
    client = client_for(researcher)
    mlr = make_task()
    typed = world.attacker.url + "/v1"
    # The old attack: provider:model with a base_url. Neither field exists any more.
    legacy = f"{provider}:{'claude-sonnet-4-5' if provider == 'anthropic' else 'gpt-4o'}"
    page = client.post("/runs/launch/", run_form(legacy, base_url=typed)).content.decode()
    assert "choose an endpoint and a model from the list" in page and not Run.objects.exists()
    page = client.post(reverse("benchmark:research_new"), research_form(mlr, legacy, base_url=typed)).content.decode()
    assert "Select a valid choice" in page and not ResearchRun.objects.exists()
    # A listed endpoint with a base_url smuggled along: the call goes to the admin's URL, never the typed one.
    endpoint, model = world.shared[provider]
    choice = f"{endpoint.code}/{model}"
    assert client.post("/runs/launch/", run_form(choice, base_url=typed, base_url_override=typed)).status_code == 302
    response = client.post(reverse("benchmark:research_new"), research_form(mlr, choice, base_url=typed))
    assert response.status_code == 302
    assert Run.objects.get().agent.endpoint == endpoint == ResearchRun.objects.get().endpoint
    assert world.attacker.requests == []
    assert len(world.provider.requests) == 2  # the two launch checks, at the admin's URL, with the server's key
    expected = {"anthropic": SERVER_SECRETS["ANTHROPIC_API_KEY"], "openai": SERVER_SECRETS["OPENAI_API_KEY"]}
    assert expected.get(provider, STORED_SERVER_KEY) in world.provider.seen()


def test_it_keeps_researcher_endpoints_off_until_an_admin_allows_them(world, researcher, client_for):
    client = client_for(researcher)
    assert client.get(reverse("benchmark:endpoint_new")).status_code == 403
    form = {"name": "mine", "provider": "compat", "base_url": world.attacker.url + "/v1", "offers_text": "m"}
    assert client.post(reverse("benchmark:endpoint_new"), form).status_code == 403
    # One made while they were allowed: unusable now, on every path.
    mine = ModelEndpoint.objects.create(
        name="mine", scope="personal", owner=researcher, provider="compat", base_url=world.attacker.url + "/v1",
        offers=[{"model": "m"}],
    )  # fmt: skip
    page = client.post("/runs/launch/", run_form(f"{mine.code}/m")).content.decode()
    assert "choose an endpoint and a model from the list" in page
    config = AgentConfig.objects.create(name="compat:m", model="compat:m", endpoint=mine, created_by=researcher)
    run = make_run(owner=researcher, task=builtin_task(), agent_config=config)
    run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == Run.Status.FAILED and "an admin has turned those off" in run.error
    paper = make_artifact(make_research_run(owner=researcher), "paper", "# Paper")
    judgment = Judgment.objects.create(
        artifact=paper, rubric=rubric("end2end"), judge_model="compat:m", endpoint=mine, requested_by=researcher
    )
    assert "an admin has turned those off" in judgment_execute(judgment=judgment).error
    assert world.attacker.requests == []


def test_it_refuses_internal_addresses_for_researcher_endpoints(world, researcher, client_for):
    allow_researcher_endpoints()
    client = client_for(researcher)
    port = world.attacker.port
    for url in [
        f"{world.attacker.url}/v1",
        f"http://localhost:{port}/v1",
        f"http://2130706433:{port}/v1",
        f"http://0x7f000001:{port}/v1",
        f"http://[::ffff:127.0.0.1]:{port}/v1",
        f"http://[::1]:{port}/v1",
        "http://169.254.169.254/latest",
        "http://10.0.0.1/v1",
        "http://172.16.0.1/v1",
        "http://192.168.0.1/v1",
        "http://100.64.0.1/v1",
        "http://0.0.0.0/v1",
    ]:
        form = {"name": "mine", "provider": "compat", "base_url": url, "offers_text": "m", "key_source": "none"}
        response = client.post(reverse("benchmark:endpoint_new"), form)
        assert response.status_code == 400, url
        assert "public addresses only" in response.content.decode(), url
    assert not ModelEndpoint.objects.filter(scope="personal").exists()
    assert world.attacker.requests == []


@pytest.mark.parametrize("provider", PROVIDERS)
def test_it_sends_no_server_key_to_a_researcher_endpoint_on_any_path(provider, world, researcher, client_for):
    allow_researcher_endpoints("127.0.0.0/8")  # the admin opens loopback, so the attacker's listener is reachable
    client = client_for(researcher)
    base = world.attacker.url + ("" if provider == "anthropic" else "/v1")
    form = {
        "name": "mine", "provider": provider, "base_url": base, "offers_text": "m",
        "key_source": "env", "key_env_var": "ANTHROPIC_API_KEY", "enabled": "on",
    }  # fmt: skip
    response = client.post(reverse("benchmark:endpoint_new"), form)  # asking for a server variable
    assert response.status_code == 400 and "Select a valid choice" in response.content.decode()
    response = client.post(
        reverse("benchmark:endpoint_new"), {**form, "key_source": "stored", "api_key": RESEARCHER_KEY}
    )
    assert response.status_code == 302
    mine = ModelEndpoint.objects.get(scope="personal")
    assert (mine.owner, mine.key_source, mine.key_env_var) == (researcher, "stored", "")
    choice = f"{mine.code}/m"

    # 1. the endpoint page's test button
    assert client.post(reverse("benchmark:endpoint_test", args=[mine.code]), {"model": "m"}).status_code == 302
    # 2. run launch (the launch check), then the worker's check before the sandbox (answered 401: the run fails there)
    assert client.post("/runs/launch/", run_form(choice)).status_code == 302
    world.attacker.status = 401
    run_execute(run_id=Run.objects.get().pk)
    run = Run.objects.get()
    assert run.status == Run.Status.FAILED and base in run.error and "listener says no" in run.error
    world.attacker.status = 200
    # 3. research launch (its check) and the idea stage
    assert client.post(reverse("benchmark:research_new"), research_form(make_task(), choice)).status_code == 302
    research = research_execute(research_run_id=ResearchRun.objects.get().pk)
    assert research.artifacts.get(stage="idea").status == "done"
    # 4. the judge, requested from the form
    paper = make_artifact(make_research_run(owner=researcher, task=make_task("iclr2025_judged")), "paper", "# P")
    request = {"rubric": str(rubric("end2end").code), "judge_models": [choice]}
    assert client.post(reverse("judge:judgment_request", args=[paper.code]), request).status_code == 302
    judgment = judgment_execute(judgment=Judgment.objects.get(artifact=paper))
    assert judgment.endpoint == mine and judgment.attempts == 1

    assert len(world.attacker.requests) == 6
    for seen in world.attacker.requests:
        credentials = {k: v for k, v in seen["headers"].items() if k in ("authorization", "x-api-key", "api-key")}
        assert set(credentials.values()) <= {RESEARCHER_KEY, f"Bearer {RESEARCHER_KEY}"}, credentials
        assert not {"x-server-secret", "openai-organization", "openai-project"} & set(seen["headers"])
    assert_no_server_secret(world.attacker.seen())
    assert world.provider.requests == []
    # Nor does the researcher's own key show on any page.
    for url in [reverse("benchmark:endpoint_detail", args=[mine.code]), reverse("benchmark:endpoint_list")]:
        assert RESEARCHER_KEY not in client.get(url).content.decode()
    assert RESEARCHER_KEY not in world.logs.text


def test_it_gives_typed_urls_of_existing_rows_no_key_after_the_migration(world, researcher):
    """Agent configs that carried a typed base_url become keyless personal endpoints behind the guard."""
    migration = importlib.import_module("benchmark.migrations.0004_seed_endpoints_and_link_agents")
    endpoint = migration._endpoint_for(ModelEndpoint, "openai:gpt-4o", world.attacker.url + "/v1", researcher.pk)
    assert (endpoint.scope, endpoint.owner, endpoint.provider, endpoint.key_source, endpoint.open_models) == (
        "personal", researcher, "compat", "none", True
    )  # fmt: skip
    same = migration._endpoint_for(ModelEndpoint, "openai:gpt-4o", world.shared["openai"][0].base_url, researcher.pk)
    assert same == world.shared["openai"][0]  # a base_url equal to the admin's is the admin's endpoint
    allow_researcher_endpoints("127.0.0.0/8")
    config = AgentConfig.objects.create(name="openai:gpt-4o", model="openai:gpt-4o", endpoint=endpoint)
    world.attacker.status = 401
    run = make_run(owner=researcher, task=builtin_task(), agent_config=config)
    run_execute(run_id=run.pk)
    (request,) = world.attacker.requests
    assert request["path"] == "/v1/chat/completions" and b'"model": "gpt-4o"' in request["body"].replace(
        b'":"', b'": "'
    )
    assert "authorization" not in request["headers"] and "x-api-key" not in request["headers"]
    assert_no_server_secret(world.attacker.seen())


def test_it_redacts_a_key_that_a_provider_echoes_back(world, admin_user, client_for):
    """An endpoint that quotes the key in its error: the page, the run and the log show it redacted."""
    endpoint, model = world.shared["openai"]
    world.provider.status, world.provider.echo = 401, True
    client = client_for(admin_user)
    client.post(reverse("benchmark:endpoint_test", args=[endpoint.code]), {"model": model})
    page = client.get(reverse("benchmark:endpoint_detail", args=[endpoint.code])).content.decode()
    assert "Incorrect API key provided: Bearer [redacted key]" in page
    config = AgentConfig.objects.create(name="openai:gpt-4o", model="openai:gpt-4o", endpoint=endpoint)
    run = make_run(owner=admin_user, task=builtin_task(), agent_config=config)
    run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == Run.Status.FAILED and "[redacted key]" in run.error
    assert SERVER_SECRETS["OPENAI_API_KEY"] in world.provider.seen()  # it was sent, and echoed
    exports = [client.get(f"/runs/{run.code}/{name}") for name in ("", "log.txt", "export.traj")]
    assert [e.status_code for e in exports] == [200, 200, 200]
    texts = [b"".join(e.streaming_content if e.streaming else [e.content]).decode() for e in exports]
    for text in (page, run.error, str(run.params), *texts):
        assert_no_server_secret(text)
