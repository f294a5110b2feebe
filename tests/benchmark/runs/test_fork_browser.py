"""In a real browser: "Fork from here" on a step of a finished run, with another model, then the
fork's page, the parent's list of forks and the comparison from the fork point.

The served stack (gunicorn + daphne, `live_url`) takes the fork; the endpoint the fork uses is a
real HTTP server of this test (tests/benchmark/llm/listener.py), which answers the endpoint check.
"""

from __future__ import annotations

import pytest

from benchmark.models import ModelEndpoint, Run
from tests.benchmark.llm.listener import Listener
from tests.benchmark.runs.test_browser import browser_page, signed_in  # noqa: F401  (fixture)
from tests.benchmark.runs.test_fork import finished_run

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_it_forks_from_a_step_and_compares_from_the_fork_point(live_url, browser_page, researcher, redis_client):
    parent = finished_run(researcher, steps=3)
    with Listener() as listener:
        ModelEndpoint.objects.create(
            name="Lab server",
            provider=ModelEndpoint.Provider.COMPAT,
            base_url=f"{listener.url}/v1",
            offers=[{"model": "llama-fork", "input_per_mtok": 0.1, "output_per_mtok": 0.2}],
        )
        page = signed_in(browser_page, live_url, researcher).new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(f"{live_url}/runs/{parent.code}/")
        page.locator("#step-2").get_by_role("link", name="Fork from here").click()
        page.wait_for_url(f"{live_url}/runs/{parent.code}/fork/?step=2")
        assert page.get_by_label("Fork after step").input_value() == "2"
        page.get_by_label("Endpoint and model").select_option(label="llama-fork ($0.1 / $0.2 per M tokens)")
        page.get_by_role("button", name="Start the fork").click()
        page.wait_for_url(f"{live_url}/runs/*/")
        fork = Run.objects.get(fork_of=parent)
        assert page.url.endswith(f"/runs/{fork.code}/")
        assert len(listener.requests) == 1  # the endpoint check, before anything was created
    assert "at step 2" in page.locator("#run-fork-of").inner_text()
    assert page.locator("#steps > li").count() == 2
    assert page.locator("#step-1 header").inner_text().count("from the parent run (step 1)") == 1
    page.locator("#compare-parent").click()
    page.wait_for_url(f"{live_url}/runs/compare/*")
    assert "run B was forked from run A at step 2" in page.locator("#compare-from").inner_text()
    assert page.locator("#compare-steps tbody tr").count() == 2  # steps 2 and 3 of the parent
    page.goto(f"{live_url}/runs/{parent.code}/")
    assert "at step 2" in page.locator("#run-forks").inner_text()
    assert errors == []


# ruff: noqa: F811  (pytest fixtures imported from other test modules are redefined as arguments)
