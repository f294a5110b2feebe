"""The reviewer's queue (blinded titles, "N of M done", deadline, the next item) and problem reports
(stored for the admins, the reviewer stays on the item; accepting one gives the slot back)."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse
from django.utils import timezone

from review.assignment.services import campaign_assign
from review.campaigns.services import campaign_create
from review.control.reports import ReportRefused, report_problem, report_resolve
from review.models import Assignment, Campaign, ItemReport, Review
from review.reviewing.services import review_submit
from tests.review.factories import full_review_post, make_paper, make_reviewer, make_rubric

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(reviewer):
    other = make_reviewer("olga")
    papers = [
        make_paper(backbone="claude", content="Sure! Here is the paper:\n\n# Title: *Claude* agents and claude_tools for search\n\nBody."),
        make_paper(backbone="gemini", content="# Sparse probes for gemini-era models\n\nBody."),
        make_paper(backbone="claude", content="No heading at all, only text by Claude."),
    ]  # fmt: skip
    campaign = campaign_create(
        name="day", rubric=make_rubric(), artifacts=papers, reviewers=[reviewer, other], reviewers_per_item=2,
        deadline=timezone.now() + timedelta(days=3),
    )  # fmt: skip
    campaign_assign(campaign=campaign)
    mine = list(Assignment.objects.filter(reviewer=reviewer).order_by("queue_key"))  # the queue's order
    return {"campaign": campaign, "mine": mine, "other": other, "papers": papers}


def test_it_lists_blinded_titles_progress_deadline_and_the_next_item(client_for, reviewer, world) -> None:
    first = world["mine"][0]
    review_submit(assignment=first, scores={"x": {"score": 1, "justification": "y"}}, confidence=3)
    html = client_for(reviewer).get(reverse("review:queue")).content.decode()
    # The heading is found past the chatter and scrubbed as the body is (identifiers and all).
    assert "[system] agents and [system] for search" in html
    assert "Sparse probes for [system] models" in html
    assert "Untitled item" in html  # no heading: no guess from the body (it may be chatter)
    lowered = html.lower()
    assert "claude" not in lowered and "gemini" not in lowered and "here is the paper" not in lowered
    assert "1 of 3 done" in html
    assert world["campaign"].deadline.strftime("%Y-%m-%d") in html
    # The next item is an open one, one click from the queue.
    nxt = html[html.index('id="next-item"') - 200 : html.index('id="next-item"') + 300]
    assert reverse("review:item", args=[world["mine"][1].code]) in nxt
    assert reverse("review:item", args=[first.code]) not in nxt


def test_it_titles_the_item_page_as_the_queue_does_never_by_model_or_bare_code(client_for, reviewer, world) -> None:
    c = client_for(reviewer)
    queue = c.get(reverse("review:queue")).content.decode()
    headings = set()
    for a in world["mine"]:
        html = c.get(reverse("review:item", args=[a.code])).content.decode()
        title = re.search(r"<title>(.*?)</title>", html, re.S).group(1).strip()
        heading = re.search(r'<h1 id="item-title">(.*?)</h1>', html, re.S).group(1).strip()
        assert title == f"{heading} · Referee" and heading != a.code and not heading.startswith("Item ")
        assert f">{heading}</a>" in queue  # the same name as in the reviewer's queue
        assert not re.search(r"(?i)claude|gemini", title)
        headings.add(heading)
    assert headings == {"[system] agents and [system] for search", "Sparse probes for [system] models", "Untitled item"}


def test_it_shows_a_reviewer_only_their_own_queue(client_for, reviewer, world) -> None:
    html = client_for(world["other"]).get(reverse("review:queue")).content.decode()
    for mine in world["mine"]:
        assert mine.code not in html
    assert "0 of 3 done" in html


def test_it_prefers_the_item_left_halfway_as_the_next_one(client_for, reviewer, world) -> None:
    last = world["mine"][2]
    Assignment.objects.filter(pk=last.pk).update(status=Assignment.Status.STARTED)
    html = client_for(reviewer).get(reverse("review:queue")).content.decode()
    nxt = html[html.index('id="next-item"') - 200 : html.index('id="next-item"') + 300]
    assert reverse("review:item", args=[last.code]) in nxt and "Continue" in nxt


def test_it_counts_scored_criteria_on_the_form(client_for, reviewer, world) -> None:
    a = world["mine"][0]
    data = full_review_post()
    data.pop("just_overall")
    data.pop("score_novelty")
    data["action"] = "draft"
    client_for(reviewer).post(reverse("review:item", args=[a.code]), data)
    html = client_for(reviewer).get(reverse("review:item", args=[a.code])).content.decode()
    assert "3 of 5 criteria scored" in html  # a score without its justification does not count


# ---------------------------------------------------------------- reports


def _report(client, a: Assignment, *, json: bool = True, **data):
    headers = {"HTTP_ACCEPT": "application/json"} if json else {}
    return client.post(reverse("review:report", args=[a.code]), data, **headers)


def test_it_stores_a_report_and_answers_with_nothing_about_the_item(client_for, reviewer, world) -> None:
    a = world["mine"][0]
    c = client_for(reviewer)
    c.post(reverse("review:item", args=[a.code]), {"action": "draft", "just_clarity": "half written"})
    r = _report(c, a, reason="blinding_leak", note="  The acknowledgements name the lab.  ")
    assert r.status_code == 200 and r.json() == {"ok": True}
    report = ItemReport.objects.get()
    assert (report.assignment, report.campaign, report.reason, report.status) == (
        a, world["campaign"], ItemReport.Reason.BLINDING_LEAK, ItemReport.Status.OPEN
    )  # fmt: skip
    assert report.note == "The acknowledgements name the lab."
    # The reviewer keeps going: the assignment and the draft are as they were.
    a.refresh_from_db()
    assert a.status in Assignment.OPEN
    assert Review.objects.get(assignment=a).scores["clarity"]["justification"] == "half written"


def test_it_redirects_back_to_the_item_without_javascript(client_for, reviewer, world) -> None:
    a = world["mine"][0]
    r = _report(client_for(reviewer), a, json=False, reason="broken_figure", note="")
    assert r.status_code == 302 and r["Location"] == reverse("review:item", args=[a.code])
    assert ItemReport.objects.filter(reason="broken_figure").count() == 1


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        ({"reason": ""}, "Choose what is wrong"),
        ({"reason": "model_name"}, "Choose what is wrong"),
        ({"reason": "other", "note": "x" * (ItemReport.NOTE_MAX + 1)}, "too long"),
    ],
)
def test_it_refuses_a_bad_report_saying_why(client_for, reviewer, world, data, fragment) -> None:
    r = _report(client_for(reviewer), world["mine"][0], **data)
    assert r.status_code == 400 and fragment in r.json()["error"]
    assert not ItemReport.objects.exists()


def test_it_caps_open_reports_per_item(client_for, reviewer, world) -> None:
    c = client_for(reviewer)
    for _ in range(ItemReport.MAX_OPEN_PER_ASSIGNMENT):
        assert _report(c, world["mine"][0], reason="other").status_code == 200
    r = _report(c, world["mine"][0], reason="other")
    assert r.status_code == 400 and "open reports" in r.json()["error"]
    assert ItemReport.objects.count() == ItemReport.MAX_OPEN_PER_ASSIGNMENT


def test_it_gives_the_report_form_its_permission_checklist(client_for, reviewer, researcher, admin_user, world) -> None:
    a = world["mine"][0]
    theirs = Assignment.objects.filter(reviewer=world["other"]).first()
    assert _report(client_for(reviewer), theirs, reason="other").status_code == 404  # another reviewer's code
    bad = client_for(reviewer).post(reverse("review:report", args=["nosuchcode"]), {"reason": "other"})
    assert bad.status_code == 404
    assert _report(client_for(researcher), a, reason="other").status_code == 403
    assert _report(client_for(admin_user), a, reason="other").status_code == 403
    anon = _report(client_for(None), a, json=False, reason="other")
    assert anon.status_code == 302 and "/accounts/login" in anon["Location"]
    assert client_for(reviewer).get(reverse("review:report", args=[a.code])).status_code == 405
    Campaign.objects.update(status=Campaign.Status.DRAFT)
    assert _report(client_for(reviewer), a, reason="other").status_code == 404
    assert not ItemReport.objects.exists()


def test_it_gives_the_slot_back_when_an_admin_accepts_the_report(reviewer, admin_user, world) -> None:
    third = make_reviewer("theo")
    world["campaign"].members.create(reviewer=third)
    a = world["mine"][0]
    report = report_problem(assignment=a, reason="conflict", note="my student's paper")
    assert report_resolve(report=report, accept=True, by=admin_user) is True
    a.refresh_from_db()
    report.refresh_from_db()
    assert a.status == Assignment.Status.RETURNED and report.status == ItemReport.Status.ACCEPTED
    assert report.resolved_by == admin_user and report.resolved_at
    # The freed slot went to the one other eligible reviewer; the item still has k live reviewers.
    live = Assignment.objects.filter(item=a.item, status__in=Assignment.LIVE)
    assert sorted(x.reviewer.username for x in live) == ["olga", "theo"]
    assert {x.slot for x in live} == {1, 2}
    with pytest.raises(ReportRefused):
        report_resolve(report=report, accept=False, by=admin_user)


def test_it_keeps_a_submitted_review_and_its_slot_when_its_report_is_accepted(reviewer, admin_user, world) -> None:
    a = world["mine"][0]
    review_submit(assignment=a, scores={"x": {"score": 1, "justification": "y"}}, confidence=3)
    report = report_problem(assignment=a, reason="broken_figure", note="")
    assert report_resolve(report=report, accept=True, by=admin_user) is False
    a.refresh_from_db()
    assert a.status == Assignment.Status.SUBMITTED


def test_it_dismisses_a_report_leaving_the_assignment(reviewer, admin_user, world) -> None:
    a = world["mine"][0]
    report = report_problem(assignment=a, reason="other", note="")
    assert report_resolve(report=report, accept=False, by=admin_user) is False
    a.refresh_from_db()
    assert a.status in Assignment.OPEN and ItemReport.objects.get().status == ItemReport.Status.DISMISSED


def test_it_lists_reports_for_admins_and_accepts_them_there(client_for, admin_user, reviewer, world) -> None:
    a = world["mine"][0]
    report_problem(assignment=a, reason="wrong_item", note="This is the proposal, not the paper.")
    c = client_for(admin_user)
    url = reverse("admin:review_itemreport_changelist")
    html = c.get(url).content.decode()
    assert "This is the proposal, not the paper." in html and a.item.code in html and reviewer.username in html
    r = c.post(url, {"action": "accept_reports", "_selected_action": [ItemReport.objects.get().pk]})
    assert r.status_code == 302
    a.refresh_from_db()
    assert a.status == Assignment.Status.RETURNED
    assert client_for(reviewer).get(url).status_code == 302  # reviewers never reach the admin


# ---------------------------------------------------------------- titles

NAMES = ("claude", "gemini")


@pytest.mark.parametrize(
    ("head", "title"),
    [
        ("Here is the paper:\n\n## 1. Title and Abstract\n\n**Title:** Tutoring *Claude* users\n\n**Abstract:** x", "Tutoring [system] users"),
        ("## 1 Title and Abstract\n\n**Title:**  \nSpurGen: A Benchmark\n\n**Abstract:**", "SpurGen: A Benchmark"),
        ("Title: Cluster-Driven Unlearning\n\nAbstract  \nWe propose", "Cluster-Driven Unlearning"),
        ("Okay, I will now write it.\n\n---\n\n# **Gemini-free Transformers**\n\n## 1. Title and Abstract", "[system] Transformers"),  # as the body scrubs it
        ("# Abstract\n\nWe study things.\n", ""),
        ("No heading, written by Claude.", ""),
    ],
)  # fmt: skip
def test_it_takes_the_title_from_a_label_or_the_first_real_heading(head, title) -> None:
    from review.blinding.blinded import item_title

    assert item_title(head, NAMES) == title


MLRBENCH_RESULTS = (
    Path(settings.MLRBENCH_DIR or Path(settings.BASE_DIR).parent / "shared" / "mlrbench") / "agent_results"
)


@pytest.mark.shared_data(MLRBENCH_RESULTS)
def test_it_finds_a_blinded_title_for_every_released_paper() -> None:
    from review.blinding.blinded import TITLE_PREFIX, item_title
    from review.blinding.scrubbing import system_names

    names = system_names("claude", "gemini", "o4-mini", "Claude Code")
    papers = sorted(MLRBENCH_RESULTS.glob("*/*/results/paper.md"))
    titles = [item_title(p.read_text()[:TITLE_PREFIX], names) for p in papers]
    assert len(papers) == 30 and all(titles), [p for p, t in zip(papers, titles, strict=True) if not t]
    assert not [t for t in titles if re.search(r"(?i)claude|gemini|o4-mini|title and abstract|here is", t)]
