"""The admin's campaign set-up in Debian's chromium: the item picker follows the stage, searches,
selects all shown and refuses a wrong pick before submit; then reviewers are added on the campaign
page, the plan is previewed and applied, and an item is previewed as a reviewer sees it."""

from __future__ import annotations

import pytest

from benchmark.models import Artifact
from review.models import Campaign
from tests.review.factories import make_paper, make_reviewer, make_rubric

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _login(page, base: str, user, next_url: str) -> None:
    page.goto(f"{base}/accounts/login/?next={next_url}")
    page.fill("input[name=username]", user.username)
    page.fill("input[name=password]", f"pw-{user.username}")
    page.click("button[type=submit]")
    page.wait_for_url(f"{base}{next_url}")


def test_it_sets_a_campaign_up_in_the_browser(live_url, browser, admin_user) -> None:  # noqa: F811
    rubric = make_rubric()
    papers = [make_paper(slug="iclr_vision_a", backbone="gemini"), make_paper(slug="iclr_speech_b", backbone="gemini")]
    idea = Artifact.objects.create(research_run=papers[0].research_run, stage=Artifact.Stage.IDEA, content="an idea")
    people = [make_reviewer("nina"), make_reviewer("omar")]
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    page.set_default_timeout(60_000)  # two shared cores
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    base = live_url
    _login(page, base, admin_user, "/review/campaigns/new")

    items = page.locator("#picker-artifacts")
    page.fill("#id_name", "Browser study")
    page.select_option("#id_rubric", str(rubric.pk))
    page.fill("#id_reviewers_per_item", "2")
    page.select_option("#id_stage", "paper")
    assert items.locator("li:visible").count() == 2  # the idea is not listed under stage paper
    items.locator("[data-picker-search]").fill("vision")
    assert items.locator("li:visible").count() == 1
    items.locator("[data-picker-search]").fill("")
    items.locator("[data-picker-all]").check()
    assert "2 selected" in items.locator("[data-picker-count]").inner_text()
    # Switching the stage drops the picks of the other stage, and says so.
    page.select_option("#id_stage", "idea")
    assert items.locator("li:visible").count() == 1
    assert "2 selected item(s) of another stage were unselected" in items.locator("[data-picker-note]").inner_text()
    page.select_option("#id_stage", "paper")
    items.locator("[data-picker-all]").check()
    # A wrong pick that got in anyway (here: set by script) is refused before the form is sent.
    page.evaluate(f"document.querySelector('#picker-artifacts input[value=\"{idea.pk}\"]').checked = true")
    page.click("button[type=submit].primary")
    assert "not of stage paper" in items.locator("[data-picker-note]").inner_text()
    assert page.url.endswith("/review/campaigns/new") and not Campaign.objects.exists()
    page.evaluate(f"document.querySelector('#picker-artifacts input[value=\"{idea.pk}\"]').checked = false")
    page.click("button[type=submit].primary")
    page.wait_for_url("**/plan")
    campaign = Campaign.objects.get(name="Browser study")
    assert campaign.items.count() == 2 and "no active reviewers" in page.inner_text("main")

    # Add both reviewers on the campaign page (search, select all shown), preview, apply.
    page.goto(f"{base}/review/campaigns/{campaign.code}/")
    members = page.locator("#picker-reviewers")
    members.locator("[data-picker-search]").fill("o")  # nina has no "o"; omar has
    assert members.locator("li:visible").count() == 1
    members.locator("[data-picker-search]").fill("")
    members.locator("[data-picker-all]").check()
    page.click("text=Add the selected reviewers")
    page.wait_for_selector("text=2 reviewer(s) and 0 item(s) added")
    page.click("text=Preview assignment plan")
    assert "4 new assignment(s) for 2 reviewer(s) of 2" in page.inner_text("#plan-summary")
    page.click("text=Apply this plan")
    page.wait_for_selector("text=4 assignment(s) made")
    assert campaign.assignments.count() == 4 and set(campaign.assignments.values_list("reviewer", flat=True)) == {
        p.pk for p in people
    }
    # Reassign sits behind a button; preview as a reviewer from the item link.
    assert page.locator("#open-assignments select:visible").count() == 0
    page.locator("#open-assignments tbody a").first.click()
    page.wait_for_selector("#preview-note")
    paper_text = page.inner_text("article.paper")
    assert "A paper on iclr_" in paper_text and "gemini" not in paper_text.lower()
    assert page.evaluate("Array.from(document.images).every(i => i.complete && i.naturalWidth > 0)")
    assert errors == []
