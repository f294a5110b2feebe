"""The reviewer's day in Debian's chromium, on a desktop (1366x900) and a phone (390x844): reading
and scoring at once, score buttons on one row, numbers never broken in table cells, gaps named
before anything is sent, and a problem report that leaves the reviewer where they were."""

from __future__ import annotations

import pytest

from judge.models import Rubric
from review.assignment.services import campaign_assign
from review.campaigns.services import campaign_create
from review.models import Assignment, ItemReport, Review
from tests.review.factories import make_paper
from tests.review.reviewing.test_browser import _login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DESKTOP = {"width": 1366, "height": 900}
PHONE = {"width": 390, "height": 844}
KEYS = ("clarity", "novelty", "soundness", "significance", "overall")
TABLE = "\n".join(
    ["| Method | Accuracy | F1 | ECE | Params |", "|---|---|---|---|---|"]
    + [f"| baseline-{i} with a longer name | 0.83 | 0.791 | 0.0{i}2 | 12.5M |" for i in range(6)]
)
PAPER = (
    "# Calibrated probes for sparse retrieval\n\n"
    + "\n\n".join(f"Paragraph {i}: we study $x_{i}^2$ under shift, at length, for reading." * 3 for i in range(30))
    + "\n\n## Results\n\n"
    + TABLE
    + "\n\nMore discussion follows.\n"
)


@pytest.fixture
def world(reviewer):
    rubric = Rubric.objects.create(
        stage=Rubric.Stage.END_TO_END, version=90, name="0-10 rubric", instructions="Score it.",
        dimensions=[{"key": k, "name": k.capitalize(), "min": 0, "max": 10, "kind": "score",
                     "anchors": {"9-10": "excellent", "0-2": "poor"}} for k in KEYS],
    )  # fmt: skip
    campaign = campaign_create(
        name="day", rubric=rubric, artifacts=[make_paper(content=PAPER, figures={})], reviewers=[reviewer],
        reviewers_per_item=1,
    )  # fmt: skip
    campaign_assign(campaign=campaign)
    return {"mine": Assignment.objects.get(reviewer=reviewer)}


def _open_item(browser, live_url, reviewer, assignment, viewport):
    page = browser.new_page(viewport=viewport)
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    _login(page, live_url, reviewer)
    page.click(f"#next-item[href='/review/a/{assignment.code}/']")  # the next item, one click from the queue
    page.wait_for_selector("#review-form", state="attached")
    return page


def _show_rubric(page, viewport) -> None:
    if viewport is PHONE:
        page.click("#sheet-toggle")


def _score(page, key: str, value: int, text: str) -> None:
    page.click(f"#dim-{key} label:has(input[value='{value}'])")
    page.fill(f"#id_just_{key}", text)


ROW_CHECK = """() => [...document.querySelectorAll('.scores')].map(row => {
    const tops = [...row.querySelectorAll('.score-option span')].map(s => Math.round(s.getBoundingClientRect().top));
    return {n: tops.length, rows: new Set(tops).size};
})"""

# Each numeric cell's text laid out on one line: one client rect for the text node.
NUMBER_CHECK = """() => [...document.querySelectorAll('.paper td')].filter(td => /^[0-9.]+M?$/.test(td.textContent.trim()))
    .map(td => { const r = document.createRange(); r.selectNodeContents(td); return [td.textContent, r.getClientRects().length]; })"""


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_it_lets_the_reviewer_read_and_score_at_once(live_url, browser, reviewer, world, viewport) -> None:
    page = _open_item(browser, live_url, reviewer, world["mine"], viewport)
    if viewport is PHONE:
        # Closed, the sheet is a Score bar at the bottom, with the counter; the paper fills the screen.
        bar = page.locator("#sheet-toggle").bounding_box()
        assert bar["y"] + bar["height"] == pytest.approx(844, abs=1) and bar["height"] < 70
        assert "0 of 5 criteria scored" in page.inner_text("#sheet-toggle")
        assert not page.is_visible("#review-form")
        page.click("#sheet-toggle")
        sheet = page.locator("#rubric").bounding_box()
        assert 844 * 0.3 < sheet["y"] < 844 * 0.5  # the upper part of the screen is still the paper
    else:
        assert not page.is_visible("#sheet-toggle")
        assert page.evaluate("getComputedStyle(document.getElementById('rubric')).position") == "sticky"
    # Scroll the paper to its results table: the rubric stays on screen beside or below it.
    page.locator(".paper table").scroll_into_view_if_needed()
    page.evaluate("window.scrollBy(0, -60)")
    left = page.locator(".paper").bounding_box()["x"] + 30
    assert page.evaluate(f"document.elementFromPoint({left}, 120).closest('.paper') !== null")  # paper text up top
    box = page.locator("#dim-clarity .scores").bounding_box()
    assert 0 <= box["y"] and box["y"] + box["height"] <= viewport["height"]
    _score(page, "clarity", 10, "Clear.")
    assert page.is_checked("#dim-clarity input[value='10']")
    assert "1 of 5 criteria scored" in page.text_content("#criteria-count")
    # Eleven buttons 0-10 on one row in every criterion.
    assert page.evaluate(ROW_CHECK) == [{"n": 11, "rows": 1}] * 5
    # No number broken inside itself in the table cells.
    cells = page.evaluate(NUMBER_CHECK)
    assert len(cells) == 24 and all(rects == 1 for _, rects in cells), cells
    assert page.errors == []


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_it_names_the_missing_criteria_before_sending_anything(live_url, browser, reviewer, world, viewport) -> None:
    a = world["mine"]
    page = _open_item(browser, live_url, reviewer, a, viewport)
    submits: list[str] = []
    page.on("request", lambda r: submits.append(r.url) if r.url.endswith("/submit") else None)
    _show_rubric(page, viewport)
    _score(page, "clarity", 7, "Well organised.")
    page.click("#dim-novelty label:has(input[value='4'])")  # a score, but no justification yet
    page.click("#submit-review")
    page.wait_for_selector("#gap-summary:not([hidden])")
    assert submits == [] and page.url.endswith(f"/review/a/{a.code}/")
    summary = page.inner_text("#gap-summary")
    for name in ("Novelty", "Soundness", "Significance", "Overall", "Confidence"):
        assert name in summary
    assert "Clarity" not in summary and "5 still missing" in summary
    assert page.inner_text("#dim-novelty .field-error") == "Justify the Novelty score."
    assert page.inner_text("#dim-soundness .field-error >> nth=0") == "Choose a score for Soundness."
    assert page.locator("#dim-clarity .field-error").count() == 0
    # The first gap has the focus: the reviewer types straight into it.
    assert page.evaluate("document.activeElement.id") == "id_just_novelty"
    page.keyboard.type("New enough.")
    for key in ("soundness", "significance", "overall"):
        _score(page, key, 6, f"{key} is adequate.")
    page.select_option("#id_confidence", "4")
    assert "Novelty" not in page.inner_text("#gap-summary")  # the list shrinks as gaps close
    assert "5 of 5 criteria scored" in page.text_content("#criteria-count")
    page.click("#submit-review")
    page.wait_for_url(f"{live_url}/review/")
    assert "1 of 1 done" in page.content()
    review = Review.objects.get(assignment=a)
    assert review.status == Review.Status.SUBMITTED and review.score_of("clarity") == 7
    assert review.scores["novelty"]["justification"] == "New enough."
    assert page.errors == []


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_it_reports_a_problem_and_keeps_the_reviewer_on_the_item(live_url, browser, reviewer, world, viewport) -> None:
    a = world["mine"]
    page = _open_item(browser, live_url, reviewer, a, viewport)
    _show_rubric(page, viewport)
    page.fill("#id_just_overall", "Half a thought")
    page.click("#report-problem summary")
    page.click("#report-send")  # no reason chosen: said so, nothing sent
    assert "Choose what is wrong" in page.inner_text("#report-status")
    page.select_option("#id_report_reason", "blinding_leak")
    page.fill("#id_report_note", "Section 5 names the lab's agent.")
    page.click("#report-send")
    page.wait_for_function("document.getElementById('report-status').textContent.startsWith('Thank you')")
    assert page.url.endswith(f"/review/a/{a.code}/")
    assert page.input_value("#id_just_overall") == "Half a thought"
    report = ItemReport.objects.get()
    assert report.assignment == a and report.reason == "blinding_leak" and "names the lab" in report.note
    assert page.errors == []
