"""The in-app agreement page in Debian's chromium: a criterion's evidence and charts (and plotly.js
itself) arrive when it is opened, nothing is fetched from outside, and the page fits a phone."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.core.management import call_command
from django.test import Client

from tests.agreement.report.test_campaign import make_campaign

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def _session(admin_user) -> str:
    client = Client()
    client.force_login(admin_user)
    return client.cookies[settings.SESSION_COOKIE_NAME].value


DRAWN = "[...document.querySelectorAll('.js-plotly-plot')].filter(e => e.querySelector('g.trace')).length"


def test_it_draws_a_criterion_s_charts_when_it_is_opened(live_url, admin_user, monkeypatch) -> None:
    from playwright.sync_api import sync_playwright

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright's sync API keeps a loop in this thread
    call_command("vendor_static", verbosity=0)  # static/vendor/plotly.min.js from the installed package
    campaign = make_campaign()
    session = _session(admin_user)
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
            page.wait_for_load_state("networkidle")
            before = page.evaluate(DRAWN)
            unopened = [u for u in requests if "plotly" in u]  # the 4.6 MB library waits for a chart
            page.click("#crit-1 > summary")
            # Its four charts have drawn their traces (SVG groups of points or bars), not just empty frames.
            page.wait_for_function(f"{DRAWN} === 4")
            inside = page.eval_on_selector_all(
                "#crit-1 .js-plotly-plot", "els => els.filter(e => e.querySelector('g.trace')).map(e => e.id)"
            )
            table = page.is_visible("#crit-1 #evidence-1-2")
            fetched = [u for u in requests if "/criteria/" in u]
            # A second criterion draws with the library already there: it is fetched once per page.
            page.click("#crit-2 > summary")
            page.wait_for_function(f"{DRAWN} === 8")
            libraries = [u for u in requests if "plotly" in u]
            # Changing a setting recomputes through the form; the sections then fetch under the new settings.
            page.select_option("#id_pairing", "strict")
            page.click("#agreement-settings button[type=submit]")
            page.wait_for_url("**pairing=strict**")
            page.click("#crit-0 > summary")
            page.wait_for_function(f"{DRAWN} === 4")
            src = page.get_attribute("#crit-0", "data-src")
            href = page.get_attribute("#download-html", "href")
        finally:
            browser.close()
    assert errors == []
    assert before == 0
    assert inside == [f"agreement-chart-1-{k}" for k in range(4)] and table
    assert fetched == [f"{live_url}/agreement/{campaign.code}/criteria/1/?pairing=mlrbench&bootstrap=100"]
    assert unopened == []
    assert len(libraries) == 1 and "/static/vendor/plotly.min" in libraries[0]
    assert "pairing=strict" in href and "pairing=strict" in src
    outside = [u for u in requests if not u.startswith(live_url)]
    assert outside == []


def test_it_shows_the_verdict_first_and_every_cell_leads_to_its_evidence(live_url, admin_user, monkeypatch) -> None:
    from playwright.sync_api import sync_playwright

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    call_command("vendor_static", verbosity=0)
    campaign = make_campaign()
    session = _session(admin_user)
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
            # Each cell's evidence lies in a closed criterion section, fetched when the link is followed.
            cells = page.eval_on_selector_all(
                "table.verdict td a",
                "as => as.map(a => a.getAttribute('href')).map(h => [h, "
                "!!document.getElementById('crit-' + h.split('-')[1]), !!document.getElementById(h.slice(1))])",
            )
            target = cells[-1][0]
            page.click(f"table.verdict td a[href='{target}']")
            page.wait_for_function(f"location.hash === '{target}'")
            page.wait_for_timeout(300)  # the scroll to the anchor settles
            top = page.eval_on_selector(target, "e => e.getBoundingClientRect().top")
            heading = page.inner_text(target)
            opened = page.eval_on_selector(f"#crit-{target.split('-')[1]}", "d => d.open")
        finally:
            browser.close()
    assert errors == []
    assert first == ["H1#", "SECTION#verdict"] and in_view
    assert len(cells) == 15 and all(section and not loaded for _, section, loaded in cells)
    assert opened and -5 < top < 100 and heading.startswith("Judge view: mean of the judges")  # scrolled to it


def test_it_fits_a_phone_screen_with_a_criterion_open(live_url, admin_user, monkeypatch) -> None:
    from playwright.sync_api import sync_playwright

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    call_command("vendor_static", verbosity=0)
    campaign = make_campaign()
    session = _session(admin_user)
    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 390, "height": 844})
            context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": session, "url": live_url}])
            page = context.new_page()
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(f"{live_url}/agreement/{campaign.code}/?bootstrap=0")
            closed = page.evaluate("document.scrollingElement.scrollWidth")
            page.click("#crit-0 > summary")
            page.wait_for_function(f"{DRAWN} === 4")
            opened = page.evaluate("document.scrollingElement.scrollWidth")
            # The wide tables scroll inside their own box instead.
            boxes = page.eval_on_selector_all(
                "table", "ts => ts.filter(t => t.scrollWidth > t.clientWidth).map(t => getComputedStyle(t).overflowX)"
            )
        finally:
            browser.close()
    assert errors == []
    assert closed <= 390 and opened <= 390
    assert boxes and set(boxes) == {"auto"}


def test_it_shows_the_evidence_and_says_so_when_the_chart_library_fails(live_url, admin_user, monkeypatch) -> None:
    from playwright.sync_api import sync_playwright

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    call_command("vendor_static", verbosity=0)
    campaign = make_campaign()
    session = _session(admin_user)
    errors: list[str] = []
    answered: list[int] = []

    def first_fails(route) -> None:  # the first request for plotly.js fails, later ones reach the server
        if not answered:
            answered.append(404)
            route.fulfill(status=404, body="gone")
        else:
            answered.append(200)
            route.continue_()

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        try:
            context = browser.new_context()
            context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": session, "url": live_url}])
            page = context.new_page()
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.route("**/vendor/plotly.min*.js", first_fails)
            page.goto(f"{live_url}/agreement/{campaign.code}/?bootstrap=0")
            page.click("#crit-0 > summary")
            page.wait_for_selector("#crit-0 .evidence p.error[role=alert]")
            alert = page.inner_text("#crit-0 .evidence p.error")
            table = page.is_visible("#crit-0 #evidence-0-2")
            drawn = page.evaluate(DRAWN)
            # Closing and opening it again tries the library again and draws.
            page.click("#crit-0 > summary")
            page.click("#crit-0 > summary")
            page.wait_for_function(f"{DRAWN} === 4")
            cleared = page.locator("#crit-0 .evidence p.error").count()
        finally:
            browser.close()
    assert errors == []
    assert alert.startswith("The charts could not be drawn (the chart library could not be loaded from /static/")
    assert table and drawn == 0
    assert answered == [404, 200] and cleared == 0
