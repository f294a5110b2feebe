"""Blinding by order in Debian's chromium: a reviewer's queue of a 30-paper campaign made in system
blocks reads in their keyed shuffle (not CCC..GGG..OOO), the same after a reload, its next item is
the queue's head, and another reviewer reads another order."""

from __future__ import annotations

import pytest

from review.models import Assignment
from tests.review.assignment.test_queue_order import block_campaign, longest_run, queue_of
from tests.review.factories import make_reviewer
from tests.review.reviewing.test_browser import _login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

READ_QUEUE = """() => [...document.querySelectorAll('.campaign-queue .queue-item a.queue-title')]
    .map(a => a.getAttribute('href').split('/').filter(Boolean).pop())"""


def _read_queue(browser, base: str, user) -> tuple[list[str], list[str], str]:
    """The codes in the order the page shows them, again after a reload, and the next item's link."""
    context = browser.new_context(viewport={"width": 1366, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    _login(page, base, user)
    first = page.evaluate(READ_QUEUE)
    page.reload()
    again = page.evaluate(READ_QUEUE)
    nxt = page.get_attribute("#next-item", "href")
    assert errors == []
    context.close()
    return first, again, nxt


def test_it_shows_each_reviewer_their_keyed_order(live_server, browser, reviewer) -> None:
    olga = make_reviewer("olga", password="pw-olga")
    block_campaign([reviewer, olga])
    mine = queue_of(reviewer)
    system_of = {a.code: a.item.system for a in Assignment.objects.select_related("item__artifact__research_run")}

    shown, reloaded, nxt = _read_queue(browser, live_server.url, reviewer)
    assert len(shown) == 30
    assert shown == [a.code for a in mine] == reloaded
    assert shown != [a.code for a in sorted(mine, key=lambda a: a.pk)]  # not the creation order
    # Creation order reads CCCCCCCCCCGGGGGGGGGGOOOOOOOOOO (a run of 10); a fair shuffle's longest
    # run is 9 or more with probability 7e-5.
    assert longest_run([system_of[code] for code in shown]) <= 8
    assert nxt == f"/review/a/{shown[0]}/"

    theirs, _, _ = _read_queue(browser, live_server.url, olga)
    item_of = {a.code: a.item_id for a in Assignment.objects.all()}
    assert len(theirs) == 30 and not set(theirs) & set(shown)
    assert [item_of[c] for c in theirs] != [item_of[c] for c in shown]
