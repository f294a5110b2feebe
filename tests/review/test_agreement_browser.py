"""The in-app agreement page in Debian's chromium: every chart drawn, nothing fetched from outside."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.core.management import call_command
from django.test import Client

from tests.review.test_agreement_campaign import make_campaign

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def test_it_draws_every_chart_with_no_outside_request(live_server, admin_user, monkeypatch) -> None:
    from playwright.sync_api import sync_playwright

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright's sync API keeps a loop in this thread
    call_command("vendor_static", verbosity=0)  # static/vendor/plotly.min.js from the installed package
    campaign = make_campaign()
    client = Client()
    client.force_login(admin_user)
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    requests: list[str] = []
    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        try:
            context = browser.new_context()
            context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": session, "url": live_server.url}])
            page = context.new_page()
            page.on("request", lambda r: requests.append(r.url))
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(f"{live_server.url}/agreement/{campaign.code}/?pairing=mlrbench&bootstrap=100")
            # Each chart has drawn its traces (SVG groups of points or bars), not just an empty frame.
            page.wait_for_function(
                "[...document.querySelectorAll('.js-plotly-plot')].filter(e => e.querySelector('g.trace')).length === 20"
            )
            drawn = page.eval_on_selector_all(".js-plotly-plot", "els => els.length")
            # Changing a setting recomputes through the form (a GET with the new parameters).
            page.select_option("#id_pairing", "strict")
            page.click("#agreement-settings button[type=submit]")
            page.wait_for_url("**pairing=strict**")
            page.wait_for_function("document.querySelectorAll('.js-plotly-plot').length === 20")
            href = page.get_attribute("#download-html", "href")
        finally:
            browser.close()
    assert errors == []
    assert drawn == 20
    assert "pairing=strict" in href
    outside = [u for u in requests if not u.startswith(live_server.url)]
    assert outside == []
