"""The run page's charts in chromium: the last x label whole, token counts as 1.47k (not 1.47e+3) on
the axis and in the hover text, a title per chart, and an empty run saying "No step recorded yet." once."""

from __future__ import annotations

import re

import pytest

from benchmark.models import Run
from benchmark.runs import progress
from benchmark.tasks.evaluation import ScoreResult
from tests.benchmark.runs.test_browser import browser_page, signed_in  # noqa: F401  (fixture)
from tests.benchmark.runs_support import make_run

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_it_draws_whole_labels_titles_and_readable_numbers(live_url, browser_page, researcher, redis_client):
    run = make_run(owner=researcher, status=Run.Status.RUNNING)
    for i in range(1, 14):
        scored = {"score_kind": "validate", "score": ScoreResult(split="dev", metrics={"s": 1470.4}, primary=1470.4)}
        progress.step_append(
            run=run, thought="t", action=f"echo {i}", observation=str(i), tokens_sent=1400, tokens_received=70,
            cost=0.0021, publish=False, **(scored if i == 13 else {}),
        )  # fmt: skip
    Run.objects.filter(pk=run.pk).update(status=Run.Status.FINISHED, exit_status="submitted")
    empty = make_run(owner=researcher, status=Run.Status.FINISHED, exit_status="exit_error")
    page = signed_in(browser_page, live_url, researcher).new_page()
    page.goto(f"{live_url}/runs/{run.code}/")
    page.wait_for_selector("#tokens-chart svg")
    labels = page.eval_on_selector_all("#tokens-chart svg text", "els => els.map((e) => e.textContent)")
    assert "step 13" in labels and "step 1" in labels
    assert not any("e+" in label for label in labels) and "19.1k" in labels  # 13 x 1,470 tokens
    # Every label lies inside the chart's box: none is cut at the edge.
    inside = page.eval_on_selector(
        "#tokens-chart svg",
        """svg => { const box = svg.getBoundingClientRect();
          return [...svg.querySelectorAll('text')].every((t) => { const r = t.getBoundingClientRect();
            return r.left >= box.left - 0.5 && r.right <= box.right + 0.5; }); }""",
    )
    assert inside
    assert page.inner_text("#cost-title") == "Cumulative cost (USD)"
    assert page.inner_text("#tokens-title") == "Cumulative tokens (in + out)"
    assert page.locator("#cost-empty").is_hidden()
    # Hover text reads as the axis does: the raw sums (19110, 0.027300000000000005) never show.
    titles = {
        chart: page.eval_on_selector_all(f"#{chart} svg circle title", "els => els.map((e) => e.textContent)")
        for chart in ("tokens-chart", "cost-chart", "score-chart")
    }
    assert len(titles["tokens-chart"]) == 13 and titles["tokens-chart"][-1].endswith("step 13 · tokens: 19.1k")
    assert titles["cost-chart"][-1].endswith("step 13 · cost: 0.0273")
    assert titles["score-chart"] == ["this run · step 13 · validate: 1.47k"]
    for text in sum(titles.values(), []):
        assert "e+" not in text and "0000" not in text and not re.search(r"\d{5}", text), text

    page.goto(f"{live_url}/runs/{empty.code}/")
    page.wait_for_load_state("networkidle")
    assert page.inner_text("#cost-card").count("No step recorded yet.") == 1
    assert page.locator("#cost-title").is_hidden() and page.locator("#tokens-title").is_hidden()


# ruff: noqa: F811  (pytest fixtures imported from other test modules are redefined as arguments)
