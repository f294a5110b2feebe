"""The leaderboard page in Debian's chromium: the plotly charts are drawn from vendored plotly.js."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings

from benchmark.models import Run, Step, Task
from tests.benchmark.leaderboards.test_pages import make_run

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def toy_task() -> Task:
    return Task.objects.create(
        slug="toy", version_hash="1" * 64, kind=Task.Kind.MLGYM, title="Toy", metric="acc", baseline_scores={"acc": 0.5}
    )


def test_it_draws_the_profiles_and_the_analysis_charts(live_url, researcher, toy_task):
    vendored = Path(settings.BASE_DIR) / "static" / "vendor" / "plotly.min.js"
    if not vendored.exists():
        pytest.fail(f"{vendored} is missing: run `manage.py vendor_static` (make test does)")
    from playwright.sync_api import sync_playwright

    mine = make_run(toy_task, method="rita-agent", owner=researcher, attempt=0.9, cost=1.0, exit_status="submitted")
    make_run(toy_task, method="gpt-o1", attempt=0.6, source=Run.Source.MLGYM)
    Step.objects.create(run=mine, index=0, action="validate")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium",
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        try:
            page = browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto(f"{live_url}/accounts/login/?next=/leaderboards/")
            page.fill("input[name=username]", researcher.username)
            page.fill("input[name=password]", f"pw-{researcher.username}")
            page.click("button[type=submit]")
            page.wait_for_selector("#aup-table")
            for chart in ("chart-profiles", "chart-aup-cost", "chart-exit-status", "chart-actions"):
                page.wait_for_selector(f"#{chart}[data-drawn=true] .main-svg")
            page.wait_for_selector("#chart-task-scores[data-drawn=toy] .main-svg")
            assert page.locator("#chart-task-scores .shapelayer path").count() == 1  # the baseline line
            assert page.locator("#task-baseline-note").inner_text() == "Dashed line: the task's baseline score."
            assert page.locator("#aup-table tbody tr").count() == 3  # rita-agent, gpt-o1, baseline
            assert page.locator("#aup-table tbody tr").first.get_attribute("data-method") == "rita-agent"
            assert errors == []
        finally:
            browser.close()


LABEL_BOXES = """(selector) => {
  const svg = document.querySelector(selector + ' .main-svg').getBoundingClientRect();
  const boxes = [...document.querySelectorAll(['.xtick text', '.ytick text', '.legendtext'].map((s) => selector + ' ' + s).join(', '))]
    .map((el) => el.getBoundingClientRect()).map((r) => [r.left, r.top, r.right, r.bottom]);
  const texts = [...document.querySelectorAll(['.xtick text', '.ytick text', '.legendtext'].map((s) => selector + ' ' + s).join(', '))].map((el) => el.textContent);
  return {svg: [svg.left, svg.top, svg.right, svg.bottom], boxes, texts};
}"""


def overlap(a: list[float], b: list[float]) -> bool:
    return a[0] < b[2] - 1 and b[0] < a[2] - 1 and a[1] < b[3] - 1 and b[1] < a[3] - 1


def test_it_filters_with_chips_keeps_the_method_column_in_view_and_draws_labels_apart(live_url, researcher, toy_task):
    from playwright.sync_api import sync_playwright

    names = [f"a-rather-long-method-name-number-{i}" for i in range(8)]
    for index, name in enumerate(names):
        make_run(toy_task, method=name, owner=researcher, attempt=0.6 + index / 100, cost=1.0, exit_status="submitted")
    for index in range(12):  # wide enough to scroll sideways
        task = Task.objects.create(
            slug=f"wide-task-{index:02d}", version_hash=f"{index:064d}", kind=Task.Kind.MLGYM, title="w", metric="acc"
        )
        make_run(task, method=names[0], owner=researcher, attempt=0.5)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium",
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        try:
            page = browser.new_page(viewport={"width": 1000, "height": 900})
            page.goto(f"{live_url}/accounts/login/?next=/leaderboards/")
            page.fill("input[name=username]", researcher.username)
            page.fill("input[name=password]", f"pw-{researcher.username}")
            page.click("button[type=submit]")
            page.wait_for_selector("#chart-exit-status[data-drawn=true] .main-svg")
            for chart in ("#chart-exit-status", "#chart-aup-cost", "#chart-profiles"):
                found = page.evaluate(LABEL_BOXES, chart)
                svg, boxes = found["svg"], found["boxes"]
                assert len(boxes) >= 8, chart
                for box in boxes:  # not cut at the chart's edges
                    assert box[0] >= svg[0] - 1 and box[2] <= svg[2] + 1 and box[3] <= svg[3] + 1, (chart, box)
                for i, a in enumerate(boxes):
                    assert not any(overlap(a, b) for b in boxes[i + 1 :]), (chart, a, found["texts"])
            # The method column stays put while the wide table scrolls sideways.
            wrap = page.locator("#aup-table").locator("xpath=..")
            method = page.locator("#aup-table tbody tr").first.locator("th.sticky-col")
            task_cell = page.locator("#aup-table tbody tr").first.locator("td[data-task]").first
            before = task_cell.bounding_box()["x"]
            wrap.evaluate("(el) => { el.scrollLeft = 600; }")
            assert task_cell.bounding_box()["x"] < before - 100  # the table did scroll
            assert abs(method.bounding_box()["x"] - wrap.bounding_box()["x"]) < 2  # the method column did not
            # Chips: a plain click ticks one, the search box hides the others, Apply ranks just it.
            fieldset = page.locator("fieldset[data-chips=methods]")
            fieldset.locator(".chip-search").fill("number-3")
            assert fieldset.locator("label.chip:visible").count() == 1
            fieldset.locator("label.chip:visible").click()
            page.click("#leaderboard-filters button[type=submit]")
            page.wait_for_selector("#aup-table")
            assert "methods=a-rather-long-method-name-number-3" in page.url
            rows = page.locator("#aup-table tbody tr")
            assert [rows.nth(i).get_attribute("data-method") for i in range(rows.count())] == [names[3], "baseline"]
            # The method name links to the runs behind it.
            page.click(f"#aup-table th.sticky-col a:text('{names[3]}')")
            page.wait_for_selector("#cell-runs")
            assert page.locator("#cell-runs tbody tr").count() == 1
        finally:
            browser.close()
