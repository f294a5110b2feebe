"""The in-app agreement page in Debian's chromium: every chart drawn, nothing fetched from outside."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.core.management import call_command
from django.test import Client

from tests.agreement.report.test_campaign import make_campaign

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def test_it_draws_every_chart_with_no_outside_request(live_url, admin_user, monkeypatch) -> None:
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
            context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": session, "url": live_url}])
            page = context.new_page()
            page.on("request", lambda r: requests.append(r.url))
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(f"{live_url}/agreement/{campaign.code}/?pairing=mlrbench&bootstrap=100")
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
    outside = [u for u in requests if not u.startswith(live_url)]
    assert outside == []


def test_it_shows_the_verdict_first_and_every_cell_leads_to_its_evidence(live_url, admin_user, monkeypatch) -> None:
    from playwright.sync_api import sync_playwright

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    call_command("vendor_static", verbosity=0)
    campaign = make_campaign()
    client = Client()
    client.force_login(admin_user)
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": session, "url": live_url}])
            page = context.new_page()
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(f"{live_url}/agreement/{campaign.code}/?bootstrap=0")
            # The first things in the page's content: its title, then the verdict table.
            first = page.eval_on_selector(
                "#main",
                "m => [...m.children].filter(e => e.tagName !== 'UL').slice(0, 2).map(e => e.tagName + '#' + e.id)",
            )
            in_view = page.eval_on_selector("table.verdict", "t => t.getBoundingClientRect().top < window.innerHeight")
            cells = page.eval_on_selector_all(
                "table.verdict td a",
                "as => as.map(a => [a.getAttribute('href'), !!document.getElementById(a.getAttribute('href').slice(1))])",
            )
            target = cells[-1][0]
            page.click(f"table.verdict td a[href='{target}']")
            page.wait_for_function(f"location.hash === '{target}'")
            top = page.eval_on_selector(target, "e => e.getBoundingClientRect().top")
            heading = page.inner_text(target)
        finally:
            browser.close()
    assert errors == []
    assert first == ["H1#", "SECTION#verdict"] and in_view
    assert len(cells) == 15 and all(found for _, found in cells)
    assert -5 < top < 100 and heading.startswith("Judge view: mean of the judges")  # scrolled to it (sub-pixel)
