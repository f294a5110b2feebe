"""The stepwise leaderboard in Debian's chromium: from the board to a task, its texts and both reviews."""

from __future__ import annotations

import pytest

from tests.judge.factories import make_judgment, make_stepwise_item, make_task, rubric

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CLAUDE, GEMINI = "anthropic:claude-3-7-sonnet-20250219", "google:gemini-2.5-pro-preview-03-25"
KEYS = ("consistency", "clarity", "novelty", "feasibility", "significance", "overall")


def test_it_drills_down_from_the_board_to_a_task_text_and_both_reviews(live_url, researcher):
    from playwright.sync_api import sync_playwright

    idea = rubric("idea")
    task = make_task("iclr2025_alpha")
    for model, (c, g) in {"model-a": (8, 7), "model-b": (4, 5)}.items():
        item = make_stepwise_item(task, model, "idea", f"# {model}: sparse retrieval\n\nWe minimise $x^2$.")
        make_judgment(item, idea, CLAUDE, dict.fromkeys(KEYS, c))
        make_judgment(item, idea, GEMINI, dict.fromkeys(KEYS, g))
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium",
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        try:
            page = browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto(f"{live_url}/accounts/login/?next=/judge/stepwise/idea/")
            page.fill("input[name=username]", researcher.username)
            page.fill("input[name=password]", f"pw-{researcher.username}")
            page.click("button[type=submit]")
            board = page.locator('table.stepwise-board[data-view="judges\' mean"]')
            board.wait_for()
            assert board.locator("tbody tr").first.get_attribute("data-model") == "model-a"
            assert "7.50" in board.locator("tbody tr").first.inner_text()
            page.click("#task-table a:has-text('iclr2025_alpha')")
            page.wait_for_selector("section.stepwise-item[data-model=model-a]")
            item = page.locator("section.stepwise-item[data-model=model-a]")
            text = item.locator("details.stepwise-text")
            assert not text.locator(".markdown h1").is_visible()
            text.locator("summary").click()
            assert text.locator(".markdown h1").inner_text() == "model-a: sparse retrieval"
            row = item.locator("table.stepwise-reviews tr[data-criterion=overall]")
            assert [c.strip() for c in row.locator("td strong").all_inner_texts()] == ["8", "7"]
            row.locator("td").first.locator("summary").click()
            assert row.locator("td").first.get_by_text(f"overall by {CLAUDE}").is_visible()
            assert errors == []
        finally:
            browser.close()
