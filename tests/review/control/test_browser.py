"""Close and reopen in Debian's chromium: a reviewer mid-review when the admin closes the campaign
gets a refused autosave with their changes kept on the device, then a read-only item and "closed
on ..." in the queue; after the reopen the kept changes are sent and the review is editable again."""

from __future__ import annotations

import pytest
from django.urls import get_resolver

from review.assignment.services import campaign_assign
from review.campaigns.services import campaign_create
from review.models import Assignment, Campaign, Review
from tests.review.factories import make_paper, make_rubric

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def _views_loaded() -> None:
    get_resolver().url_patterns  # noqa: B018  (see test_setup_browser: import views before the server)


def _login(context, base: str, user, next_url: str):
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.goto(f"{base}/accounts/login/?next={next_url}")
    page.fill("input[name=username]", user.username)
    page.fill("input[name=password]", f"pw-{user.username}")
    page.click("button[type=submit]")
    page.wait_for_url(f"{base}{next_url}")
    return page


def _saved(page) -> None:
    page.wait_for_function("document.getElementById('save-status').textContent.startsWith('Draft saved')")


def test_it_closes_to_read_only_and_reopens(live_url, browser, admin_user, reviewer) -> None:
    base = live_url
    campaign = campaign_create(
        name="Closing study", rubric=make_rubric(), artifacts=[make_paper(figures={})], reviewers=[reviewer],
        reviewers_per_item=1,
    )  # fmt: skip
    campaign_assign(campaign=campaign)
    mine = Assignment.objects.get(reviewer=reviewer)
    item_url = f"/review/a/{mine.code}/"
    desk = {"width": 1366, "height": 900}
    rev = _login(browser.new_context(viewport=desk), base, reviewer, item_url)
    adm = _login(browser.new_context(viewport=desk), base, admin_user, f"/review/campaigns/{campaign.code}/")

    rev.click("fieldset[data-key=clarity] label:has(input[value='6'])")
    rev.fill("#id_just_clarity", "Clear enough.")
    _saved(rev)

    adm.once("dialog", lambda dialog: dialog.accept())  # Close campaign asks first (static/js/confirm.js)
    adm.click("#close-campaign")
    adm.wait_for_selector("#reopen-campaign")
    assert "closed on" in adm.inner_text("#campaign-closed")
    # The reviewer's page was loaded open: the next autosave is refused, the change stays on the device.
    rev.fill("#id_just_clarity", "Clear enough, typed after the close.")
    rev.wait_for_function("document.getElementById('save-status').textContent.includes('campaign was closed')")
    assert Review.objects.get(assignment=mine).scores["clarity"]["justification"] == "Clear enough."

    rev.goto(f"{base}/review/")
    assert "closed on" in rev.inner_text(".campaign-closed")
    rev.click(f"a.queue-title[href='{item_url}']")
    rev.wait_for_selector("#locked-note")
    assert "This campaign was closed on" in rev.inner_text("#locked-note")
    assert rev.is_disabled("input[name=score_clarity][value='6']") and rev.is_checked(
        "input[name=score_clarity][value='6']"
    )
    assert rev.locator("#submit-review").count() == 0

    adm.click("#reopen-campaign")
    adm.wait_for_selector("#close-campaign")
    assert Campaign.objects.get(pk=campaign.pk).status == Campaign.Status.OPEN
    rev.reload()
    rev.wait_for_selector("#review-form", state="attached")
    assert rev.locator("#locked-note").count() == 0
    # The change typed while closed comes back from the device and is sent now.
    rev.wait_for_function("document.getElementById('save-status').textContent.startsWith('Draft saved')")
    assert rev.input_value("#id_just_clarity") == "Clear enough, typed after the close."
    assert (
        Review.objects.get(assignment=mine).scores["clarity"]["justification"] == "Clear enough, typed after the close."
    )
    assert rev.errors == [] and adm.errors == []
