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


def test_it_shows_fork_links_when_a_live_run_ends_without_a_reload_to_its_owner_only(
    live_url, browser_page, researcher, other_researcher, redis_client
):
    from django.utils import timezone

    from benchmark.models import RunShare
    from benchmark.runs import progress

    run = finished_run(researcher, steps=2)
    Run.objects.filter(pk=run.pk).update(status=Run.Status.RUNNING, exit_status="", started_at=timezone.now())
    run.refresh_from_db()
    RunShare.objects.create(run=run, user=other_researcher, shared_by=researcher)  # may see it, not fork it
    pages = {}
    for user in (researcher, other_researcher):
        page = signed_in(browser_page, live_url, user).new_page()
        page.goto(f"{live_url}/runs/{run.code}/")
        page.wait_for_function("document.getElementById('live-state').textContent === 'live'", timeout=10_000)
        assert page.locator(".fork-here").count() == 0 and page.locator("#fork-link").count() == 0  # not yet
        pages[user.username] = page
    # What the run's worker does once it has stopped (benchmark.runs.services._run_finish).
    Run.objects.filter(pk=run.pk).update(
        status=Run.Status.FINISHED, exit_status="submitted", finished_at=timezone.now()
    )
    run.refresh_from_db()
    progress.run_status_send(run)
    for page in pages.values():
        page.wait_for_function("document.getElementById('live-state').textContent === 'finished'", timeout=10_000)
    owner = pages[researcher.username]
    links = owner.locator("#steps .fork-here")
    assert links.count() == 2
    assert links.nth(1).get_attribute("href") == f"/runs/{run.code}/fork/?step=2"
    assert owner.locator("#run-actions #fork-link").count() == 1
    owner.locator("#step-2").get_by_role("link", name="Fork from here").click()
    owner.wait_for_url(f"{live_url}/runs/{run.code}/fork/?step=2")
    viewer = pages[other_researcher.username]
    assert viewer.locator(".fork-here").count() == 0 and viewer.locator("#fork-link").count() == 0
    assert viewer.locator("#run-actions #replay-form").count() == 1  # the end did reach this page


# ruff: noqa: F811  (pytest fixtures imported from other test modules are redefined as arguments)
