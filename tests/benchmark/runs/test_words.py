"""What people read instead of internal values: exit statuses in words (the stored MLGym value as
the hover title), agents by model and endpoint, the unnamed imported method, the admin's labels."""

from __future__ import annotations

import pytest

from benchmark.models import AgentConfig, ModelEndpoint, Run
from benchmark.runs import progress
from benchmark.runs.exits import exit_text
from benchmark.templatetags.run_numbers import method_words
from tests.benchmark.runs_support import agent, make_run

pytestmark = pytest.mark.django_db


def test_it_says_exit_statuses_in_words_and_keeps_an_unknown_one_as_it_is():
    assert exit_text("exit_cancelled") == "cancelled"
    assert exit_text("autosubmission (max_steps)") == "submitted automatically at the step limit"
    assert exit_text("autosubmission (exit_cost)") == "submitted automatically (exit cost)"
    assert exit_text("") == "–"
    assert exit_text("some_import_value") == "some_import_value"  # never a guess


def test_it_shows_words_for_the_exit_and_the_agent_on_the_run_page_and_list(researcher, client_for):
    endpoint = ModelEndpoint.objects.create(name="Lab vLLM", provider="compat", base_url="http://gpu-box:8000/v1")
    config = agent(AgentConfig.Kind.MODEL, model="compat:ux3-agent", endpoint=endpoint)
    run = make_run(owner=researcher, agent_config=config, status=Run.Status.CANCELLED, exit_status="exit_cancelled")
    page = client_for(researcher).get(f"/runs/{run.code}/").content.decode()
    assert '<dd id="run-exit" title="exit_cancelled">cancelled</dd>' in page
    assert "ux3-agent on Lab vLLM" in page and "compat:ux3-agent" not in page.split("</h1>")[0]
    assert progress.run_payload(run)["exit_text"] == "cancelled"  # what run.js shows once it ends live
    listing = client_for(researcher).get("/runs/").content.decode()
    assert '<span title="exit_cancelled">cancelled</span>' in listing and "ux3-agent on Lab vLLM" in listing
    baseline = make_run(owner=researcher)
    assert "starter code (no model)" in client_for(researcher).get(f"/runs/{baseline.code}/").content.decode()


def test_it_names_the_unnamed_imported_method_in_words():
    assert method_words("unknown").startswith("model not named")
    assert method_words("Llama3-405b") == "Llama3-405b"


def test_it_calls_the_endpoint_policy_by_its_name_in_the_admin(admin_user, client_for):
    page = client_for(admin_user).get("/admin/benchmark/").content.decode()
    assert "Endpoint policys" not in page and "Endpoint policy" in page


def test_it_leaves_endpoints_without_a_key_out_of_the_launch_form_and_says_why(
    researcher, client_for, default_endpoints, monkeypatch
):
    monkeypatch.delenv("OPENAI_API_KEY")  # the OpenAI endpoint's key comes from this variable
    page = client_for(researcher).get("/runs/launch/").content.decode()
    anthropic, openai = default_endpoints["anthropic"], default_endpoints["openai"]
    assert f'value="{anthropic.code}/' in page and f'value="{openai.code}/' not in page
    assert "no key configured" not in page
    assert "Not offered until their key is configured: OpenAI." in page
