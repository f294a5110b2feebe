"""MLR-Bench's stepwise experiment stage and writing stage: a run per coding agent's experiment, one per paper."""

from __future__ import annotations

import io

import pytest

from benchmark.models import Artifact, ResearchRun
from benchmark.research.files import stored_exists
from benchmark.research.tasks import import_mlr_tasks
from benchmark.research.writeups import find_writeup_runs, import_writeups
from tests.benchmark.mlrbench_data import MLRBENCH, needs_data
from tests.judge.factories import make_task

pytestmark = pytest.mark.django_db
WRITERS = {"claude-3-7-sonnet-20250219", "gemini-2.5-pro-preview", "o4-mini-2025-04-16"}


@pytest.fixture
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@needs_data
def test_it_imports_claude_codes_ten_experiments_and_thirty_papers_once(media):
    import_mlr_tasks(MLRBENCH)
    out = io.StringIO()
    report = import_writeups(MLRBENCH, stdout=out)
    assert (len(report.experiments), len(report.papers), report.created, report.errors) == (10, 30, 40, [])
    runs = ResearchRun.objects.filter(source=ResearchRun.Source.STEPWISE)
    experiments = runs.filter(stages=["experiment"])
    assert experiments.count() == 10 and set(experiments.values_list("backbone", flat=True)) == {"claude"}
    assert set(runs.filter(stages=["paper"]).values_list("backbone", flat=True)) == WRITERS

    run = experiments.get(task__slug="iclr2025_bi_align")
    experiment = run.artifacts.get(stage="experiment")
    assert experiment.data["agent"]["name"] == "Claude Code" and experiment.data["trace"]["tool_calls"] > 0
    assert "claude_code/main.py" in experiment.files and "results/log.txt" in experiment.files
    assert not any("paper_" in f for f in experiment.files)  # the papers belong to the writing runs
    assert experiment.cost > 0 and stored_exists(experiment.code, "claude_output.json")
    given = run.artifacts.get(stage="proposal")
    assert given.data["given"] is True and given.content.strip()

    writing = runs.get(stages=["paper"], task__slug="iclr2025_bi_align", backbone="o4-mini-2025-04-16")
    paper = writing.artifacts.get(stage="paper")
    released = MLRBENCH / "agent_results/experiments_and_writeups/claude/iclr2025_bi_align/results"
    assert paper.content == (released / "paper_o4-mini-2025-04-16.md").read_text()
    assert paper.files and all(stored_exists(paper.code, f) for f in paper.files)
    inputs = writing.artifacts.get(stage="experiment")
    assert inputs.data["given"] is True and inputs.data["from_run"] == str(run.code)
    assert inputs.content == experiment.content
    assert writing.settings["release_path"].endswith("claude/iclr2025_bi_align/results/paper_o4-mini-2025-04-16.md")

    # A folder nothing reads is named: iclr2025_data_problems has an output/ folder beside the code.
    assert "experiments_and_writeups/claude/iclr2025_data_problems: folders read by no importer: output/" in (
        out.getvalue()
    )
    codes = set(Artifact.objects.values_list("code", flat=True))
    again = import_writeups(MLRBENCH, stdout=io.StringIO())
    assert (again.created, again.kept) == (0, 40)
    assert set(Artifact.objects.values_list("code", flat=True)) == codes


def _folder(root, agent="codex", task="iclr2025_toy", papers=("writer-a",)):
    run_dir = root / "agent_results" / "experiments_and_writeups" / agent / task
    (run_dir / "results").mkdir(parents=True)
    for name in ("task.md", "idea.md", "related_work.md", "proposal.md"):
        (run_dir / name).write_text(f"# {name}\n")
    (run_dir / f"{agent}_log.log").write_text("ran train.py\nloss 0.3\n")
    (run_dir / f"{agent}_code").mkdir()
    (run_dir / f"{agent}_code" / "train.py").write_text("print('loss', 0.3)\n")
    (run_dir / "results" / "results.md").write_text("# Results\n\nloss 0.3\n")
    (run_dir / "results" / "log.txt").write_text("loss 0.3\n")
    (run_dir / "results" / "loss.png").write_bytes(b"\x89PNG\r\n")
    for model in papers:
        (run_dir / "results" / f"paper_{model}.md").write_text("# Paper\n\n![loss](loss.png)\n![gone](gone.png)\n")
    return run_dir


def test_it_reads_another_coding_agents_folder_and_reports_its_faults(tmp_path, media):
    make_task("iclr2025_toy")
    run_dir = _folder(tmp_path)
    (run_dir / "backup").mkdir()
    (run_dir / "related_work.md").unlink()
    (tmp_path / "agent_results" / "experiments_and_writeups" / "notes.txt").write_text("x")
    report = import_writeups(tmp_path, stdout=io.StringIO())
    assert (report.experiments, report.papers, report.errors) == (
        ["codex/iclr2025_toy"],
        ["codex/iclr2025_toy/writer-a"],
        [],
    )
    experiment = ResearchRun.objects.get(stages=["experiment"]).artifacts.get(stage="experiment")
    assert experiment.data["agent"]["name"] == "Codex CLI" and experiment.data["trace_file"] == ""
    assert "codex_code/train.py" in experiment.files and "codex_log.log" in experiment.files
    faults = "\n".join(report.faults)
    base = "experiments_and_writeups/codex/iclr2025_toy"
    assert f"{base}: related_work.md missing" in faults
    assert f"{base}: folders read by no importer: backup/" in faults
    assert "experiments_and_writeups/notes.txt: not a coding agent's folder; not read" in faults
    assert f"{base}/results/paper_writer-a.md: paper: cites figures the run does not have: gone.png" in faults
    paper = ResearchRun.objects.get(stages=["paper"]).artifacts.get(stage="paper")
    assert paper.files == ["loss.png"] and paper.data["missing_figures"] == ["gone.png"]
    assert ResearchRun.objects.get(stages=["paper"]).settings["faults"]  # kept on the run, shown on its page


def test_it_shows_the_imported_runs_pages_to_researchers(tmp_path, media, client_for, researcher, reviewer):
    from django.urls import reverse

    make_task("iclr2025_toy")
    _folder(tmp_path)
    import_writeups(tmp_path, stdout=io.StringIO())
    experiment = ResearchRun.objects.get(stages=["experiment"])
    writing = ResearchRun.objects.get(stages=["paper"])
    page = client_for(researcher).get(reverse("benchmark:research_run", args=[experiment.code]))
    assert page.status_code == 200 and "codex_code/train.py" in page.content.decode()
    paper = client_for(researcher).get(reverse("benchmark:research_paper", args=[writing.code]))
    assert paper.status_code == 200 and "loss.png" in paper.content.decode()
    assert client_for(reviewer).get(reverse("benchmark:research_paper", args=[writing.code])).status_code == 403


def test_it_keeps_two_agents_papers_by_the_same_writer_apart(tmp_path, media):
    make_task("iclr2025_toy")
    _folder(tmp_path, agent="claude")
    _folder(tmp_path, agent="codex")
    import_writeups(tmp_path, stdout=io.StringIO())
    runs = find_writeup_runs()
    assert len(runs) == 4
    papers = ResearchRun.objects.filter(stages=["paper"], backbone="writer-a")
    assert sorted(r.settings["coding_agent"] for r in papers) == ["Claude Code", "Codex CLI"]


def test_it_reports_a_folder_without_writeups(tmp_path, media):
    report = import_writeups(tmp_path, stdout=io.StringIO())
    assert report.errors and "no agent_results/experiments_and_writeups/ folder" in report.errors[0]


def test_it_names_a_task_that_is_not_imported_and_keeps_going(tmp_path, media):
    make_task("iclr2025_toy")
    _folder(tmp_path, task="iclr2025_unknown")
    _folder(tmp_path, task="iclr2025_toy")
    report = import_writeups(tmp_path, stdout=io.StringIO())
    assert report.experiments == ["codex/iclr2025_toy"]
    assert "iclr2025_unknown is not imported" in report.errors[0]
