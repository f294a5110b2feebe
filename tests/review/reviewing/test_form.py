"""The rubric form: validation, autosaved drafts (revision ordering), submission lock."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from judge.models import Rubric
from review.assignment.services import campaign_assign
from review.campaigns.services import campaign_create
from review.models import Assignment, Campaign, Review
from tests.review.factories import full_review_post, make_paper, make_reviewer, make_rubric

pytestmark = pytest.mark.django_db


@pytest.fixture
def assignment(reviewer) -> Assignment:
    campaign = campaign_create(
        name="c", rubric=make_rubric(), artifacts=[make_paper()], reviewers=[reviewer], reviewers_per_item=1
    )
    campaign_assign(campaign=campaign)
    return Assignment.objects.get(reviewer=reviewer)


def _draft(client, a: Assignment, revision: int, **body):
    payload = {"revision": revision, "scores": {}, "confidence": None, **body}
    return client.post(reverse("review:draft", args=[a.code]), json.dumps(payload), content_type="application/json")


def test_it_saves_a_partial_draft_and_shows_it_after_a_reload(client_for, reviewer, assignment) -> None:
    c = client_for(reviewer)
    r = _draft(c, assignment, 1, scores={"novelty": {"score": 8, "justification": "fresh idea"}})
    assert r.status_code == 200 and r.json()["revision"] == 1
    page = c.get(reverse("review:item", args=[assignment.code])).content.decode()
    assert "fresh idea" in page
    assert 'name="score_novelty" value="8" checked' in page
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.STARTED


def test_it_touches_the_assignments_activity_at_most_once_a_minute(client_for, reviewer, assignment) -> None:
    """Reclaims and reminders measure activity in hours; an autosave every few seconds rewrote it each time."""
    from datetime import timedelta

    from django.utils import timezone

    c = client_for(reviewer)
    assert _draft(c, assignment, 1, scores={"clarity": {"score": 6, "justification": "a"}}).status_code == 200
    assignment.refresh_from_db()
    first = assignment.last_activity
    assert assignment.status == Assignment.Status.STARTED
    assert _draft(c, assignment, 2, scores={"clarity": {"score": 7, "justification": "b"}}).status_code == 200
    assignment.refresh_from_db()
    assert assignment.last_activity == first  # within the minute: the draft is stored, the activity kept
    assert Review.objects.get().scores["clarity"]["justification"] == "b"
    Assignment.objects.filter(pk=assignment.pk).update(last_activity=timezone.now() - timedelta(minutes=2))
    assert _draft(c, assignment, 3, scores={"clarity": {"score": 8, "justification": "c"}}).status_code == 200
    assignment.refresh_from_db()
    assert timezone.now() - assignment.last_activity < timedelta(seconds=30)


def test_it_ignores_an_older_draft_arriving_after_a_newer_one(client_for, reviewer, assignment) -> None:
    c = client_for(reviewer)
    assert _draft(c, assignment, 5, scores={"clarity": {"score": 6, "justification": "newer"}}).status_code == 200
    late = _draft(c, assignment, 4, scores={"clarity": {"score": 2, "justification": "older"}})
    assert late.status_code == 409 and late.json() == {"error": "stale", "revision": 5}
    assert Review.objects.get().scores["clarity"]["justification"] == "newer"


@pytest.mark.parametrize(
    "body, fragment",
    [
        ({"scores": {"novelty": {"score": 11, "justification": ""}}}, "score_novelty"),
        ({"scores": {"novelty": {"score": 0, "justification": ""}}}, "score_novelty"),
        ({"scores": {"made_up": {"score": 5, "justification": ""}}}, "made_up"),
        ({"confidence": 9}, "confidence"),
        ({"scores": "x"}, "scores"),
    ],
)
def test_it_rejects_an_invalid_draft_naming_the_field(client_for, reviewer, assignment, body, fragment) -> None:
    r = _draft(client_for(reviewer), assignment, 1, **body)
    assert r.status_code == 400 and fragment in json.dumps(r.json())
    assert not Review.objects.exists()


def test_it_rejects_a_draft_without_a_revision(client_for, reviewer, assignment) -> None:
    r = client_for(reviewer).post(
        reverse("review:draft", args=[assignment.code]), "{}", content_type="application/json"
    )
    assert r.status_code == 400 and "revision" in r.json()["error"]


@pytest.mark.parametrize("revision", [2**31, 10**12, 1_000_000_001, 0, -3, True, 2.5, "7"])
def test_it_refuses_a_revision_out_of_range_with_a_400_not_a_crash(client_for, reviewer, assignment, revision) -> None:
    """A revision past the column's range reached the UPDATE and answered 500 (integer out of range)."""
    c = client_for(reviewer)
    r = _draft(c, assignment, revision, scores={"clarity": {"score": 6, "justification": "kept"}})
    assert r.status_code == 400 and "revision" in r.json()["error"]
    assert not Review.objects.exists()
    # The largest accepted revision is stored, and the submit's "stored + 1" still fits.
    assert _draft(c, assignment, 1_000_000_000).status_code == 200
    assert c.post(reverse("review:submit", args=[assignment.code]), full_review_post()).status_code == 302
    assert Review.objects.get().revision == 1_000_000_001


def test_it_refuses_to_submit_an_incomplete_review_and_keeps_the_input(client_for, reviewer, assignment) -> None:
    data = full_review_post()
    data.pop("score_soundness")
    data["just_clarity"] = "   "
    r = client_for(reviewer).post(reverse("review:submit", args=[assignment.code]), data)
    assert r.status_code == 400
    html = r.content.decode()
    # Each gap is named next to its criterion, and the summary above the form links to both.
    assert "This field is required." not in html
    assert html.count("Choose a score for Soundness.") == 1 and html.count("Justify the Clarity score.") == 1
    summary = html[html.index('id="gap-summary"') : html.index("</ul>", html.index('id="gap-summary"'))]
    assert "hidden" not in summary.split(">")[0]
    assert '<a href="#dim-clarity">Clarity</a>' in summary and '<a href="#dim-soundness">Soundness</a>' in summary
    assert "novelty" not in summary.lower()
    soundness = html[html.index('id="dim-soundness"') : html.index("</fieldset>", html.index('id="dim-soundness"'))]
    assert "has-gap" in html[html.index('id="dim-soundness"') - 60 : html.index('id="dim-soundness"')]
    assert "Choose a score for Soundness." in soundness
    assert "3 of 5 criteria scored" in html  # novelty, significance, overall are complete
    assert "Because novelty is fine." in html
    assert not Review.objects.filter(status=Review.Status.SUBMITTED).exists()


def test_it_submits_and_then_locks_the_review(client_for, reviewer, assignment) -> None:
    c = client_for(reviewer)
    r = c.post(reverse("review:submit", args=[assignment.code]), full_review_post(value=8, confidence=3))
    assert r.status_code == 302
    review = Review.objects.get()
    assert review.status == Review.Status.SUBMITTED and review.confidence == 3 and review.submitted_at
    assert review.score_of("overall") == 8
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.SUBMITTED
    # Locked: neither another submission nor a draft changes it.
    c.post(reverse("review:submit", args=[assignment.code]), full_review_post(value=2))
    late = _draft(c, assignment, 99, scores={"overall": {"score": 1, "justification": "changed my mind"}})
    assert late.status_code == 409 and late.json()["error"] == "locked"
    review.refresh_from_db()
    assert review.score_of("overall") == 8
    page = c.get(reverse("review:item", args=[assignment.code])).content.decode()
    assert "submitted and locked" in page and "disabled" in page


def test_it_saves_a_draft_without_javascript(client_for, reviewer, assignment) -> None:
    c = client_for(reviewer)
    r = c.post(
        reverse("review:item", args=[assignment.code]), {"action": "draft", "score_clarity": "4", "just_clarity": "ok"}
    )
    assert r.status_code == 302
    assert Review.objects.get().scores["clarity"] == {"score": 4, "justification": "ok"}


def test_it_refuses_saves_once_the_campaign_is_closed(client_for, reviewer, assignment) -> None:
    Campaign.objects.update(status=Campaign.Status.CLOSED)
    r = _draft(client_for(reviewer), assignment, 1, scores={"clarity": {"score": 4, "justification": ""}})
    assert r.status_code == 409 and r.json()["error"] == "locked"


def test_it_lets_each_reviewer_score_only_under_their_own_code(client_for, reviewer) -> None:
    other = make_reviewer("olga")
    campaign = campaign_create(name="two", rubric=make_rubric(), artifacts=[make_paper()], reviewers=[reviewer, other])
    campaign_assign(campaign=campaign)
    mine = Assignment.objects.get(reviewer=reviewer)
    theirs = Assignment.objects.get(reviewer=other)
    assert mine.code != theirs.code and mine.item_id == theirs.item_id
    assert _draft(client_for(reviewer), theirs, 1).status_code == 404
    r = client_for(reviewer).post(reverse("review:submit", args=[theirs.code]), full_review_post())
    assert r.status_code == 404
    assert not Review.objects.exists()


def test_it_escapes_the_rubrics_names_questions_and_bands_on_the_item_page(client_for, reviewer) -> None:
    # Rubric text is written by an admin but read by every reviewer: markup in it must show as text.
    hostile = {
        "key": "clarity",
        "name": "<script>alert('name')</script>",
        "questions": ["<img src=x onerror=alert('q')>"],
        "anchors": {"<b>9-10</b>": "<i onmouseover=alert('band')>top</i>", "1-8": "rest"},
        "min": 1,
        "max": 3,
        "kind": "score",
    }
    rubric = Rubric.objects.create(stage=Rubric.Stage.END_TO_END, version=91, name="r", dimensions=[hostile])
    campaign = campaign_create(
        name="c", rubric=rubric, artifacts=[make_paper()], reviewers=[reviewer], reviewers_per_item=1
    )
    campaign_assign(campaign=campaign)
    code = Assignment.objects.get(reviewer=reviewer).code
    page = client_for(reviewer).get(reverse("review:item", args=[code])).content.decode()
    for raw in ("<script>alert", "<img src=x", "<b>9-10</b>", "<i onmouseover"):
        assert raw not in page
    assert "<legend>&lt;script&gt;alert(&#x27;name&#x27;)&lt;/script&gt;</legend>" in page
    assert "<li>&lt;img src=x onerror=alert(&#x27;q&#x27;)&gt;</li>" in page
    # Bands highest first, each escaped; the score buttons run from the rubric's min to its max.
    assert (
        "<dt>&lt;b&gt;9-10&lt;/b&gt;</dt><dd>&lt;i onmouseover=alert(&#x27;band&#x27;)&gt;top&lt;/i&gt;</dd><dt>1-8</dt>"
        in page
    )
    assert [v for v in ("1", "2", "3", "4") if f'name="score_clarity" value="{v}"' in page] == ["1", "2", "3"]
