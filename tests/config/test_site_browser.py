"""In chromium, on the stack `make up` serves: the phone menu is one row, Close campaign asks first,
and a researcher's home is an overview of their work."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.test import Client

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


@pytest.fixture
def chromium(monkeypatch):
    from playwright.sync_api import sync_playwright

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright's sync API keeps a loop on this thread
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def signed_in(browser, live_url: str, user, **options):
    client = Client()
    client.force_login(user)
    context = browser.new_context(**options)
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": session, "url": live_url}])
    return context


def test_it_keeps_the_admin_menu_on_one_row_on_a_phone(live_url, chromium, admin_user):
    page = signed_in(chromium, live_url, admin_user, viewport={"width": 390, "height": 844}).new_page()
    page.goto(f"{live_url}/")
    tops = page.eval_on_selector_all(".nav a", "links => links.map((a) => Math.round(a.getBoundingClientRect().top))")
    assert len(tops) >= 10 and len(set(tops)) == 1  # one row, however many links an admin has
    assert page.eval_on_selector(".topbar", "bar => bar.getBoundingClientRect().height") < 110
    # The row scrolls sideways to its last link; the page itself does not get wider than the screen.
    assert page.eval_on_selector(".nav", "nav => nav.scrollWidth > nav.clientWidth")
    page.locator(".nav a", has_text="Admin").scroll_into_view_if_needed()
    assert page.locator(".nav a", has_text="Admin").is_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390


def test_it_asks_before_closing_a_campaign(live_url, chromium, admin_user, reviewer):
    from review.campaigns.services import campaign_create
    from review.models import Campaign
    from tests.review.factories import make_paper, make_rubric

    campaign = campaign_create(
        name="Confirm study", rubric=make_rubric(), artifacts=[make_paper(figures={})], reviewers=[reviewer],
        reviewers_per_item=1,
    )  # fmt: skip
    page = signed_in(chromium, live_url, admin_user).new_page()
    asked: list[str] = []

    def answer(dialog) -> None:
        asked.append(dialog.message)
        dialog.dismiss() if len(asked) == 1 else dialog.accept()

    page.on("dialog", answer)
    page.goto(f"{live_url}/review/campaigns/{campaign.code}/")
    page.click("#close-campaign")  # "no": nothing is posted
    page.wait_for_timeout(300)
    assert Campaign.objects.get(pk=campaign.pk).status == Campaign.Status.OPEN
    page.click("#close-campaign")
    page.wait_for_selector("#reopen-campaign")
    assert Campaign.objects.get(pk=campaign.pk).status == Campaign.Status.CLOSED
    assert len(asked) == 2 and asked[0].startswith("Close this campaign?")


def test_it_opens_a_researchers_home_on_their_work(live_url, chromium, researcher):
    from benchmark.models import Run
    from tests.benchmark.runs_support import make_run

    make_run(owner=researcher, status=Run.Status.FINISHED, exit_status="exit_cancelled", cost=0.5)
    page = signed_in(chromium, live_url, researcher).new_page()
    page.goto(f"{live_url}/")
    assert page.url == f"{live_url}/"
    assert "1 in all" in page.inner_text("#home-numbers")
    assert "cancelled" in page.inner_text("#home-latest") and "exit_cancelled" not in page.inner_text("#home-latest")
    page.get_by_role("link", name="Launch runs").click()
    page.wait_for_url(f"{live_url}/runs/launch/")
