"""Systematic tells: what most items of one system carry and no other system's do is found, shown to
the admin with its counts, and hidden, cut or rewritten in the reviewers' copies; what cannot be
hidden keeps the campaign from opening unless the admin accepts it."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from benchmark.models import Artifact, Step
from benchmark.research.files import file_store
from review.assignment.services import campaign_assign
from review.blinding import blinded, scrubbing, tells
from review.campaigns.services import campaign_create
from review.models import TRAJECTORY, Assignment, Campaign, CampaignStatusChange
from tests.review.factories import make_paper, make_rubric
from tests.review.trajectory_factories import make_run, trajectory_rubric

pytestmark = pytest.mark.django_db


# ---------------------------------------------------------------- the detector


def _items(system: str, carrying: int, total: int, key: str = "file:x.json") -> list[tuple[str, set[str]]]:
    return [
        (system, {key, f"line:own {system} {n}"} if n < carrying else {f"line:own {system} {n}"}) for n in range(total)
    ]


def test_it_finds_a_feature_most_items_of_one_system_carry_and_no_other_does() -> None:
    found = tells.detect(_items("o4-mini", 10, 10) + _items("claude", 0, 10) + _items("gemini", 0, 10))
    assert found == [
        {
            "key": "file:x.json",
            "system": "o4-mini",
            "counts": {"claude": [0, 10], "gemini": [0, 10], "o4-mini": [10, 10]},
        }
    ]


@pytest.mark.parametrize(
    ("mine", "theirs", "tell"),
    [
        ((6, 10), (0, 10), True),  # 60%: most
        ((5, 10), (0, 10), False),  # half is not most
        ((8, 10), (1, 10), True),  # almost no other item
        ((8, 10), (2, 10), False),  # 20% of the other system's items carry it too
        ((1, 1), (0, 5), False),  # one item is not a system
    ],
)
def test_it_counts_shares_per_system(mine, theirs, tell) -> None:
    found = tells.detect(_items("a", *mine) + _items("b", *theirs))
    assert [t["key"] for t in found] == (["file:x.json"] if tell else [])


def test_it_finds_nothing_with_one_system() -> None:
    assert tells.detect(_items("a", 5, 5)) == []


def test_it_normalises_the_system_specific_parts_of_a_feature() -> None:
    names = scrubbing.system_names("claude-3-7-sonnet-20250219", "gemini-2.5-pro-preview", "o4-mini")
    claude = tells.file_keys("review_hallucination_claude-3-7-sonnet-20250219.json", names)
    gemini = tells.file_keys("review_hallucination_gemini-2.5-pro-preview.json", names)
    assert claude == gemini == {"file:review_hallucination_[system].json"}
    assert tells.file_keys("claude_code/run_3.py", names) == {"file:[system]/run_N.py", "folder:[system]/"}
    steps = tells.text_features("(Current Step: 12, Remaining Steps: 38)", names)
    assert steps == tells.text_features("(Current Step: 3, Remaining Steps: 47)", names)


def test_it_cuts_headers_and_lines_and_rewrites_workdirs() -> None:
    rules = {
        "lines": {"Nothing left to do: submitting."},
        "formats": {"file-header"},
        "paths": {"/home/agent/workspace"},
    }
    text = "[File: /home/agent/workspace/a.py (19 lines total)]\n1:import os\nsee /home/agent/workspace/b.py\n"
    assert tells.apply_text(text, rules, []) == "1:import os\nsee <workdir>/b.py\n"
    assert tells.apply_text("Nothing left to do: submitting.\nDone.", rules, []) == "Done."
    assert (
        tells.apply_text("/home/agent/workspacex and /workspace/a", rules, [])
        == "/home/agent/workspacex and /workspace/a"
    )


# ---------------------------------------------------------------- papers: the campaign page and the reviewers' copies

SIGN = "*Prepared by the automated lab pipeline, version 2.*"


def _paper(backbone: str, n: int, *, summary: bool, shared: bool) -> Artifact:
    body = f"# Study {backbone} {n}\n\nWe measure thing number {n} carefully here.\n"
    paper = make_paper(backbone=backbone, content=body + (f"\n{SIGN}\n" if summary else ""), figures={})
    files = {"results/results.md": f"# Results {n}\n"}
    if summary:
        files["results/run_summary.txt"] = f"summary of run {n}\n"
    if shared:
        files["results/common.csv"] = "a,b\n1,2\n"
    experiment = Artifact.objects.create(
        research_run=paper.research_run, stage=Artifact.Stage.EXPERIMENT, content="r", files=list(files)
    )
    for rel, text in files.items():
        file_store(artifact=experiment, relative=rel, data=text.encode())
    return paper


@pytest.fixture
def paper_campaign(reviewer):
    papers = [_paper("claude", n, summary=True, shared=True) for n in range(3)]
    papers += [_paper("gemini", n, summary=False, shared=n == 0) for n in range(3)]
    campaign = campaign_create(
        name="tells", rubric=make_rubric(), artifacts=papers, reviewers=[reviewer], reviewers_per_item=6,
        show_supplementary=True,
    )  # fmt: skip
    campaign_assign(campaign=campaign)
    return campaign


def test_it_lists_each_tell_with_its_counts_and_what_was_done(client_for, admin_user, paper_campaign) -> None:
    html = client_for(admin_user).get(reverse("review:campaign_detail", args=[paper_campaign.code])).content.decode()
    section = html[html.index('id="tells"') :]
    rows = re.findall(
        r"<tr><td>(\w+)</td><td><code>(.*?)</code></td><td>(.*?)</td>\s*<td>(.*?)</td>\s*<td>(.*?)</td></tr>", section
    )
    assert ("file", "results/run_summary.txt", "claude", "claude 3/3 · gemini 0/3", "hidden") in rows
    assert ("line", SIGN.replace("2", "N"), "claude", "claude 3/3 · gemini 0/3", "cut") in rows
    assert not any("common.csv" in row[1] for row in rows)  # one gemini item of three carries it too
    assert 'id="tells-unresolved"' not in section


def test_it_hides_a_tell_file_and_cuts_a_tell_line_from_the_reviewers_copy(
    client_for, reviewer, paper_campaign
) -> None:
    c = client_for(reviewer)
    for assignment in Assignment.objects.filter(item__artifact__research_run__backbone="claude"):
        html = c.get(reverse("review:item", args=[assignment.code])).content.decode()
        assert "run_summary" not in html and "automated lab pipeline" not in html
        assert "results/results.md" in html and "results/common.csv" in html
        experiment = Artifact.objects.get(research_run=assignment.item.artifact.research_run, stage="experiment")
        fid = blinded.figure_id(assignment.code, f"supplementary:{experiment.pk}:results/run_summary.txt")
        assert c.get(reverse("review:supplementary", args=[assignment.code, fid])).status_code == 404
    # The stored paper, which the judge reads, keeps its line.
    assert all(SIGN in a.content for a in Artifact.objects.filter(stage="paper", research_run__backbone="claude"))


def test_it_checks_the_tells_again_with_the_blinding(client_for, admin_user, paper_campaign) -> None:
    """A campaign from before the check (or whose items changed) says so, and "Check blinding again" runs it."""
    Campaign.objects.filter(pk=paper_campaign.pk).update(tells={})
    c = client_for(admin_user)
    page = c.get(reverse("review:campaign_detail", args=[paper_campaign.code])).content.decode()
    assert "not checked yet" in page[page.index('id="tells"') :]
    paper_campaign.refresh_from_db()
    assert "not been checked" in tells.open_problems(paper_campaign)
    c.post(reverse("review:campaign_reblind", args=[paper_campaign.code]))
    paper_campaign.refresh_from_db()
    assert {t["key"] for t in paper_campaign.tells["tells"]} >= {"file:results/run_summary.txt"}
    assert tells.open_problems(paper_campaign) == ""


# ---------------------------------------------------------------- trajectories


def _trajectory(model: str, steps: list[tuple[str, str, str]]):
    run = make_run(model=model, agent_name=model.split(":")[-1], steps=0)
    for i, (thought, action, observation) in enumerate(steps, start=1):
        Step.objects.create(run=run, index=i, thought=thought, action=action, observation=observation)
    run.step_count = len(steps)
    run.save(update_fields=["step_count"])
    return run


WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet")


def _mlgym(n: int):
    w, v = WORDS[n], WORDS[-1 - n]
    return _trajectory(
        "openai:gpt-4o",
        [
            (f"I look at the {w} file before changing anything.", f'open "{w}.py"',
             f"[File: /home/agent/workspace/{w}.py ({17 + n} lines total)]\n1:import random\n"
             f"(Current Step: {n + 1}, Remaining Steps: {49 - n})"),
            (f"Change the {v} line so that it cooperates.", f"goto {n + 3}", f"edited /home/agent/workspace/{w}.py"),
        ],
    )  # fmt: skip


def _referee(n: int):
    w, v = WORDS[n], WORDS[-1 - n]
    return _trajectory(
        "anthropic:claude-sonnet-4-5",
        [
            (f"Reading the {w} strategy to see the {v} baseline.", f"cat /workspace/{w}.py", "import random\n"),
            ("Nothing left to do: submitting.\n", "submit", f"submitted /workspace/{w}.py"),
        ],
    )  # fmt: skip


@pytest.fixture
def trajectory_draft(reviewer):
    runs = [_mlgym(n) for n in range(3)] + [_referee(n) for n in range(3)]
    campaign = campaign_create(
        name="traj tells", rubric=trajectory_rubric(), stage=TRAJECTORY, artifacts=[], runs=runs,
        reviewers=[reviewer], reviewers_per_item=6, status=Campaign.Status.DRAFT,
    )  # fmt: skip
    campaign_assign(campaign=campaign)
    return campaign


def test_it_finds_the_tool_output_formats_paths_and_fixed_thoughts_of_trajectories(trajectory_draft) -> None:
    found = {(t["key"], t["system"]): t["action"] for t in trajectory_draft.tells["tells"]}
    mlgym, referee = "openai:gpt-4o", "anthropic:claude-sonnet-4-5"
    assert found[("format:file-header", mlgym)] == "cut"
    assert found[("format:current-step", mlgym)] == "cut"
    assert found[("path:/home/agent/workspace", mlgym)] == "rewritten"
    assert found[("path:/workspace", referee)] == "rewritten"
    assert found[("line:Nothing left to do: submitting.", referee)] == "cut"
    assert found[("command:goto", mlgym)] == ""  # what the agent did cannot be hidden: unresolved
    assert not any(key.startswith("line:import random") for key, _ in found)  # both systems print it
    assert not any("Change the" in key or "Reading the" in key for key, _ in found)  # thoughts of their own


def test_it_shows_reviewers_the_steps_without_the_tells(client_for, reviewer, trajectory_draft) -> None:
    Campaign.objects.filter(pk=trajectory_draft.pk).update(status=Campaign.Status.OPEN)
    c = client_for(reviewer)
    pages = [c.get(reverse("review:item", args=[a.code])).content.decode() for a in Assignment.objects.all()]
    assert len(pages) == 6
    for html in pages:
        assert "[File:" not in html and "lines total" not in html and "Current Step" not in html
        assert "/home/agent" not in html and "/workspace" not in html and "Nothing left to do" not in html
        assert re.search(r"&lt;workdir&gt;/[a-z]+\.py", html)
        assert "import random" in html  # the steps themselves are still there


def test_it_refuses_to_open_with_unresolved_tells_unless_accepted(client_for, admin_user, trajectory_draft) -> None:
    c = client_for(admin_user)
    page = c.get(reverse("review:campaign_detail", args=[trajectory_draft.code])).content.decode()
    assert 'id="tells-unresolved"' in page and "goto" in page
    url = reverse("review:campaign_open", args=[trajectory_draft.code])
    r = c.post(url, follow=True)
    trajectory_draft.refresh_from_db()
    assert trajectory_draft.status == Campaign.Status.DRAFT
    assert "Not opened" in r.content.decode() and "cannot be hidden" in r.content.decode()
    c.post(url, {"accept_tells": "1"})
    trajectory_draft.refresh_from_db()
    assert trajectory_draft.status == Campaign.Status.OPEN
    assert CampaignStatusChange.objects.get(campaign=trajectory_draft).by == admin_user
    page = c.get(reverse("review:campaign_detail", args=[trajectory_draft.code])).content.decode()
    accepted = re.search(r'id="tells-accepted">(.*?)</p>', page).group(1)
    assert accepted.startswith("Opened by ada_admin over:") and "cannot be hidden" in accepted


def test_it_opens_a_campaign_without_tells_and_keeps_one_with_unresolved_tells_a_draft(client_for, admin_user) -> None:
    c = client_for(admin_user)
    for name, runs in (
        ("clean", [_referee(n) for n in range(2)]),
        ("telling", [_mlgym(0), _mlgym(1), _mlgym(2), _referee(9), _referee(8), _referee(7)]),
    ):
        c.post(
            reverse("review:campaign_create"),
            {"name": name, "stage": TRAJECTORY, "rubric": trajectory_rubric().pk, "reviewers_per_item": 1,
             "reclaim_after_hours": 48, "status": "open", "runs": [r.pk for r in runs]},
        )  # fmt: skip
    assert Campaign.objects.get(name="clean").status == Campaign.Status.OPEN
    assert Campaign.objects.get(name="telling").status == Campaign.Status.DRAFT


def test_it_lets_only_admins_open_a_campaign(client_for, people, trajectory_draft) -> None:
    url = reverse("review:campaign_open", args=[trajectory_draft.code])
    for who in ("reviewer", "owner", "other"):
        assert client_for(people[who]).post(url, {"accept_tells": "1"}).status_code == 403, who
    anonymous = client_for(None).post(url, {"accept_tells": "1"})
    assert anonymous.status_code == 302 and reverse("accounts:login") in anonymous["Location"]
    assert client_for(people["admin"]).get(url).status_code == 405  # no writes on GET
    bad = reverse("review:campaign_open", args=["00000000-0000-0000-0000-000000000000"])
    assert client_for(people["admin"]).post(bad, {"accept_tells": "1"}).status_code == 404
    trajectory_draft.refresh_from_db()
    assert trajectory_draft.status == Campaign.Status.DRAFT and not CampaignStatusChange.objects.exists()
