"""The AI Scientist v2 papers MLR-Bench released: the PDF as the paper, both judges' reviews, hallucination reviews."""

from __future__ import annotations

import io
import json

import pytest

from benchmark.models import ResearchRun
from benchmark.research.aiscientist import PDF_READ_NOTE, import_ai_scientist, token_tracker
from benchmark.research.files import read_bytes
from judge.mlr_aiscientist import hallucination_findings, import_ai_scientist_reviews
from judge.models import Judgment
from tests.judge.factories import make_task
from tests.judge.test_mlr_reviews import SHARED, TASKS, needs_data

pytestmark = pytest.mark.django_db
CLAUDE = "anthropic:claude-3-7-sonnet-20250219"


@pytest.fixture
def media(settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path / "media")


@needs_data
def test_it_imports_the_ten_papers_with_their_pdfs_and_forty_reviews_once(media):
    for slug in TASKS:
        make_task(slug)
    report = import_ai_scientist(SHARED, stdout=io.StringIO())
    assert (len(report.runs), report.created, report.errors) == (10, 10, [])
    run = ResearchRun.objects.get(source="aisci_v2", task__slug="iclr2025_wsl")
    assert run.backbone == "o4-mini" and run.cost == pytest.approx(2.0141297) and run.tokens_sent == 659283
    paper = run.artifacts.get(stage="paper")
    folder = SHARED / "ai_scientist_v2_papers/o4-mini/iclr2025_wsl"
    # The PDF for admins; its text, tables and rendered figures for judges, search and (blinded) reviewers.
    assert paper.files[0] == "iclr2025_wsl.pdf" and paper.data["text_extracted"] is True
    figures = paper.files[1:]
    assert figures and all(f.startswith("pdf_figures/") and f.endswith(".png") for f in figures)
    assert paper.data["note"] == PDF_READ_NOTE and paper.data["extraction"]["library"].startswith("pdfplumber")
    assert len(paper.content) > 5000 and f"]({figures[0]})" in paper.content
    assert read_bytes(paper.code, "iclr2025_wsl.pdf") == (folder / "iclr2025_wsl.pdf").read_bytes()
    experiment = run.artifacts.get(stage="experiment")
    assert "experiments/research_summary.json" in experiment.files and experiment.data["code_files"]
    assert run.artifacts.get(stage="idea").content == (folder / "experiments/idea.md").read_text()

    out = io.StringIO()
    reviews = import_ai_scientist_reviews(SHARED, stdout=out)
    assert (reviews.created, reviews.failed) == (40, 0), out.getvalue()
    assert reviews.per_stage == {"end2end": 20, "hallucination": 20}
    audit = Judgment.objects.get(artifact=paper, rubric__stage="hallucination", judge_model=CLAUDE)
    released = json.loads((folder / "review_hallucination_claude-3-7-sonnet-20250219.json").read_text())
    assert len(audit.findings) == len(released["hallucinations"]) and audit.scores == {}
    assert {f["type"] for f in audit.findings} <= {"faked_results", "hallucinated_methodology", "incorrect_citation"}
    assert audit.findings[0]["evidence"] == released["hallucinations"][0]["evidence"]
    end2end = Judgment.objects.get(artifact=paper, rubric__stage="end2end", judge_model=CLAUDE)
    assert end2end.status == "succeeded" and end2end.score_of("clarity") == 7
    assert end2end.source_path == "ai_scientist_v2_papers/o4-mini/iclr2025_wsl/review_claude-3-7-sonnet-20250219.json"

    assert import_ai_scientist(SHARED, stdout=io.StringIO()).kept == 10
    again = import_ai_scientist_reviews(SHARED)
    assert (again.created, again.updated, again.unchanged) == (0, 0, 40)


def _folder(root, task="iclr2025_toy"):
    folder = root / "ai_scientist_v2_papers" / "o4-mini" / task
    (folder / "experiments").mkdir(parents=True)
    (folder / f"{task}.pdf").write_bytes(b"%PDF-1.4\n")
    (folder / "experiments" / "idea.md").write_text("# Idea\n")
    (folder / "experiments" / "research_summary.json").write_text("{}")
    (folder / "experiments" / "best_solution_1.py").write_text("print(1)\n")
    (folder / "token_tracker.json").write_text(
        '{"o4-mini": {"tokens": {"prompt": 10, "completion": 5}, "cost (USD)": 0.5}}'
    )
    return folder


def test_it_reports_faults_by_file_and_keeps_bad_reviews_as_failed(tmp_path, media):
    make_task("iclr2025_toy")
    folder = _folder(tmp_path)
    (folder / "iclr2025_toy.pdf").unlink()
    (folder / "token_tracker.json").write_text('{"o4-mini": {"tokens": {"prompt": 10')  # truncated
    (folder / "figures").mkdir()
    (folder / "review_hallucination_gemini-x.json").write_text(
        json.dumps({"has_hallucination": True, "hallucinations": [{"type": "Wrong Vibes", "evidence": "x"}]})
    )
    (folder / "review_hallucination_claude-x.json").write_text(
        json.dumps(
            {"has_hallucination": False, "hallucinations": [{"type": "Mathematical Errors", "evidence": "eq. 3"}]}
        )
    )
    report = import_ai_scientist(tmp_path, stdout=io.StringIO())
    faults = "\n".join(report.faults)
    where = "ai_scientist_v2_papers/o4-mini/iclr2025_toy"
    assert f"{where}: iclr2025_toy.pdf missing" in faults
    assert f"{where}: token_tracker.json: unreadable" in faults
    assert f"{where}: read by no importer: figures/" in faults
    run = ResearchRun.objects.get(source="aisci_v2")
    assert run.status == "failed" and run.settings["unpriced_stages"] and run.cost == 0
    reviews = import_ai_scientist_reviews(tmp_path)
    problems = "\n".join(reviews.problems)
    assert (
        "review_hallucination_gemini-x.json: kept as a failed judgment: hallucinations[1]: type 'Wrong Vibes'"
        in problems
    )
    assert "review_hallucination_claude-x.json: has_hallucination is false with 1 finding(s)" in problems
    kept = Judgment.objects.get(judge_model="anthropic:claude-x")
    assert kept.status == "succeeded" and kept.findings[0]["type"] == "math_error"


def test_it_reads_a_token_tracker_and_refuses_one_without_numbers(tmp_path):
    path = tmp_path / "token_tracker.json"
    path.write_text('{"a": {"tokens": {"prompt": 3, "completion": 2}, "cost (USD)": 0.25}, '
                    '"b": {"tokens": {"prompt": 1, "completion": 1}, "cost (USD)": 0.5}}')  # fmt: skip
    assert token_tracker(path) == (4, 3, 0.75, "")
    path.write_text('{"a": {"tokens": {"prompt": "many"}}}')
    assert token_tracker(path)[2:] == (
        None,
        "token_tracker.json: a: no tokens.prompt, tokens.completion and cost (USD) numbers",
    )


def test_it_names_the_hallucination_item_without_evidence():
    with pytest.raises(ValueError, match=r"hallucinations\[2\]: no evidence"):
        hallucination_findings(json.dumps({"hallucinations": [
            {"type": "Faked Experimental Results", "evidence": "log line 3"}, {"type": "Nonexistent Citations"}]}))  # fmt: skip
