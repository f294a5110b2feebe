"""In a real browser: an admin adds an endpoint, tests it with one call, and launches a run with it.

The live server runs in a thread of the test process, so the provider's replies are faked at the
transport (the real SDK code runs) and the test needs no network.
"""

from __future__ import annotations

import pytest
from django.conf import settings
from django.test import Client

from benchmark.models import ModelEndpoint, Run
from tests.benchmark.runs_support import builtin_task

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

KEY = "sk-lab-BROWSER-KEY-55aa77"


@pytest.fixture
def browser_page(monkeypatch):
    from playwright.sync_api import sync_playwright

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright's sync API keeps a loop on this thread
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path="/usr/bin/chromium",
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        yield browser
        browser.close()


def test_it_adds_tests_and_launches_with_an_endpoint(live_server, browser_page, admin_user, fake_llm, redis_client):
    live_url = live_server.url
    builtin_task("prisoners_dilemma")
    client = Client()
    client.force_login(admin_user)
    context = browser_page.new_context()
    cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
    context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": cookie, "url": live_url}])
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))

    page.goto(f"{live_url}/")
    page.get_by_role("link", name="Model endpoints").click()  # the admin home tile
    page.get_by_role("link", name="Add an endpoint").click()
    page.get_by_label("Name", exact=True).fill("Lab vLLM")
    page.get_by_label("Provider").select_option("compat")
    page.get_by_label("Base URL").fill("http://gpu-box:8000/v1")
    page.get_by_label("Models offered").fill("llama-3.1-8b 0.1 0.2")
    page.get_by_label("Key source").select_option("stored")
    page.get_by_label("API key", exact=True).fill(KEY)
    page.get_by_role("button", name="Save").click()
    endpoint = ModelEndpoint.objects.get(name="Lab vLLM")
    page.wait_for_url(f"{live_url}/endpoints/{endpoint.code}/")
    assert "stored encrypted, saved" in page.content() and KEY not in page.content()

    page.get_by_role("button", name="Test endpoint").click()
    page.wait_for_selector("#last-check")
    assert page.locator("#last-check .badge").inner_text() == "answered"
    assert page.locator(".check-words").inner_text() == "ok"
    assert fake_llm.checks[-1]["url"] == "http://gpu-box:8000/v1/chat/completions"
    assert fake_llm.checks[-1]["headers"]["authorization"] == f"Bearer {KEY}"

    page.goto(f"{live_url}/runs/launch/")
    page.get_by_label("Iterated Prisoner's Dilemma (prisoners_dilemma)").check()
    page.get_by_label("Agent kind").select_option("model")
    page.get_by_label("Endpoint and model").select_option(f"{endpoint.code}/llama-3.1-8b")
    page.get_by_role("button", name="Launch").click()
    page.wait_for_url(f"{live_url}/runs/*/")
    run = Run.objects.get(owner=admin_user)
    assert run.agent.endpoint == endpoint and run.agent.model == "compat:llama-3.1-8b"
    assert page.locator("#run-endpoint").inner_text().startswith("Lab vLLM")
    assert len(fake_llm.checks) == 2  # the test button, then the launch's check
    assert errors == []
    context.close()
