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


def test_it_draws_the_profiles_and_the_analysis_charts(live_server, researcher, toy_task):
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
            page.goto(f"{live_server.url}/accounts/login/?next=/leaderboards/")
            page.fill("input[name=username]", researcher.username)
            page.fill("input[name=password]", f"pw-{researcher.username}")
            page.click("button[type=submit]")
            page.wait_for_selector("#aup-table")
            for chart in ("chart-profiles", "chart-aup-cost", "chart-exit-status", "chart-actions"):
                page.wait_for_selector(f"#{chart}[data-drawn=true] .main-svg")
            assert page.locator("#aup-table tbody tr").count() == 3  # rita-agent, gpt-o1, baseline
            assert page.locator("#aup-table tbody tr").first.get_attribute("data-method") == "rita-agent"
            assert errors == []
        finally:
            browser.close()
