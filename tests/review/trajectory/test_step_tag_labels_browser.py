"""Step-tag labels on a reviewer's trajectory page never break inside a word (they read "loo p" and
"fabricate d claim" on a phone), measured in chromium word by word."""

from __future__ import annotations

import pytest

from review.models import Assignment
from tests.review.reviewing.test_browser import _login
from tests.review.trajectory_factories import trajectory_campaign

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# The line boxes of each word of each label's text: a word on two lines was broken inside.
BROKEN_WORDS_JS = """
() => {
  const broken = [];
  for (const label of document.querySelectorAll(".step-tag")) {
    const text = label.firstChild;
    if (!text || text.nodeType !== Node.TEXT_NODE) continue;
    const re = /\\S+/g;
    let m;
    while ((m = re.exec(text.textContent)) !== null) {
      const range = document.createRange();
      range.setStart(text, m.index);
      range.setEnd(text, m.index + m[0].length);
      const tops = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
      if (tops.size > 1) broken.push(m[0]);
    }
  }
  return broken;
}
"""


@pytest.mark.parametrize("width", [390, 1366])
def test_it_keeps_every_step_tag_label_word_whole(live_url, browser, reviewer, width) -> None:
    trajectory_campaign([reviewer])
    a = Assignment.objects.get()
    page = browser.new_page(viewport={"width": width, "height": 844})
    _login(page, live_url, reviewer)
    page.goto(f"{live_url}/review/a/{a.code}/")
    page.wait_for_selector("#trajectory-steps")
    page.eval_on_selector_all(".step-tags", "all => all.forEach((d) => { d.open = true; })")
    assert page.locator(".step-tag").count() > 3
    assert page.evaluate(BROKEN_WORDS_JS) == []
