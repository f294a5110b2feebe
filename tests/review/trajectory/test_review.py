"""Trajectory review: a campaign item is an artifact or an agent run (never both, never neither);
a trajectory campaign is set up from finished runs; the reviewer sees the run blinded, step by
step, and tags steps' errors in the draft; the tags reach the exports. Permission checklist of the
item page and the admin preview for a trajectory item."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.contrib.auth.models import Group
from django.db import IntegrityError, transaction
from django.urls import reverse

from accounts.roles import REVIEWER
from benchmark.models import Run
from judge.models import Judgment
from review.assignment.services import AssignmentError, campaign_assign
from review.campaigns.services import campaign_add_reviewers, campaign_create
from review.io.exports import reviews_csv, reviews_json
from review.models import TRAJECTORY, Assignment, Campaign, CampaignItem, Review
from tests.review.factories import make_paper, make_rubric
from tests.review.trajectory_factories import (
    full_trajectory_post,
    make_run,
    run_tells,
    trajectory_campaign,
    trajectory_rubric,
)

pytestmark = pytest.mark.django_db


def test_it_refuses_an_item_with_both_an_artifact_and_a_run_or_with_neither() -> None:
    campaign = campaign_create(name="c", rubric=make_rubric(), artifacts=[])
    paper, run = make_paper(), make_run()
    with pytest.raises(IntegrityError), transaction.atomic():
        CampaignItem.objects.create(campaign=campaign, artifact=paper, run=run)
    with pytest.raises(IntegrityError), transaction.atomic():
        CampaignItem.objects.create(campaign=campaign)
    CampaignItem.objects.create(campaign=campaign, run=run)
    with pytest.raises(IntegrityError), transaction.atomic():  # a run once per campaign, like an artifact
        CampaignItem.objects.create(campaign=campaign, run=run)
    assert CampaignItem.objects.create(campaign=campaign, artifact=paper).run is None


def test_it_sets_up_a_trajectory_campaign_from_finished_runs(client_for, admin_user, reviewer) -> None:
    done, running = make_run(), make_run(model="openai:gpt-4o")
    Run.objects.filter(pk=running.pk).update(status=Run.Status.RUNNING)
    paper = make_paper()
    c = client_for(admin_user)
    page = c.get(reverse("review:campaign_create") + f"?stage={TRAJECTORY}").content.decode()
    assert f'name="runs" value="{done.pk}"' in page and f'name="runs" value="{running.pk}"' not in page
    assert 'data-stage="trajectory"' in page and f"trajectory: {done.task.slug}" in page
    rubric = trajectory_rubric()
    base = {"name": "trajectories", "stage": TRAJECTORY, "rubric": rubric.pk, "reviewers_per_item": 1,
            "reclaim_after_hours": 72, "status": "open", "reviewers": [reviewer.pk]}  # fmt: skip
    # A paper rubric for runs, runs under a paper stage, a paper in a trajectory campaign: refused, named.
    wrong = c.post(reverse("review:campaign_create"), {**base, "rubric": make_rubric().pk, "runs": [done.pk]})
    assert wrong.status_code == 400 and "needs a rubric of its kind" in wrong.content.decode()
    wrong = c.post(reverse("review:campaign_create"), {**base, "stage": "paper", "runs": [done.pk]})
    assert wrong.status_code == 400 and "choose the stage trajectory" in wrong.content.decode()
    wrong = c.post(reverse("review:campaign_create"), {**base, "artifacts": [paper.pk], "runs": [done.pk]})
    assert wrong.status_code == 400 and "not of stage trajectory" in wrong.content.decode()
    assert not Campaign.objects.exists()
    made = c.post(reverse("review:campaign_create"), {**base, "runs": [done.pk]})
    assert made.status_code == 302
    campaign = Campaign.objects.get()
    item = campaign.items.get()
    assert (item.run_id, item.artifact_id, campaign.stage) == (done.pk, None, TRAJECTORY)
    assert "claude" in campaign.blind_names and "ClaudeCoder" in campaign.blind_names
    # The plan and the assignment work as for papers; the campaign page lists the run's task.
    assert c.post(reverse("review:campaign_assign", args=[campaign.code])).status_code == 302
    assert Assignment.objects.filter(item=item, reviewer=reviewer).exists()
    other = make_run(model="google:gemini-2.5-pro", agent_name="GeminiAgent")
    detail = c.get(reverse("review:campaign_detail", args=[campaign.code])).content.decode()
    assert done.task.slug in detail and "blinded each time it is shown" in detail
    # More runs can be added to the live campaign: the picker offers finished runs not in it yet.
    assert f'value="{other.pk}"' in detail and f'name="artifacts" value="{done.pk}"' not in detail
    grown = c.post(reverse("review:campaign_items_add", args=[campaign.code]), {"artifacts": [other.pk]})
    assert grown.status_code == 302 and campaign.items.count() == 2
    assert "gemini" in Campaign.objects.get().blind_names


def _leaks(body: str, run: Run) -> list[str]:
    found = [w for w in ("claude", "anthropic", *run_tells(run)) if w.lower() in body.lower()]
    found += [w for w in ("1.2345", "0.177", "tokens") if w in body]
    return found


def test_it_shows_the_reviewer_the_trajectory_blinded_step_by_step(client_for, reviewer) -> None:
    campaign = trajectory_campaign([reviewer])
    item = campaign.items.get()
    Judgment.objects.create(
        run=item.run, rubric=campaign.rubric, judge_model="openai:gpt-4o", status=Judgment.Status.SUCCEEDED,
        scores={"overall": {"score": 3, "justification": "JUDGE-VERDICT the agent looped needlessly"}},
    )  # fmt: skip
    a = Assignment.objects.get()
    c = client_for(reviewer)
    body = c.get(reverse("review:item", args=[a.code])).content.decode()
    assert "Step 1: as [system] I will edit strategy.py (run [id])." in body
    assert "edit strategy.py 2" in body and "Score = 1.25" in body  # actions and the validation score
    assert "&quot;total_cost&quot;: &quot;[hidden]&quot;" in body  # recorded costs hidden, as in traces
    # The owner, the import folder and file and the endpoint are in every step's output: replaced.
    assert _leaks(body, item.run) == [] and "JUDGE-VERDICT" not in body
    assert "saved by [id] to /data/imports/[id]/[id] via [system]" in body
    # The one request the page makes (the draft autosave) answers without them too.
    saved = c.post(reverse("review:draft", args=[a.code]), json.dumps({"revision": 1, "scores": {}}),
                   content_type="application/json")  # fmt: skip
    assert saved.status_code == 200 and _leaks(saved.content.decode(), item.run) == []
    assert item.run.task.title in body  # the task is shared by every system: shown
    assert 'name="steptag_3_loop"' in body and 'form="review-form"' in body
    queue = c.get(reverse("review:queue")).content.decode()
    assert "Agent trajectory: " + item.run.task.title in queue and _leaks(queue, item.run) == []
    assert c.get(reverse("review:figure", args=[a.code, "0" * 20])).status_code == 404
    assert c.get(reverse("review:supplementary", args=[a.code, "0" * 20])).status_code == 404


def _draft(c, a, payload):
    return c.post(reverse("review:draft", args=[a.code]), json.dumps(payload), content_type="application/json")


def test_it_saves_step_tags_with_the_draft_and_exports_them(client_for, reviewer) -> None:
    campaign = trajectory_campaign([reviewer])
    a = Assignment.objects.get()
    c = client_for(reviewer)
    tags = [{"step": 2, "tag": "loop", "severity": "major", "note": "same edit again"}]
    saved = _draft(
        c, a, {"revision": 1, "scores": {"efficiency": {"score": 4, "justification": "x"}}, "step_tags": tags}
    )
    assert saved.status_code == 200, saved.content
    assert Review.objects.get().step_tags == tags
    # Bad tags: refused with the entry and what is wrong; the stored draft is unchanged.
    for bad, says in (
        ([{"step": 9, "tag": "loop", "severity": "major"}], "step must be a step number 1..3"),
        ([{"step": 1, "tag": "typo", "severity": "major"}], "tag must be one of"),
        ([{"step": 1, "tag": "loop", "severity": "huge"}], "severity must be one of"),
        ([{"step": 1, "tag": "loop", "severity": "minor"}] * 2, "already has the tag loop"),
        ("loop", "expected a list"),
    ):
        r = _draft(c, a, {"revision": 2, "scores": {}, "step_tags": bad})
        assert r.status_code == 400 and says in r.json()["error"], (bad, r.content)
    assert Review.objects.get().step_tags == tags and Review.objects.get().revision == 1
    # The page shows the stored tag selected; the no-JavaScript submit carries the selects.
    page = c.get(reverse("review:item", args=[a.code])).content.decode()
    assert '<option value="major" selected>' in page
    post = {**full_trajectory_post(), "steptag_3_fabricated_claim": "critical", "steptag_2_loop": "major"}
    assert c.post(reverse("review:submit", args=[a.code]), post).status_code == 302
    review = Review.objects.get()
    assert review.status == Review.Status.SUBMITTED
    assert review.step_tags == [
        {"step": 2, "tag": "loop", "severity": "major", "note": ""},
        {"step": 3, "tag": "fabricated_claim", "severity": "critical", "note": ""},
    ]
    record = json.loads(reviews_json(campaign))["reviews"][0]
    assert record["step_tags"] == review.step_tags and record["run"] == str(a.item.run.code)
    assert record["system"] == "anthropic:claude-sonnet-4-5"  # admins' export names the system
    row = next(csv.DictReader(io.StringIO(reviews_csv(campaign))))
    assert row["step_tags"] == "2:loop:major; 3:fabricated_claim:critical" and row["overall"] == "6"


def test_it_refuses_step_tags_on_a_paper(client_for, reviewer) -> None:
    campaign_create(
        name="p", rubric=make_rubric(), artifacts=[make_paper()], reviewers=[reviewer], reviewers_per_item=1
    )
    campaign_assign(campaign=Campaign.objects.get())
    a = Assignment.objects.get()
    r = _draft(client_for(reviewer), a, {"revision": 1, "scores": {}, "step_tags": [{"step": 1}]})
    assert r.status_code == 400 and "not a trajectory" in r.json()["error"]


def test_it_checks_who_may_open_a_trajectory_item(client_for, reviewer, other_reviewer, researcher, admin_user) -> None:
    campaign = trajectory_campaign([reviewer])
    a = Assignment.objects.get()
    item_url = reverse("review:item", args=[a.code])
    preview = reverse("review:item_preview", args=[campaign.code, a.item.code])
    assert client_for(reviewer).get(item_url).status_code == 200
    assert client_for(other_reviewer).get(item_url).status_code == 404  # another reviewer's code
    assert client_for(reviewer).get(reverse("review:item", args=["nosuchcode"])).status_code == 404
    assert client_for(researcher).get(item_url).status_code == 403
    assert client_for(admin_user).get(item_url).status_code == 403
    anon = client_for(None).get(item_url)
    assert anon.status_code == 302 and "/accounts/login" in anon["Location"]
    assert client_for(reviewer).put(item_url).status_code == 405
    # The admin's preview: the same blinded steps; nobody else.
    shown = client_for(admin_user).get(preview)
    assert shown.status_code == 200 and "Step 1: as [system]" in shown.content.decode()
    assert _leaks(shown.content.decode(), a.item.run) == []
    assert 'name="steptag_' not in shown.content.decode()  # nothing to save in a preview
    for user in (reviewer, researcher):
        assert client_for(user).get(preview).status_code == 403
    assert client_for(admin_user).post(preview).status_code == 405
    assert client_for(admin_user).get(reverse("review:item_preview", args=[campaign.code, "i-nope"])).status_code == 404


def test_it_keeps_a_reviewer_who_can_see_the_run_off_it(client_for, researcher) -> None:
    """A researcher who owns (or is shared) the run could read its model off the run page."""
    researcher.groups.add(Group.objects.get_or_create(name=REVIEWER)[0])
    run = make_run(owner=researcher)
    campaign = trajectory_campaign([], runs=[run])
    with pytest.raises(AssignmentError, match="can see the runs and judgments behind 1 of the items"):
        campaign_add_reviewers(campaign=campaign, reviewers=[researcher])
    assert not campaign.members.exists() and not Assignment.objects.exists()


def test_it_keeps_step_tag_notes_on_the_form_path_and_refuses_a_note_without_a_severity(client_for, reviewer) -> None:
    trajectory_campaign([reviewer])
    a = Assignment.objects.get()
    c, url = client_for(reviewer), reverse("review:item", args=[a.code])
    tagged = {"steptag_2_loop": "major", "steptagnote_2_loop": "  same edit again  ", "steptagnote_3_loop": ""}
    assert c.post(url, {"action": "draft", **tagged}).status_code == 302
    stored = [{"step": 2, "tag": "loop", "severity": "major", "note": "same edit again"}]
    assert Review.objects.get().step_tags == stored
    page = c.get(url).content.decode()
    assert 'name="steptagnote_2_loop" form="review-form" value="same edit again" maxlength="500"' in page
    # A note on a tag left at "no", or one too long: refused, everything typed shown again, nothing stored.
    orphan = {
        "action": "draft",
        **tagged,
        "steptagnote_1_other": "what did it run?",
        "just_overall": "JUSTIFICATION-KEPT",
    }
    refused = c.post(url, orphan)
    body = refused.content.decode()
    assert refused.status_code == 400 and "Step tags: step 1, other: a note needs a severity" in body
    assert 'value="what did it run?"' in body and 'value="  same edit again  "' in body
    assert '<option value="major" selected>' in body and "JUSTIFICATION-KEPT" in body
    long = c.post(url, {"action": "draft", "steptag_1_other": "minor", "steptagnote_1_other": "x" * 501})
    assert long.status_code == 400 and "note must be text of at most 500 characters" in long.content.decode()
    assert Review.objects.get().step_tags == stored and Review.objects.get().revision == 1
    # Submitted: the notes are the review's, shown read-only (no input left to type into).
    post = {**full_trajectory_post(), **tagged, "steptag_3_other": "minor", "steptagnote_3_other": "claims 2.0"}
    assert c.post(reverse("review:submit", args=[a.code]), post).status_code == 302
    assert Review.objects.get().step_tags == [
        *stored,
        {"step": 3, "tag": "other", "severity": "minor", "note": "claims 2.0"},
    ]
    locked = c.get(url).content.decode()
    assert 'name="steptagnote_' not in locked and "data-step-tag-note-text>claims 2.0</span>" in locked
    assert "data-step-tag-note-text>same edit again</span>" in locked


def test_it_shows_a_step_tag_note_to_its_own_reviewer_only(client_for, reviewer, other_reviewer, admin_user) -> None:
    """The note field is the reviewer's own words: no other reviewer's page nor the admin's blinded
    preview carries it, and its attributes name only the step and the tag, never the run."""
    campaign = trajectory_campaign([reviewer, other_reviewer], k=2)
    mine, theirs = (Assignment.objects.get(reviewer=u) for u in (reviewer, other_reviewer))
    note = [{"step": 1, "tag": "wrong_tool", "severity": "minor", "note": "NOTE-OF-THE-FIRST-REVIEWER"}]
    assert _draft(client_for(reviewer), mine, {"revision": 1, "scores": {}, "step_tags": note}).status_code == 200
    own = client_for(reviewer).get(reverse("review:item", args=[mine.code])).content.decode()
    assert 'value="NOTE-OF-THE-FIRST-REVIEWER"' in own and _leaks(own, mine.item.run) == []
    fields = [chunk.split(">", 1)[0] for chunk in own.split("<input")[1:] if "data-step-tag-note" in chunk]
    assert len(fields) == 3 * 5 and all(_leaks(f, mine.item.run) == [] and mine.item.code not in f for f in fields)
    other = client_for(other_reviewer).get(reverse("review:item", args=[theirs.code])).content.decode()
    preview = reverse("review:item_preview", args=[campaign.code, mine.item.code])
    for page in (other, client_for(admin_user).get(preview).content.decode()):
        assert "NOTE-OF-THE-FIRST-REVIEWER" not in page
