"""MLR-Bench's stepwise results: 201 tasks x 6 models x 2 stages as artifacts, 2 x 2,412 reviews as
judgments; idempotent; the data's faults reported, never dropped."""

from __future__ import annotations

import io
import shutil

import pytest
from django.core.management import CommandError, call_command

from benchmark.models import Artifact, ResearchRun
from benchmark.research.stepwise import import_stepwise_results
from benchmark.research.tasks import import_mlr_tasks
from judge.mlr_stepwise import import_stepwise_reviews, stepwise_artifacts
from judge.models import Judgment
from tests.benchmark.mlrbench_data import MLRBENCH, needs_data

SIX = {
    "claude-3-7-sonnet-20250219",
    "deepseek-r1",
    "gemini-2.5-pro-preview-03-25",
    "ministral-8b",
    "o4-mini-2025-04-16",
    "qwen3-235b-a22b",
}
CLAUDE = "anthropic:claude-3-7-sonnet-20250219"
GEMINI = "google:gemini-2.5-pro-preview-03-25"


@needs_data
@pytest.mark.django_db
def test_it_imports_every_idea_proposal_and_review_once_and_reports_the_faults():
    out = io.StringIO()
    call_command("import_mlr_stepwise", str(MLRBENCH), stdout=out)
    text = out.getvalue()
    runs = ResearchRun.objects.filter(source=ResearchRun.Source.STEPWISE)
    own = stepwise_artifacts()
    six = {k: a for k, a in own.items() if k[1] in SIX}
    assert len({k[0] for k in six}) == 201
    assert sum(1 for k in six if k[2] == "idea") == 201 * 6 and sum(1 for k in six if k[2] == "proposal") == 201 * 6
    # Three more models wrote ideas on three tasks only: imported, reported, not reviewed.
    extra = {k for k in own if k[1] not in SIX}
    assert len(extra) == 9 and {k[2] for k in extra} == {"idea"} and len({k[0] for k in extra}) == 3
    assert "idea: gpt-4.1-2025-04-14 appears on 3 of 201 tasks only (iclr2025_delta, iclr2025_dl4c" in text
    assert runs.count() == 201 * 6 * 2 + 9
    # Each proposal run carries the chosen idea and the literature review as given inputs.
    proposal = six[("iclr2025_scope", "deepseek-r1", "proposal")]
    given = {a.stage: a for a in proposal.research_run.artifacts.all()}
    assert set(given) == {"idea", "literature", "proposal"}
    assert given["idea"].data["given"] is True and given["idea"].data["model"] == "deepseek-r1"
    assert given["idea"].content == six[("iclr2025_scope", "deepseek-r1", "idea")].content
    assert six[("iclr2025_scope", "deepseek-r1", "idea")].data["chosen"] is True
    assert proposal.data["input_idea_from"] == "deepseek-r1"
    assert given["literature"].content.startswith("1. **Title**: AttentionRAG")

    judgments = Judgment.objects.filter(artifact__research_run__source=ResearchRun.Source.STEPWISE)
    assert judgments.count() == 2 * 2412
    assert judgments.filter(status="succeeded").count() == 2 * 2412
    assert set(judgments.values_list("judge_model", flat=True)) == {CLAUDE, GEMINI}
    assert "stepwise reviews: 4824 in place (4824 created, 0 updated, 0 unchanged" in text
    idea = six[("iclr2025_scope", "deepseek-r1", "idea")]
    claude = judgments.get(artifact=idea, judge_model=CLAUDE)
    assert claude.rubric.stage == "idea" and claude.rubric.version == 1
    assert {k: v["score"] for k, v in claude.scores.items()} == {
        "consistency": 9, "clarity": 8, "novelty": 7, "feasibility": 7, "significance": 8, "overall": 8,
    }  # fmt: skip
    assert "read MLR-Bench's OverallAssessment as rubric key 'overall'" in claude.repairs
    assert claude.scores["overall"]["strengths"][0].startswith("Excellent alignment")
    assert claude.raw_reply.lstrip().startswith("{") and '"OverallAssessment"' in claude.raw_reply  # as released
    soundness = judgments.get(artifact=proposal, judge_model=GEMINI).score_of("soundness")
    assert soundness == 8
    # The unreviewed extra ideas are named, per judge.
    assert (
        "idea_proposal_reviews_claude-3-7-sonnet-20250219/iclr2025_delta/idea/idea_gpt-4.1-2025-04-14.json: missing"
        in text
    )

    codes = set(Artifact.objects.values_list("code", flat=True))
    again = io.StringIO()
    call_command("import_mlr_stepwise", str(MLRBENCH / "agent_results"), stdout=again)  # the reviews are not there
    call_command("import_mlr_stepwise", str(MLRBENCH), stdout=again)
    assert set(Artifact.objects.values_list("code", flat=True)) == codes  # judgments on them survive
    assert ResearchRun.objects.filter(source=ResearchRun.Source.STEPWISE).count() == runs.count()
    assert "runs 0 new, 2421 kept; artifacts 0 new, 0 updated, 4833 unchanged" in again.getvalue()
    assert "stepwise reviews: 4824 in place (0 created, 0 updated, 4824 unchanged" in again.getvalue()
    assert judgments.count() == 2 * 2412


def _mini_release(tmp_path, tasks=("iclr2025_scope", "iclr2025_wsl")):
    root = tmp_path / "mlrbench"
    for task in tasks:
        shutil.copytree(
            MLRBENCH / "agent_results" / "ideas_and_proposals" / task,
            root / "agent_results" / "ideas_and_proposals" / task,
        )
        for judge in ("claude-3-7-sonnet-20250219", "gemini-2.5-pro-preview-03-25"):
            src = MLRBENCH / "agent_reviews" / f"idea_proposal_reviews_{judge}" / task
            shutil.copytree(src, root / "agent_reviews" / f"idea_proposal_reviews_{judge}" / task)
    return root


@needs_data
@pytest.mark.django_db
def test_it_keeps_a_broken_review_as_a_failed_judgment_and_names_every_gap(tmp_path):
    import_mlr_tasks(MLRBENCH)
    root = _mini_release(tmp_path)
    steps = root / "agent_results" / "ideas_and_proposals" / "iclr2025_scope"
    (steps / "idea" / "idea_ministral-8b.md").write_text("   \n")  # empty
    (steps / "proposal" / "notes.txt").write_text("stray")
    reviews = root / "agent_reviews" / "idea_proposal_reviews_claude-3-7-sonnet-20250219" / "iclr2025_scope"
    (reviews / "idea" / "idea_qwen3-235b-a22b.json").write_text('{"Consistency": {"score": 11, "justification": "x"}')
    (reviews / "proposal" / "proposal_deepseek-r1.json").unlink()
    (reviews / "idea" / "idea_unknown-model.json").write_text("{}")
    out = io.StringIO()
    results = import_stepwise_results(root, stdout=out)
    report = import_stepwise_reviews(root, stdout=out)
    text = out.getvalue()
    assert results.per_stage == {"idea": 12, "proposal": 12} and not results.errors
    assert "FAULT iclr2025_scope/idea/idea_ministral-8b.md: empty; imported as a failed artifact" in text
    assert "FAULT iclr2025_scope/proposal/notes.txt: not a proposal_<model>.md file; skipped" in text
    empty = stepwise_artifacts()[("iclr2025_scope", "ministral-8b", "idea")]
    assert empty.status == Artifact.Status.FAILED and "empty in the release" in empty.error
    assert "iclr2025_scope/idea/idea_ministral-8b.md: empty" in " ".join(empty.research_run.settings["faults"])
    failed = Judgment.objects.get(status="failed")
    assert failed.judge_model == CLAUDE and failed.scores == {} and failed.raw_reply.startswith('{"Consistency"')
    assert report.failed == 1 and report.total == 2 * 24 - 1
    assert "idea_qwen3-235b-a22b.json: kept as a failed judgment: the JSON object is not closed" in text
    assert "iclr2025_scope/proposal/proposal_deepseek-r1.json: missing (not reviewed)" in text
    assert "idea_unknown-model.json: no imported idea of unknown-model on iclr2025_scope; not imported" in text


@pytest.mark.django_db
def test_the_command_exits_non_zero_on_a_folder_with_nothing_to_import(tmp_path):
    (tmp_path / "agent_results").mkdir()
    with pytest.raises(CommandError, match="nothing imported from .*no agent_results/ideas_and_proposals/ folder"):
        call_command("import_mlr_stepwise", str(tmp_path), stdout=io.StringIO())


@needs_data
@pytest.mark.django_db
def test_it_leaves_the_planner_statistics_of_what_it_imported(tmp_path):
    """On PostgreSQL the import analyses its tables (inside its own transaction too): the planner then
    knows the judgments are there, instead of planning nested scans for tables it believes empty."""
    from django.db import connection

    import_mlr_tasks(MLRBENCH)
    root = _mini_release(tmp_path)
    import_stepwise_results(root, stdout=io.StringIO())
    report = import_stepwise_reviews(root, stdout=io.StringIO())
    assert report.total == 2 * 24
    if connection.vendor != "postgresql":  # SQLite plans without them: nothing to refresh, nothing fails
        return
    with connection.cursor() as cursor:
        cursor.execute("select reltuples from pg_class where relname = 'judge_judgment'")
        (rows,) = cursor.fetchone()
    assert rows >= 2 * 24, rows


@needs_data
@pytest.mark.django_db
def test_it_saves_every_field_it_finds_changed_and_reads_a_moved_clone_as_unchanged(tmp_path):
    import_mlr_tasks(MLRBENCH)
    root = _mini_release(tmp_path, tasks=("iclr2025_scope",))
    import_stepwise_results(root, stdout=io.StringIO())
    assert import_stepwise_reviews(root).created == 24
    one = Judgment.objects.filter(source="mlrbench").first()
    Judgment.objects.filter(pk=one.pk).update(temperature=0.7, attempts=3)  # e.g. a row from an older import
    report = import_stepwise_reviews(root)
    assert (report.updated, report.unchanged) == (1, 23)
    one.refresh_from_db()
    assert (one.temperature, one.attempts) == (0.0, 1)  # saved, not only reported
    assert import_stepwise_reviews(root).unchanged == 24
    moved = shutil.move(root, tmp_path / "elsewhere")  # the same files in another clone
    again = import_stepwise_reviews(moved)
    assert (again.created, again.updated, again.unchanged) == (0, 0, 24)
    assert one.source_path.startswith("agent_reviews/idea_proposal_reviews_")
