"""The released MLR-Bench runs: 30 runs, every stage an artifact, files copied, faults reported, idempotent."""

from __future__ import annotations

import io
import json
import shutil

import pytest

from benchmark.models import Artifact, ResearchRun
from benchmark.research.files import stored_exists
from benchmark.research.imports import find_imported_run, import_mlr_runs, parse_references, summarise_trace
from benchmark.research.tasks import import_mlr_tasks
from tests.benchmark.mlrbench_data import MLRBENCH, needs_data


@pytest.fixture
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@needs_data
@pytest.mark.django_db
def test_it_imports_the_30_runs_with_every_stage_and_reports_the_faults(media):
    import_mlr_tasks(MLRBENCH)
    out = io.StringIO()
    report = import_mlr_runs(MLRBENCH, stdout=out)
    text = out.getvalue()
    assert len(report.runs) == 30 and not report.errors
    assert text.startswith("MLR-Bench runs: 30 imported (30 new, 0 updated)")
    assert ResearchRun.objects.filter(source=ResearchRun.Source.MLRBENCH).count() == 30
    assert Artifact.objects.count() == 150  # five stages per run
    assert set(ResearchRun.objects.values_list("backbone", flat=True)) == {"claude", "gemini", "o4-mini"}

    run = find_imported_run(task_slug="iclr2025_bi_align", backbone="claude")
    assert run.settings["model"] == "claude-3-7-sonnet-20250219"
    assert "MIT" in run.settings["attribution"]
    stages = {a.stage: a for a in run.artifacts.all()}
    assert stages["idea"].content.startswith("# Human-AI Value Co-Evolution Framework")
    assert (stages["idea"].tokens_sent, stages["idea"].tokens_received) == (818, 306)
    refs = stages["literature"].data["references"]
    assert refs[0]["url"] == "https://arxiv.org/abs/2502.01493" and refs[0]["year"] == "2025"
    experiment = stages["experiment"]
    assert experiment.cost == pytest.approx(1.1838173)
    assert experiment.data["trace"]["tool_calls"] > 0 and experiment.data["trace"]["result"]
    assert "claude_output.json" in experiment.files and "results/log.txt" in experiment.files
    # Named from the run's own trace, not assumed: every released run's experiment is Claude Code's.
    assert experiment.data["agent"]["name"] == "Claude Code"
    assert experiment.data["agent"]["model"] == "claude-3-7-sonnet-20250219"
    assert experiment.data["priced"] is True and "experiment" not in run.settings["unpriced_stages"]
    assert run.settings["unpriced_stages"] == ["idea", "literature", "proposal", "paper"]
    assert stored_exists(experiment.code, "claude_output.json")
    paper = stages["paper"]
    assert len(paper.files) == 24 and all(stored_exists(paper.code, f) for f in paper.files)
    assert run.cost == pytest.approx(sum(a.cost for a in stages.values()))
    assert run.tokens_sent == sum(a.tokens_sent for a in stages.values())

    # The data's faults, named by run.
    assert "FAULT end2end_gemini/iclr2025_dl4c: experiment: results/log.txt missing" in text
    assert "FAULT end2end_claude/iclr2025_scope: paper: embeds none of the run's 22 figures" in text
    assert (
        "FAULT end2end_gemini/iclr2025_scsl: extra folders left by the agent: claude_code_backup, results_backup"
        in text
    )
    # A paper citing ../results/x.png finds x.png next to it (no false "missing figure").
    trust = find_imported_run(task_slug="iclr2025_buildingtrust", backbone="claude")
    assert trust.artifacts.get(stage="paper").data["missing_figures"] == []


@needs_data
@pytest.mark.django_db
def test_it_is_idempotent_and_keeps_artifact_codes(media):
    import_mlr_tasks(MLRBENCH)
    import_mlr_runs(MLRBENCH, stdout=io.StringIO())
    codes = set(Artifact.objects.values_list("code", flat=True))
    report = import_mlr_runs(MLRBENCH / "agent_results", stdout=io.StringIO())
    assert (report.created, report.updated) == (0, 30)
    assert ResearchRun.objects.count() == 30
    assert set(Artifact.objects.values_list("code", flat=True)) == codes  # judgments on them survive


@needs_data
@pytest.mark.django_db
def test_it_records_a_broken_run_as_failed_and_imports_the_rest(media, tmp_path):
    import_mlr_tasks(MLRBENCH)
    root = tmp_path / "agent_results" / "end2end_claude"
    for name in ("iclr2025_wsl", "iclr2025_dl4c"):
        shutil.copytree(MLRBENCH / "agent_results" / "end2end_claude" / name, root / name)
    broken = root / "iclr2025_dl4c"
    (broken / "results" / "paper.md").unlink()
    (broken / "claude_output.json").write_text("[{not json")
    (broken / "idea_token_usage.json").write_text("{}")
    (root / "iclr2030_unknown").mkdir()
    (root / "iclr2030_unknown" / "task.md").write_text("# ?\n")
    out = io.StringIO()
    report = import_mlr_runs(tmp_path, stdout=out)
    text = out.getvalue()
    assert sorted(report.runs) == ["end2end_claude/iclr2025_dl4c", "end2end_claude/iclr2025_wsl"]
    assert "ERROR end2end_claude/iclr2030_unknown: task iclr2030_unknown is not imported" in text
    assert "end2end_claude/iclr2025_dl4c: experiment: claude_output.json is not valid JSON" in text
    assert (
        "end2end_claude/iclr2025_dl4c: idea: idea_token_usage.json has neither input_tokens nor prompt_tokens" in text
    )
    run = find_imported_run(task_slug="iclr2025_dl4c", backbone="claude")
    assert run.status == ResearchRun.Status.FAILED and "paper" in run.error
    assert run.artifacts.get(stage="paper").status == Artifact.Status.FAILED
    assert find_imported_run(task_slug="iclr2025_wsl", backbone="claude").status == ResearchRun.Status.FINISHED


@pytest.mark.django_db
def test_it_reports_a_folder_without_runs(media, tmp_path):
    out = io.StringIO()
    report = import_mlr_runs(tmp_path / "missing", stdout=out)
    assert report.errors and "not a folder" in out.getvalue()


def test_it_parses_references_and_summarises_a_trace():
    refs = parse_references(
        "1. **Title**: A Paper (arXiv:2401.00001)\n   - **Authors**: A. B\n   - **Year**: 2024\n"
        "2. **Title**: No Link\n   - **Summary**: s\n"
    )
    assert refs[0] == {
        "title": "A Paper",
        "authors": "A. B",
        "year": "2024",
        "summary": "",
        "url": "https://arxiv.org/abs/2401.00001",
    }
    assert refs[1]["url"] == "" and refs[1]["summary"] == "s"
    trace = [
        {"role": "user", "content": "go"},
        {
            "type": "message",
            "role": "assistant",
            "model": "m",
            "usage": {"input_tokens": 3, "output_tokens": 4},
            "content": [{"type": "tool_use", "name": "Bash", "input": {}}],
        },
        {"role": "system", "cost_usd": 0.5, "duration_ms": 1500, "result": "done"},
    ]
    summary, faults = summarise_trace(trace)
    assert (summary["tool_calls"], summary["cost_usd"], summary["duration_s"], faults) == (1, 0.5, 1.5, [])
    assert summarise_trace(trace[:2])[1] == ["trace has no final system item with cost_usd"]
    assert json.dumps(summary)  # stored in a JSONField


@needs_data
@pytest.mark.django_db
def test_it_imports_tasks_and_runs_in_the_demo_step_only_when_mlrbench_dir_is_set(media, settings):
    from benchmark.demo import mlrbench_import

    settings.MLRBENCH_DIR = ""
    out = io.StringIO()
    mlrbench_import(out)
    assert "skipped (MLRBENCH_DIR not set)" in out.getvalue() and not ResearchRun.objects.exists()
    settings.MLRBENCH_DIR = str(MLRBENCH)
    out = io.StringIO()
    mlrbench_import(out)
    assert "201 read" in out.getvalue() and "MLR-Bench runs: 30 imported" in out.getvalue()
    assert "MLR-Bench stepwise experiments and write-ups: 10 experiments, 30 papers" in out.getvalue()
    assert "AI Scientist v2 papers: 10 imported" in out.getvalue() and "NOT READ" not in out.getvalue()
    assert "FAULT" not in out.getvalue()  # faults stay on the pages; the demo log stays short
