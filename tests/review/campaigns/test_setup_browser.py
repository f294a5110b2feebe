"""The admin's campaign set-up in Debian's chromium: the item picker lists the chosen stage's items
from the server, searches there, keeps picks across searches, drops another stage's picks; then reviewers are added on the campaign
page, the plan is previewed and applied, and an item is previewed as a reviewer sees it."""

from __future__ import annotations

import pytest

from benchmark.models import Artifact
from judge.models import Rubric
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
    idea_rubric = Rubric.objects.create(stage=Rubric.Stage.IDEA, version=1, name="Idea", instructions="Judge it.")
    papers = [make_paper(slug="iclr_vision_a", backbone="gemini"), make_paper(slug="iclr_speech_b", backbone="gemini")]
    idea = Artifact.objects.create(research_run=papers[0].research_run, stage=Artifact.Stage.IDEA, content="an idea")
    people = [make_reviewer("nina"), make_reviewer("omar")]
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    page.set_default_timeout(60_000)  # two shared cores
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    base = live_url
    _login(page, base, admin_user, "/review/campaigns/new")

    items = page.locator("#picker-items")
    results = items.locator("[data-candidate-results] li[data-pk]")
    page.fill("#id_name", "Browser study")
    page.fill("#id_reviewers_per_item", "2")
    # The stage's rubric is chosen, only the stage's items are listed (the idea is not, under paper).
    assert page.input_value("#id_stage") == "paper" and page.input_value("#id_rubric") == str(rubric.pk)
    assert results.count() == 2
    # The search asks the server; picks survive a search that hides them.
    items.locator("[data-candidate-search]").fill("vision")
    page.wait_for_function(
        "document.querySelectorAll('#picker-items [data-candidate-results] li[data-pk]').length === 1"
    )
    results.first.locator("input").check()
    items.locator("[data-candidate-search]").fill("speech")
    page.wait_for_function(
        "document.querySelector('#picker-items [data-candidate-results]').textContent.includes('speech')"
    )
    assert "1 selected" in items.locator("[data-candidate-count]").inner_text()
    assert items.locator("[data-candidate-chosen] li:visible").count() == 1  # the vision paper, off this page
    items.locator("[data-candidate-all]").check()
    assert "2 selected" in items.locator("[data-candidate-count]").inner_text()
    items.locator("[data-candidate-search]").fill("")
    page.wait_for_function(
        "document.querySelectorAll('#picker-items [data-candidate-results] li[data-pk]').length === 2"
    )
    # Switching the stage drops the picks of the other stage, says so, and lists the idea.
    page.select_option("#id_stage", "idea")
    page.wait_for_function("document.querySelector('#picker-items [data-candidate-results]').dataset.stage === 'idea'")
    assert results.count() == 1 and results.first.get_attribute("data-pk") == str(idea.pk)
    assert page.input_value("#id_rubric") == str(idea_rubric.pk)  # the stage's rubric follows it
    assert "2 selected item(s) of another stage were unselected" in items.locator("[data-candidate-note]").inner_text()
    page.select_option("#id_stage", "paper")
    assert page.input_value("#id_rubric") == str(rubric.pk)
    page.wait_for_function("document.querySelector('#picker-items [data-candidate-results]').dataset.stage === 'paper'")
    items.locator("[data-candidate-search]").fill("")
    page.wait_for_function(
        "document.querySelectorAll('#picker-items [data-candidate-results] li[data-pk]').length === 2"
    )
    items.locator("[data-candidate-all]").check()
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


def test_it_adds_items_to_a_campaign_from_the_server_paged_picker(live_url, browser, admin_user) -> None:  # noqa: F811
    from review.campaigns.candidates import PAGE_SIZE
    from review.campaigns.services import campaign_create

    campaign = campaign_create(name="Growing", rubric=make_rubric(), artifacts=[make_paper(slug="iclr_in_a")])
    outside = [make_paper(slug=f"iclr_out_{i:02d}") for i in range(PAGE_SIZE + 2)]
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    page.set_default_timeout(60_000)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    detail = f"/review/campaigns/{campaign.code}/"
    _login(page, live_url, admin_user, detail)
    items = page.locator("#picker-items")
    rows = "#picker-items [data-candidate-results] li[data-pk]"
    assert page.locator(rows).count() == PAGE_SIZE and "iclr_in_a" not in items.inner_text()
    # Next page: fetched in place (the URL stays), a pick there, then a search and a second pick.
    items.locator("[data-candidate-page]").click()
    page.wait_for_function(f"document.querySelectorAll('{rows}').length === 2")
    assert page.url == f"{live_url}{detail}"
    items.locator(f'input[value="{outside[-1].pk}"]').check()
    items.locator("[data-candidate-search]").fill("out_03")
    page.wait_for_function(f"document.querySelectorAll('{rows}').length === 1")
    items.locator(f'input[value="{outside[3].pk}"]').check()
    assert "2 selected" in items.locator("[data-candidate-count]").inner_text()
    assert items.locator("[data-candidate-chosen] li:visible").count() == 1  # the page-2 pick, kept
    page.click("text=Add the selected items")
    page.wait_for_selector("text=0 reviewer(s) and 2 item(s) added")
    assert set(campaign.items.values_list("artifact_id", flat=True)) == {
        campaign.items.get(artifact__research_run__task__slug="iclr_in_a").artifact_id,
        outside[3].pk,
        outside[-1].pk,
    }
    # The added items are no longer offered.
    items.locator("[data-candidate-search]").fill("out_03")
    page.wait_for_function(
        "document.querySelector('#picker-items [data-candidate-results]').textContent.includes('outside this campaign')"
    )
    assert errors == []
