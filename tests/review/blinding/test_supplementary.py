"""Supplementary files by allow-list: a reviewer opens the experiment's code, results, trace and logs,
never a judge's or reviewer's output (issue #30: `review_hallucination_[system].json` beside every
o4-mini paper of the release anchored the very labels the study compares with the judge)."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.urls import reverse

from benchmark.models import Artifact, ResearchRun
from benchmark.research.files import file_store
from review.assignment.services import campaign_assign
from review.blinding import blinded, supplementary
from review.campaigns.services import campaign_create
from review.models import Assignment
from tests.review.factories import make_paper, make_rubric

pytestmark = pytest.mark.django_db

VERDICT = "the code repository contains simulated results"
HALLUCINATION = json.dumps(
    {"has_hallucination": True, "hallucinations": [{"type": "Faked", "description": VERDICT}], "confidence": 4}
)
# A judge's review under an innocent name: known by its shape, not its name.
DISGUISED = json.dumps(
    {k: {"score": 3, "justification": f"JUDGE-SAYS {k}"} for k in ("Clarity", "Novelty", "Soundness", "Overall")}
)


def _experiment(paper: Artifact, files: dict[str, str]) -> Artifact:
    experiment = Artifact.objects.create(
        research_run=paper.research_run, stage=Artifact.Stage.EXPERIMENT, content="results", files=list(files)
    )
    for rel, text in files.items():
        file_store(artifact=experiment, relative=rel, data=text.encode())
    return experiment


@pytest.fixture
def item_with_verdicts(reviewer):
    paper = make_paper(backbone="o4-mini")
    experiment = _experiment(
        paper,
        {
            "claude_output.json": '[{"type": "message", "content": "ran train.py"}]',
            "review_hallucination_gemini-2.5-pro-preview.json": HALLUCINATION,
            "results/results.md": "# Results\n\naccuracy 0.91\n",
            "results/metrics.json": '{"accuracy": 0.91, "overall": 0.9}',
            "results/analysis.json": DISGUISED,
            "results/judge_scores.csv": "criterion,score\noverall,3\n",
            "claude_code/train.py": "print('train')\n",
            "token_tracker.json": '{"tokens": 12}',
        },
    )
    campaign = campaign_create(
        name="allow", rubric=make_rubric(), artifacts=[paper], reviewers=[reviewer], reviewers_per_item=1,
        show_supplementary=True,
    )  # fmt: skip
    campaign_assign(campaign=campaign)
    return {"assignment": Assignment.objects.get(reviewer=reviewer), "experiment": experiment}


def _listed(client, assignment) -> list[str]:
    html = client.get(reverse("review:item", args=[assignment.code])).content.decode()
    return re.findall(r'href="/review/a/[^"]+/s/[^"]+"[^>]*>([^<]+)<', html)


def test_it_lists_the_experiments_code_results_and_trace_and_no_judge_output(client_for, reviewer, item_with_verdicts):
    listed = _listed(client_for(reviewer), item_with_verdicts["assignment"])
    assert sorted(listed) == sorted(
        ["claude_output.json", "results/results.md", "results/metrics.json", "claude_code/train.py"]
    )


@pytest.mark.parametrize(
    "rel", ["review_hallucination_gemini-2.5-pro-preview.json", "results/analysis.json", "results/judge_scores.csv"]
)
def test_it_serves_no_judge_output_even_by_a_guessed_url(client_for, reviewer, item_with_verdicts, rel):
    """The id a listing would have given: the serving view refuses it, as it refuses any unlisted file."""
    assignment, experiment = item_with_verdicts["assignment"], item_with_verdicts["experiment"]
    fid = blinded.figure_id(assignment.code, f"supplementary:{experiment.pk}:{rel}")
    r = client_for(reviewer).get(reverse("review:supplementary", args=[assignment.code, fid]))
    assert r.status_code == 404
    assert VERDICT not in r.content.decode() and "JUDGE-SAYS" not in r.content.decode()
    # The same URL of an allowed file is served: the 404 is the allow-list's, not a wrong id.
    ok = blinded.figure_id(assignment.code, f"supplementary:{experiment.pk}:results/results.md")
    assert client_for(reviewer).get(reverse("review:supplementary", args=[assignment.code, ok])).status_code == 200


def test_it_shows_the_admin_each_withheld_file_and_why(client_for, admin_user, item_with_verdicts) -> None:
    campaign = item_with_verdicts["assignment"].campaign
    html = client_for(admin_user).get(reverse("review:campaign_detail", args=[campaign.code])).content.decode()
    section = html[html.index('id="blinding-changes"') : html.index('id="tells"')]
    for shown in (
        "review_hallucination_gemini-2.5-pro-preview.json: a judge&#x27;s or reviewer&#x27;s output (its name)",
        "results/analysis.json: a judge&#x27;s or reviewer&#x27;s output (its content)",
        "results/judge_scores.csv: a judge&#x27;s or reviewer&#x27;s output (its name)",
        "token_tracker.json: not on the allow-list",
    ):
        assert shown in section
    assert "results/results.md:" not in section and "4 withheld" in section


@pytest.mark.parametrize(
    ("rel", "kind"),
    [
        ("results/results.md", "results"),
        ("results/sub/curve.csv", "results"),
        ("claude_code/src/model.py", "code"),
        ("claude_output.json", "trace"),
        ("codex_trace.jsonl", "trace"),
        ("log.txt", "log"),
        ("run.log", "log"),
        ("review_hallucination_claude-3-7-sonnet-20250219.json", None),
        ("review_claude-3-7-sonnet-20250219.json", None),
        ("results/ReviewScores.json", None),
        ("results/llm_judgment.md", None),
        ("token_tracker.json", None),
        ("proposal_token_usage.json", None),
        ("results/model.pt", None),
        ("notes.md", None),
    ],
)
def test_it_names_the_kind_of_each_path_or_none(rel, kind):
    assert supplementary.path_kind(rel) == kind


@pytest.mark.parametrize(
    ("data", "judge"),
    [
        (HALLUCINATION, True),
        (DISGUISED, True),
        ('{"Clarity": 7, "Novelty": 6, "Soundness": 5, "Decision": "accept"}', True),
        ('[{"strengths": ["clear"], "weaknesses": []}]', True),
        ('{"accuracy": 0.91, "overall": 0.9, "confidence": 0.95}', False),
        ('[{"type": "message", "content": "hello"}]', False),
        ("not json at all", False),
    ],
)
def test_it_knows_a_judge_output_by_its_shape(data, judge):
    paper = make_paper()
    file_store(artifact=paper, relative="results/x.json", data=data.encode())
    assert supplementary.judge_content(str(paper.code), "results/x.json") is judge


MLRBENCH = Path(settings.MLRBENCH_DIR or Path(settings.BASE_DIR).parent / "shared" / "mlrbench")


@pytest.mark.slow
@pytest.mark.shared_data(MLRBENCH / "agent_results")
def test_it_keeps_the_released_hallucination_verdicts_from_the_o4_mini_reviewers(client_for, reviewer, settings):
    """The release: every o4-mini run carries two `review_hallucination_*.json` files, imported beside its
    experiment; none is listed or served, and the campaign's tell check names the file as o4-mini's."""
    call_command("import_mlr_results", str(MLRBENCH), stdout=io.StringIO())
    papers = list(Artifact.objects.filter(stage=Artifact.Stage.PAPER, research_run__source=ResearchRun.Source.MLRBENCH))
    campaign = campaign_create(
        name="released", rubric=make_rubric(), artifacts=papers, reviewers=[reviewer], reviewers_per_item=1,
        show_supplementary=True,
    )  # fmt: skip
    campaign_assign(campaign=campaign)
    verdicts = [
        (artifact, rel)
        for artifact in Artifact.objects.filter(stage=Artifact.Stage.EXPERIMENT)
        for rel in artifact.files
        if "review_hallucination_" in rel
    ]
    assert len(verdicts) == 20  # the data shows the problem: 10 o4-mini runs, two judges each
    assert {a.research_run.backbone for a, _ in verdicts} == {"o4-mini"}
    client = client_for(reviewer)
    for assignment in Assignment.objects.filter(item__artifact__research_run__backbone="o4-mini"):
        assignment.item.campaign = campaign
        listed = blinded.supplementary_files(assignment.item)
        assert listed and not any("hallucination" in rel for _, rel in listed)
        html = client.get(reverse("review:item", args=[assignment.code])).content.decode()
        assert "review_hallucination" not in html
        for artifact, rel in verdicts:
            if artifact.research_run_id == assignment.item.artifact.research_run_id:
                fid = blinded.figure_id(assignment.code, f"supplementary:{artifact.pk}:{rel}")
                assert client.get(reverse("review:supplementary", args=[assignment.code, fid])).status_code == 404
    campaign.refresh_from_db()
    tell = next(t for t in campaign.tells["tells"] if t["key"] == "file:review_hallucination_[system].json")
    assert tell["system"] == "o4-mini" and tell["action"] == "never shown"
    assert tell["counts"] == {"claude": [0, 10], "gemini": [0, 10], "o4-mini": [10, 10]}
