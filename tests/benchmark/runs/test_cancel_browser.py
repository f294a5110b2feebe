# ruff: noqa: F811  (pytest fixtures imported from other test modules are redefined as arguments)
"""In a real browser: Cancel asks to confirm, and the page ends with the database's step count and cost.

The served stack (gunicorn + daphne, `live_url`) takes the cancel and relays the steps; the worker
runs in a thread of this process, in the real Docker sandbox, its model faked at the HTTP transport.
"""

from __future__ import annotations

import pytest
from django.conf import settings
from django.test import Client

from benchmark.llm.transport import override_transport
from benchmark.models import Run
from tests.benchmark.runs.cancel_support import HeldCall, Worker, llm_run, reply
from tests.benchmark.runs.test_browser import browser_page, signed_in  # noqa: F401  (fixture)
from tests.benchmark.runs_support import builtin_task, make_run

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.mark.docker
def test_it_cancels_after_confirming_and_ends_with_the_databases_numbers(
    live_url, browser_page, researcher, fake_llm, redis_client
):
    fake_llm.openai(reply("echo one"), tokens_in=1000, tokens_out=100)
    fake_llm.openai(reply("echo two"), tokens_in=2000, tokens_out=200)
    run = llm_run(researcher, builtin_task("prisoners_dilemma"))
    page = signed_in(browser_page, live_url, researcher).new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    dialogs: list[str] = []

    def answer(dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss() if len(dialogs) == 1 else dialog.accept()  # first "no", then "yes"

    page.on("dialog", answer)
    page.goto(f"{live_url}/runs/{run.code}/")
    held = HeldCall(fake_llm, at=2)
    with override_transport(held):
        worker = Worker(run).start()
        page.wait_for_selector("#step-1", timeout=120_000)
        assert held.entered.wait(120)  # the model thinks about step 2
        page.locator("#cancel-form button").click()  # dismissed: nothing happens
        assert Run.objects.get(pk=run.pk).status == Run.Status.RUNNING
        with page.expect_navigation():
            page.locator("#cancel-form button").click()
        assert Run.objects.get(pk=run.pk).status == Run.Status.CANCELLING
        assert "Cancel requested" in page.content()
        held.release.set()  # the model answers after the cancel: its command must not run
        page.wait_for_function("document.getElementById('live-state').textContent === 'cancelled'", timeout=60_000)
        assert worker.join(60)
    assert len(dialogs) == 2 and dialogs[0].startswith("Cancel this run?")
    run.refresh_from_db()
    assert (run.status, run.step_count, run.api_calls) == (Run.Status.CANCELLED, 1, 2)
    assert page.locator("#steps > li").count() == run.step_count
    assert page.locator("#run-steps").inner_text() == str(run.step_count)
    assert page.locator("#run-cost").inner_text() == f"${run.cost:.4f}"
    assert page.locator("#run-tokens").inner_text() == f"{run.tokens_sent} / {run.tokens_received}"
    assert page.locator("#run-unrecorded").is_visible()
    assert page.locator("#run-unrecorded-text").inner_text().startswith("$0.0090 (2000 / 200 tokens, 1 call)")
    assert page.locator("#cancel-form").count() == 0
    page.reload()  # the same, served from the database
    assert page.locator("#run-unrecorded-text").inner_text().startswith("$0.0090 (2000 / 200 tokens, 1 call)")
    assert not errors


def test_it_asks_on_a_page_of_its_own_without_javascript(live_url, browser_page, researcher, redis_client):
    run = make_run(owner=researcher, status=Run.Status.RUNNING)
    client = Client()
    client.force_login(researcher)
    context = browser_page.new_context(java_script_enabled=False)
    cookie = {"name": settings.SESSION_COOKIE_NAME, "value": client.cookies[settings.SESSION_COOKIE_NAME].value}
    context.add_cookies([{**cookie, "url": live_url}])
    page = context.new_page()
    page.goto(f"{live_url}/runs/{run.code}/")
    page.locator("#cancel-form button").click()
    page.wait_for_selector("#cancel-confirm")
    assert Run.objects.get(pk=run.pk).status == Run.Status.RUNNING  # asked, nothing written
    page.locator("#cancel-confirm-button").click()
    page.wait_for_url(f"{live_url}/runs/{run.code}/")
    assert Run.objects.get(pk=run.pk).status == Run.Status.CANCELLING
    assert "Cancel requested" in page.content()
    context.close()
