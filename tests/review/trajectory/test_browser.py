"""A reviewer scores an agent trajectory in Debian's chromium (desktop): the blinded steps, one step
tagged with an error, its severity and a note, autosaved with the draft, kept over a reload,
submitted, then shown read-only."""

from __future__ import annotations

import pytest

from review.models import Assignment, Review
from tests.review.reviewing.test_browser import _login, _wait_saved
from tests.review.trajectory_factories import trajectory_campaign, trajectory_rubric

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_it_lets_a_reviewer_score_a_trajectory_with_a_step_tag(live_url, browser, reviewer) -> None:
    trajectory_campaign([reviewer])
    a = Assignment.objects.get()
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    _login(page, live_url, reviewer)
    page.click(f"#next-item[href='/review/a/{a.code}/']")
    page.wait_for_selector("#trajectory-steps")
    assert page.locator(".trajectory-step").count() == 3
    assert "as [system] I will edit" in page.inner_text("#step-1")
    assert "claude" not in page.inner_text("#trajectory-steps").lower()
    # Tag step 2 as a major loop with a note: the draft autosaves with both.
    page.click("#step-2 .step-tags summary")
    note = "#step-2 input[data-step-tag-note][data-tag='loop']"
    assert page.is_disabled(note)  # a note belongs to a tag: no severity, no note
    page.select_option("#step-2 select[data-tag='loop']", "major")
    assert page.is_enabled(note) and page.get_attribute(note, "maxlength") == "500"
    page.fill(note, "same edit <b>again</b>")
    _wait_saved(page)
    tag = {"step": 2, "tag": "loop", "severity": "major", "note": "same edit <b>again</b>"}
    assert Review.objects.get(assignment=a).step_tags == [tag]
    page.reload()
    page.wait_for_selector("#trajectory-steps")
    assert page.eval_on_selector("#step-2 select[data-tag='loop']", "s => s.value") == "major"
    assert page.input_value(note) == "same edit <b>again</b>"
    assert page.eval_on_selector("#step-2 .step-tags", "d => d.open") is True  # a tagged step shows its tags
    for n, dim in enumerate(trajectory_rubric().score_dimensions):
        page.click(f"#dim-{dim['key']} label:has(input[value='{n + 3}'])")
        page.fill(f"#id_just_{dim['key']}", f"{dim['name']}: seen in the steps.")
    page.select_option("#id_confidence", "4")
    page.click("#submit-review")
    page.wait_for_url(f"{live_url}/review/")
    review = Review.objects.get(assignment=a)
    assert review.status == Review.Status.SUBMITTED
    assert review.step_tags == [tag]
    assert review.score_of("approach") == 3 and review.score_of("overall") == 7
    # Submitted and locked: the note is shown as text, escaped, with nothing left to type into.
    page.goto(f"{live_url}/review/a/{a.code}/")
    assert page.eval_on_selector("#step-2 .step-tags", "d => d.open") is True
    assert page.inner_text("#step-2 [data-step-tag-note-text]") == "same edit <b>again</b>"
    assert page.locator("input[data-step-tag-note]").count() == 0
    assert errors == []


# WCAG 2.x contrast of every text node's element against the first opaque background behind it.
CONTRAST_JS = """
(root) => {
  const lum = (rgb) => {
    const [r, g, b] = rgb.map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const parse = (c) => (c.match(/[\\d.]+/g) || []).map(Number);
  const background = (el) => {
    for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c.length === 3 || (c.length === 4 && c[3] > 0.5)) return c.slice(0, 3);
    }
    return [255, 255, 255];
  };
  const out = [];
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const text = walker.currentNode.textContent.trim();
    const el = walker.currentNode.parentElement;
    if (!text || !el || !el.getClientRects().length) continue;
    const fg = parse(getComputedStyle(el).color).slice(0, 3);
    const [a, b] = [lum(fg), lum(background(el))].sort((x, y) => y - x);
    out.push({text: text.slice(0, 40), tag: el.tagName, ratio: (a + 0.05) / (b + 0.05)});
  }
  return out;
}
"""


def test_every_text_of_the_reviewers_trajectory_steps_meets_wcag_aa_contrast(live_server, browser, reviewer) -> None:
    trajectory_campaign([reviewer])
    a = Assignment.objects.get()
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    _login(page, live_server.url, reviewer)
    page.goto(f"{live_server.url}/review/a/{a.code}/")
    page.wait_for_selector("#trajectory-steps")
    texts = page.eval_on_selector("#trajectory-steps", CONTRAST_JS)
    assert any(t["tag"] == "PRE" for t in texts)  # the thoughts, actions and outputs were measured
    low = [t for t in texts if t["ratio"] < 4.5]
    assert low == [], low
