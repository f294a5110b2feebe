"""The reviewer's side in Debian's chromium: log in, open an item, score, reload, submit; typed URLs of others."""

from __future__ import annotations

import pytest

from review.assignment.services import campaign_assign
from review.campaigns.services import campaign_create
from review.models import Assignment, Review
from tests.review.factories import make_paper, make_reviewer, make_rubric

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def world(reviewer):
    other = make_reviewer("olga")
    campaign = campaign_create(
        name="browser", rubric=make_rubric(), artifacts=[make_paper(backbone="claude")], reviewers=[reviewer, other]
    )
    campaign_assign(campaign=campaign)
    return {"mine": Assignment.objects.get(reviewer=reviewer), "theirs": Assignment.objects.get(reviewer=other)}


def _login(page, base: str, user) -> None:
    page.goto(f"{base}/accounts/login/?next=/review/")
    page.fill("input[name=username]", user.username)
    page.fill("input[name=password]", f"pw-{user.username}")
    page.click("button[type=submit]")
    page.wait_for_url(f"{base}/review/")


def _wait_saved(page) -> None:
    page.wait_for_function("document.getElementById('save-status').textContent.startsWith('Draft saved')")


def test_it_scores_reloads_to_the_draft_and_submits(live_url, browser, reviewer, world) -> None:
    page = browser.new_page(viewport={"width": 390, "height": 844})  # a phone
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    _login(page, live_url, reviewer)
    page.click(f"a.queue-title[href='/review/a/{world['mine'].code}/']")
    page.wait_for_selector("#review-form", state="attached")
    assert page.title() == page.inner_text("#item-title") + " · Referee" and world["mine"].code not in page.title()
    page.locator(".paper img").scroll_into_view_if_needed()  # lazy-loaded
    page.wait_for_function(
        "(() => { const i = document.querySelector('.paper img'); return i.complete && i.naturalWidth > 0; })()"
    )
    page.click("#sheet-toggle")  # a phone: the rubric is a bottom sheet, opened from its Score bar
    # Keyboard: focus the clarity radios, pick 7 with the arrow keys, type a justification.
    page.focus("input[name=score_clarity][value='1']")
    for _ in range(6):
        page.keyboard.press("ArrowRight")
    page.fill("#id_just_clarity", "Well organised.")
    _wait_saved(page)
    page.reload()
    page.wait_for_selector("#review-form", state="attached")
    page.click("#sheet-toggle")
    assert page.is_checked("input[name=score_clarity][value='7']")
    assert page.input_value("#id_just_clarity") == "Well organised."
    for key in ("novelty", "soundness", "significance", "overall"):
        page.click(f"fieldset[data-key={key}] label:has(input[value='6'])")
        page.fill(f"#id_just_{key}", f"{key} is adequate.")
    page.select_option("#id_confidence", "4")
    page.click("#submit-review")
    page.wait_for_url(f"{live_url}/review/")
    assert "Review submitted" in page.content()
    review = Review.objects.get(assignment=world["mine"])
    assert review.status == Review.Status.SUBMITTED and review.score_of("clarity") == 7 and review.confidence == 4
    page.goto(f"{live_url}/review/a/{world['mine'].code}/")
    assert page.is_disabled("input[name=score_clarity][value='7']")
    assert errors == []


def test_it_keeps_typing_done_offline_and_syncs_it_later(live_url, browser, reviewer, world) -> None:
    context = browser.new_context()
    page = context.new_page()
    _login(page, live_url, reviewer)
    page.goto(f"{live_url}/review/a/{world['mine'].code}/")
    page.wait_for_selector("#review-form", state="attached")
    # The connection drops: every autosave fails.
    page.route("**/draft", lambda route: route.abort())
    page.fill("#id_just_novelty", "Written on a train.")
    page.wait_for_function("document.getElementById('save-status').textContent.startsWith('Offline')")
    assert not Review.objects.exists()
    # Back online, the reviewer reloads: the text comes back from this device and reaches the server.
    page.unroute("**/draft")
    page.reload()
    page.wait_for_selector("#review-form", state="attached")
    assert page.input_value("#id_just_novelty") == "Written on a train."
    _wait_saved(page)
    assert Review.objects.get().scores["novelty"]["justification"] == "Written on a train."
    context.close()


def test_it_shows_nothing_to_a_reviewer_typing_another_reviewers_url(live_url, browser, reviewer, world) -> None:
    page = browser.new_page()
    _login(page, live_url, reviewer)
    response = page.goto(f"{live_url}/review/a/{world['theirs'].code}/")
    assert response.status == 404
    assert page.locator("#review-form").count() == 0 and page.locator(".paper").count() == 0
