"""Importing MLR-Bench's released end-to-end reviews as judgments of the imported papers."""

import io
import json
import os
from pathlib import Path

import pytest
from django.core.management import call_command

from benchmark.models import ResearchRun
from benchmark.research.writeups import import_writeups
from judge.mlr_reviews import import_mlr_reviews, judge_label
from judge.models import Judgment
from tests.judge.factories import make_artifact, make_research_run, make_task

pytestmark = pytest.mark.django_db

SHARED = Path(os.environ.get("MLRBENCH_DIR") or Path(__file__).resolve().parents[2].parent / "shared" / "mlrbench")
if not (SHARED / "agent_reviews").is_dir():
    SHARED = Path("/work/shared/mlrbench")
needs_data = pytest.mark.shared_data(SHARED / "agent_reviews")
TASKS = ["iclr2025_bi_align", "iclr2025_buildingtrust", "iclr2025_data_problems", "iclr2025_dl4c", "iclr2025_mldpr",
         "iclr2025_question", "iclr2025_scope", "iclr2025_scsl", "iclr2025_verifai", "iclr2025_wsl"]  # fmt: skip
BACKBONES = ["claude", "gemini", "o4-mini"]
CLAUDE_JUDGE = "anthropic:claude-3-7-sonnet-20250219"
GEMINI_JUDGE = "google:gemini-2.5-pro-preview"


def _released_papers(tasks=TASKS, backbones=BACKBONES):
    """What benchmark.research.imports creates, reduced to what the review import needs: one paper per run."""
    papers = {}
    for slug in tasks:
        task = make_task(slug)
        for backbone in backbones:
            run = make_research_run(task=task, backbone=backbone, source=ResearchRun.Source.MLRBENCH)
            papers[(slug, backbone)] = make_artifact(run, "paper", f"paper of {slug} by {backbone}")
    return papers


def test_it_labels_the_released_judges_faithfully():
    assert judge_label("claude-3-7-sonnet-20250219") == CLAUDE_JUDGE
    assert judge_label("gemini-2.5-pro-preview") == GEMINI_JUDGE
    assert judge_label("o4-mini") == "openai:o4-mini"
    assert judge_label("llama-3") == "unknown:llama-3"


@needs_data
def test_it_imports_every_released_review_once_under_its_stage_rubric_and_condition(settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path / "media")
    papers = _released_papers()
    import_writeups(SHARED, stdout=io.StringIO())  # the stepwise experiments and papers the stage reviews are of
    out = io.StringIO()
    report = import_mlr_reviews(SHARED, stdout=out)
    assert (report.created, report.failed, report.problems) == (150, 0, [])
    assert report.per_stage == {"end2end": 60, "end2end without code": 10, "experiment": 20, "writing": 60}
    assert Judgment.objects.filter(source="mlrbench", status="succeeded").count() == 150
    assert set(Judgment.objects.values_list("judge_model", flat=True)) == {CLAUDE_JUDGE, GEMINI_JUDGE}
    judgment = Judgment.objects.get(
        artifact=papers[("iclr2025_bi_align", "claude")], judge_model=CLAUDE_JUDGE, with_supplementary=True
    )
    released = json.loads(
        (
            SHARED / "agent_reviews/subset_reviews_claude-3-7-sonnet-20250219/iclr2025_bi_align/review_claude.json"
        ).read_text()
    )
    assert judgment.rubric.stage == "end2end" and judgment.rubric.version == 1
    assert judgment.score_of("novelty") == released["Novelty"]["score"]
    assert judgment.score_of("confidence") == released["Confidence"]
    assert judgment.scores["overall"]["strengths"] == released["Overall"]["strengths"]
    assert judgment.raw_reply.startswith("{")
    assert judgment.source_path == (
        "agent_reviews/subset_reviews_claude-3-7-sonnet-20250219/iclr2025_bi_align/review_claude.json"
    )  # relative to the release: the same file from another clone is the same judgment

    # The no-code ablation: the same paper, the same judge, a second judgment marked as without the code,
    # held by a judge experiment so that panels and campaign agreement (experiment IS NULL) never mix the two.
    o4 = papers[("iclr2025_bi_align", "o4-mini")]
    with_code, without = (
        Judgment.objects.get(artifact=o4, judge_model=CLAUDE_JUDGE, with_supplementary=flag) for flag in (True, False)
    )
    assert with_code.experiment is None and without.experiment.config.with_supplementary is False
    assert without.experiment.config.name == f"MLR-Bench ablation: {CLAUDE_JUDGE} without code"
    assert without.experiment.gold_set.artifacts.count() == 5 and without.experiment.status == "finished"
    assert Judgment.objects.filter(artifact=o4, experiment__isnull=True, rubric__stage="end2end").count() == 2
    no_code = json.loads(
        (SHARED / "agent_reviews/subset_reviews_claude-3-7-sonnet-20250219/iclr2025_bi_align/review_o4-mini_no_code.json")
        .read_text()
    )  # fmt: skip
    assert without.score_of("overall") == no_code["Overall"]["score"] and without.rubric == with_code.rubric
    assert without.source_path.endswith("review_o4-mini_no_code.json")

    # Experiment-stage reviews, of Claude Code's stepwise experiment, under the experiment rubric: the
    # hallucination verdict is the flag. Gemini flags 8 of the 10 experiments, Claude 1.
    experiments = Judgment.objects.filter(rubric__stage="experiment")
    assert {j.artifact.research_run.backbone for j in experiments} == {"claude"}
    assert all(j.artifact.stage == "experiment" and j.with_supplementary for j in experiments)
    flagged = {
        judge: sum(j.score_of("hallucination") == 1 for j in experiments.filter(judge_model=judge))
        for judge in (CLAUDE_JUDGE, GEMINI_JUDGE)
    }
    assert flagged == {CLAUDE_JUDGE: 1, GEMINI_JUDGE: 8}
    bi_align = experiments.get(judge_model=CLAUDE_JUDGE, artifact__research_run__task__slug="iclr2025_bi_align")
    released = json.loads(
        (SHARED / "agent_reviews/subset_reviews_claude-3-7-sonnet-20250219/iclr2025_bi_align/experiments/claude.json")
        .read_text()
    )  # fmt: skip
    assert bi_align.scores["hallucination"]["justification"] == released["Hallucination"]["details"]
    assert bi_align.score_of("insightfulness") == released["Insightfulness"]["score"]
    assert bi_align.score_of("overall") == released["OverallAssessment"]["score"]
    assert any("OverallAssessment" in r for r in bi_align.repairs)

    # Writing-stage reviews, of each writing model's paper, under the writing rubric.
    writing = Judgment.objects.filter(rubric__stage="writing")
    assert {j.artifact.research_run.backbone for j in writing} == {
        "claude-3-7-sonnet-20250219", "gemini-2.5-pro-preview", "o4-mini-2025-04-16"
    }  # fmt: skip
    assert all(j.artifact.research_run.stages == ["paper"] and not j.with_supplementary for j in writing)

    again = import_mlr_reviews(SHARED)
    assert (again.created, again.updated, again.unchanged) == (0, 0, 150)
    assert Judgment.objects.count() == 150


def test_it_reports_missing_malformed_and_orphan_files_and_keeps_the_rest(tmp_path):
    papers = _released_papers(tasks=["iclr2025_a", "iclr2025_b"], backbones=["claude"])
    base = tmp_path / "agent_reviews" / "subset_reviews_gemini-2.5-pro-preview"
    good = {"Clarity": {"score": 7, "justification": "clear"}, "Novelty": {"score": 6, "justification": "some"},
            "Soundness": {"score": 5, "justification": "thin"}, "Significance": {"score": 6, "justification": "ok"},
            "Overall": {"score": 6, "strengths": ["s"], "weaknesses": ["w"]}, "Confidence": 4}  # fmt: skip
    (base / "iclr2025_a").mkdir(parents=True)
    (base / "iclr2025_a" / "review_claude.json").write_text(json.dumps(good))
    (base / "iclr2025_a" / "review_gemini.json").write_text(json.dumps(good))  # no such paper imported
    (base / "iclr2025_a" / "notes.txt").write_text("hi")
    (base / "iclr2025_b").mkdir()
    (base / "iclr2025_b" / "review_claude.json").write_text('{"Clarity": {"score": 7, "justification": "x"},')
    other = tmp_path / "agent_reviews" / "subset_reviews_claude-3-7-sonnet-20250219" / "iclr2025_a"
    other.mkdir(parents=True)
    (other / "review_claude.json").write_text(json.dumps({**good, "Novelty": {"score": 12, "justification": "!"}}))
    report = import_mlr_reviews(tmp_path)
    assert (report.created, report.failed) == (3, 2)
    problems = "\n".join(report.problems)
    assert "iclr2025_a/review_gemini.json: no imported paper for task 'iclr2025_a', backbone 'gemini'" in problems
    assert "notes.txt: a file no importer reads" in problems
    assert "iclr2025_b/review_claude.json: kept as a failed judgment: the JSON object is not closed" in problems
    assert "novelty.score: Input should be less than or equal to 10 (got 12)" in problems
    assert "subset_reviews_claude-3-7-sonnet-20250219/iclr2025_b/review_claude.json: missing" in problems
    broken = Judgment.objects.get(artifact=papers[("iclr2025_b", "claude")])
    assert broken.status == "failed" and broken.scores == {} and broken.raw_reply.startswith('{"Clarity"')
    fine = Judgment.objects.get(artifact=papers[("iclr2025_a", "claude")], judge_model=GEMINI_JUDGE)
    assert fine.status == "succeeded" and fine.score_of("overall") == 6
    # A corrected file replaces the failed judgment on the next import.
    (base / "iclr2025_b" / "review_claude.json").write_text(json.dumps(good))
    again = import_mlr_reviews(tmp_path)
    assert (again.created, again.updated, again.unchanged) == (0, 1, 2)
    broken.refresh_from_db()
    assert broken.status == "succeeded" and broken.error == ""


def test_it_reports_a_folder_without_reviews(tmp_path):
    report = import_mlr_reviews(tmp_path)
    assert report.total == 0 and "agent_reviews: no such folder" in report.problems[0]


@needs_data
def test_it_imports_everything_released_with_one_command_and_names_what_it_does_not_read(tmp_path, settings):
    settings.MEDIA_ROOT = str(tmp_path / "media")
    out = io.StringIO()
    call_command("import_mlr_results", str(SHARED), "--skip-stepwise", stdout=out)
    call_command("import_mlr_results", str(SHARED), "--skip-stepwise", stdout=out)
    assert ResearchRun.objects.filter(source="mlrbench").count() == 30
    assert ResearchRun.objects.filter(source="stepwise").count() == 40  # 10 experiments, 30 papers
    assert ResearchRun.objects.filter(source="aisci_v2").count() == 10
    # 150 on MLR-Agent's papers and experiments, 40 on AI Scientist v2's papers.
    assert Judgment.objects.filter(source="mlrbench", status="succeeded").count() == 190
    assert "190 judgment(s) in place" in out.getvalue() and "NOT READ" not in out.getvalue()


def test_it_names_a_release_folder_that_no_importer_reads(tmp_path):
    from benchmark.research.release import unread_folders

    for folder in ("tasks", "agent_results/end2end_codex", "agent_results/new_thing", "agent_reviews/other", "extra"):
        (tmp_path / folder).mkdir(parents=True)
    assert unread_folders(tmp_path) == ["extra/", "agent_results/new_thing/", "agent_reviews/other/"]


def test_it_refuses_a_missing_folder_on_the_command(tmp_path):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="no such folder"):
        call_command("import_mlr_results", str(tmp_path / "nope"))


def test_it_seeds_rubrics_and_says_when_there_is_no_mlrbench_data(settings):
    settings.MLRBENCH_DIR = ""
    from judge import demo

    out = io.StringIO()
    demo.seed(stdout=out)
    assert "skipped" in out.getvalue()
    from judge.models import Rubric

    assert Rubric.objects.count() == 7  # version 1 of each stage, the trajectory rubric included


def test_it_imports_stage_reviews_of_another_agents_writeups_and_names_what_does_not_fit(tmp_path, settings):
    from tests.benchmark.research.test_writeups import _folder

    settings.MEDIA_ROOT = str(tmp_path / "media")
    make_task("iclr2025_toy")
    _folder(tmp_path, agent="codex", papers=("writer-a", "writer-b"))
    _folder(tmp_path, agent="claude", papers=("writer-a",))
    import_writeups(tmp_path, stdout=io.StringIO())
    base = tmp_path / "agent_reviews" / "subset_reviews_gemini-2.5-pro-preview" / "iclr2025_toy"
    (base / "experiments").mkdir(parents=True)
    (base / "paper").mkdir()
    (base / "figures").mkdir()  # a folder nothing reads
    experiment = {"Hallucination": {"has_hallucination": True, "details": "numbers not in the log"},
                  **{k: {"score": 4, "justification": k} for k in
                     ("Consistency", "Completeness", "Novelty", "Soundness", "Insightfulness", "Significance")},
                  "OverallAssessment": {"score": 3, "strengths": ["s"], "weaknesses": ["w"]}}  # fmt: skip
    (base / "experiments" / "codex.json").write_text(json.dumps(experiment))
    writing = {k: {"score": 6, "justification": k} for k in ("Consistency", "Clarity", "Completeness", "Soundness")}
    (base / "paper" / "writer-b.json").write_text(json.dumps({**writing, "OverallAssessment": {"score": 6, "justification": "ok"}}))  # fmt: skip
    (base / "paper" / "writer-a.json").write_text(json.dumps(writing))  # two agents' writer-a papers: which one?
    (base / "experiments" / "claude.json").write_text('{"Hallucination": {"has_hallucination": "maybe"')  # cut
    report = import_mlr_reviews(tmp_path)
    problems = "\n".join(report.problems)
    assert report.per_stage == {"experiment": 2, "writing": 1} and (report.created, report.failed) == (3, 1)
    flagged = Judgment.objects.get(rubric__stage="experiment", artifact__research_run__backbone="codex")
    assert flagged.score_of("hallucination") == 1 and flagged.score_of("overall") == 3
    assert flagged.scores["hallucination"]["justification"] == "numbers not in the log" and flagged.with_supplementary
    assert Judgment.objects.get(rubric__stage="writing").artifact.research_run.settings["coding_agent"] == "Codex CLI"
    assert "experiments/claude.json: kept as a failed judgment: the JSON object is not closed" in problems
    assert "paper/writer-a.json: 2 imported papers of 'writer-a' on 'iclr2025_toy'" in problems
    assert "iclr2025_toy/figures: a folder no importer reads" in problems
    again = import_mlr_reviews(tmp_path)
    assert (again.created, again.updated, again.unchanged) == (0, 0, 3)
