"""Blinding: nothing a reviewer can fetch names the system, the run, the judge's view, costs or other reviews."""

from __future__ import annotations

import json
import re

import pytest
from django.urls import reverse

from benchmark.models import Artifact
from judge.models import Judgment
from review.assignment.services import campaign_assign
from review.blinding import blinded, scrubbing
from review.campaigns.services import campaign_create
from review.models import Assignment, Review
from review.reviewing.services import review_save_draft
from tests.review.factories import PNG, make_paper, make_reviewer, make_rubric

pytestmark = pytest.mark.django_db

PAPER = """# Agents that debug

Our agent, built on Claude-3-7-Sonnet (claude-3-7-sonnet-20250219 via Anthropic), beats GPT-4o-mini.
See [the code](https://github.com/lab/claude-agent) and $\\alpha_i = \\beta_{j}$.

![Loss of the claude run](results/claude_run_loss.png)
![Remote](https://example.org/tracker.png)

<script>alert(1)</script>
"""


@pytest.fixture
def setup(reviewer):
    rubric = make_rubric()
    paper = make_paper(
        backbone="claude",
        content=PAPER,
        figures={"results/claude_run_loss.png": PNG},
        extra_files={
            "code/train_claude.py": 'MODEL = "claude-3-7-sonnet"\nprint({"cost_usd": 3.21})\n',
            "claude_output.json": '[{"content": "ls\\nclaude_code/train.py\\nCLAUDE_CODE_DIR"}, {"cost_usd": 3.21}]',
        },
        cost=7.6543,
    )
    Artifact.objects.create(research_run=paper.research_run, stage=Artifact.Stage.IDEA, content="idea by Claude")
    other = make_reviewer("olga")
    campaign = campaign_create(
        name="blind", rubric=rubric, artifacts=[paper], reviewers=[reviewer, other], show_supplementary=True
    )
    campaign_assign(campaign=campaign)
    Judgment.objects.create(
        artifact=paper, rubric=rubric, judge_model="anthropic:claude-judge", status=Judgment.Status.SUCCEEDED,
        scores={"overall": {"score": 9, "justification": "JUDGE-SECRET-VERDICT"}}, cost=0.4242,
    )  # fmt: skip
    theirs = Assignment.objects.get(reviewer=other)
    review_save_draft(
        assignment=theirs,
        scores={"overall": {"score": 3, "justification": "OTHER-REVIEW-TEXT"}},
        confidence=2,
        revision=1,
    )
    mine = Assignment.objects.get(reviewer=reviewer)
    return {"paper": paper, "mine": mine, "theirs": theirs}


def _forbidden(setup) -> list[str]:
    paper = setup["paper"]
    return [
        "claude", "anthropic", "sonnet", str(paper.code), str(paper.research_run.code), str(paper.research_run.task.code),
        "7.6543", "0.4242", "3.21", "JUDGE-SECRET", "OTHER-REVIEW", setup["theirs"].code, setup["mine"].item.code,
        "claude_run_loss", "results/", "artifacts/", "tracker.png",
    ]  # fmt: skip


def _assert_blind(text: str, setup) -> None:
    low = text.lower()
    leaks = [s for s in _forbidden(setup) if s.lower() in low]
    assert leaks == [], f"leaked: {leaks}"


def test_it_shows_the_item_page_without_any_identity_score_cost_or_other_review(client_for, reviewer, setup) -> None:
    r = client_for(reviewer).get(reverse("review:item", args=[setup["mine"].code]))
    assert r.status_code == 200
    html = r.content.decode()
    _assert_blind(html, setup)
    assert "[system]" in html and "GPT-4o-mini" in html  # only the item's own system is scrubbed
    assert "<script>alert" not in html
    title = re.search(r"<title>(.*?)</title>", html, re.S).group(1)
    assert title.strip() == "Agents that debug · Referee"  # the queue's blinded title, not a bare code


def test_it_serves_figures_only_through_opaque_per_assignment_urls(client_for, reviewer, setup) -> None:
    c = client_for(reviewer)
    html = c.get(reverse("review:item", args=[setup["mine"].code])).content.decode()
    srcs = re.findall(r'<img[^>]+src="([^"]+)"', html)
    assert len(srcs) == 1  # the remote image is dropped, not fetched
    assert re.fullmatch(rf"/review/a/{setup['mine'].code}/f/[0-9a-f]{{20}}", srcs[0])
    r = c.get(srcs[0])
    assert r.status_code == 200 and r.content == PNG and r["Content-Type"] == "image/png"
    headers = json.dumps(dict(r.headers))
    _assert_blind(headers, setup)
    # The other reviewer's figure id for the same file is different, and useless to me.
    theirs = blinded.figure_id(setup["theirs"].code, "results/claude_run_loss.png")
    assert theirs not in srcs[0]
    assert c.get(f"/review/a/{setup['mine'].code}/f/{theirs}").status_code == 404
    assert c.get(f"/review/a/{setup['theirs'].code}/f/{theirs}").status_code == 404


def test_it_scrubs_supplementary_files_of_names_and_costs(client_for, reviewer, setup) -> None:
    c = client_for(reviewer)
    html = c.get(reverse("review:item", args=[setup["mine"].code])).content.decode()
    links = re.findall(r'href="(/review/a/[^"]+/s/[^"]+)"', html)
    assert len(links) == 2
    bodies = []
    for link in links:
        r = c.get(link)
        assert r.status_code == 200
        bodies.append(r.content.decode())
        _assert_blind(bodies[-1] + json.dumps(dict(r.headers)), setup)
    assert any('MODEL = "[system]"' in b for b in bodies)
    assert any("\\n[system]/train.py" in b for b in bodies)  # names right after a JSON escape go too


def test_it_hides_supplementary_material_when_the_campaign_does_not_allow_it(client_for, reviewer, setup) -> None:
    c = client_for(reviewer)
    html = c.get(reverse("review:item", args=[setup["mine"].code])).content.decode()
    link = re.findall(r'href="(/review/a/[^"]+/s/[^"]+)"', html)[0]
    setup["mine"].campaign.__class__.objects.update(show_supplementary=False)
    html = c.get(reverse("review:item", args=[setup["mine"].code])).content.decode()
    assert "/s/" not in html
    assert c.get(link).status_code == 404


def test_it_keeps_the_queue_and_the_autosave_reply_blind(client_for, reviewer, setup) -> None:
    c = client_for(reviewer)
    queue = c.get(reverse("review:queue"))
    assert queue.status_code == 200 and setup["mine"].code in queue.content.decode()
    _assert_blind(queue.content.decode(), setup)
    r = c.post(reverse("review:draft", args=[setup["mine"].code]),
               json.dumps({"revision": 1, "scores": {}, "confidence": None}), content_type="application/json")  # fmt: skip
    assert r.status_code == 200 and set(r.json()) == {"revision", "saved_at"}
    _assert_blind(r.content.decode(), setup)


def test_it_does_not_show_another_reviewers_submitted_review(client_for, reviewer, setup) -> None:
    Review.objects.filter(assignment=setup["theirs"]).update(
        status=Review.Status.SUBMITTED, submitted_at="2026-01-01T00:00Z"
    )
    html = client_for(reviewer).get(reverse("review:item", args=[setup["mine"].code])).content.decode()
    assert "OTHER-REVIEW" not in html


def test_it_scrubs_versioned_and_family_spellings_of_the_system() -> None:
    names = scrubbing.system_names("anthropic:claude-3-7-sonnet")
    text = "Claude, claude-3.7, Anthropic's CLAUDE-3-7-SONNET-20250219 and gemini-2.5"
    assert scrubbing.scrub(text, names) == "[system], [system], [system]'s [system] and gemini-2.5"
    assert scrubbing.scrub("o4-mini and GPT-4o-mini", scrubbing.system_names("o4-mini")) == "[system] and GPT-4o-mini"


def test_it_renders_math_without_mangling_it() -> None:
    html = blinded.render_markdown("Let $a_i * b_i$ and\n\n$$x_{1} * y_{2}$$", image_url=lambda s: None)
    assert '<span class="math inline">$a_i * b_i$</span>' in html
    assert '<span class="math display">$$x_{1} * y_{2}$$</span>' in html


def test_it_scrubs_every_system_of_the_campaign_from_every_item(client_for, reviewer) -> None:
    text = "Models such as GPT-4o-mini, o4-mini or Claude-3.7-sonnet were called."
    papers = [make_paper(backbone=b, content=text, figures={}) for b in ("claude", "gemini", "o4-mini")]
    campaign = campaign_create(
        name="all", rubric=make_rubric(), artifacts=papers, reviewers=[reviewer], reviewers_per_item=1
    )
    campaign_assign(campaign=campaign)
    pages = {
        a.item.system: client_for(reviewer).get(reverse("review:item", args=[a.code])).content.decode()
        for a in Assignment.objects.filter(reviewer=reviewer).select_related("item__artifact__research_run")
    }
    shown = {system: re.search(r"<p>(Models such.*?)</p>", html).group(1) for system, html in pages.items()}
    # Identical in every item: no system is told apart by which word went missing.
    assert set(shown.values()) == {"Models such as GPT-4o-mini, [system] or [system] were called."}
