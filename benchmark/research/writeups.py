"""Import MLR-Bench's stepwise experiment and writing stages (agent_results/experiments_and_writeups/).

Layout (the released data folder and a clone of the repository alike):
    agent_results/experiments_and_writeups/<coding agent>/<task>/
        task.md, idea.md, related_work.md, proposal.md     the inputs the coding agent was given
        <agent>_output.json (or a log), <agent>_code/       its trace and code (coding_agents.py)
        results.md, results/ (log, figures, data files)     its experiment
        results/paper_<model>.md                            the writing stage: one paper per writing model

The release has Claude Code's folder; the upstream repository also has Codex's, in the same layout,
and any coding agent's folder is read the same way. Each folder becomes:

- an experiment run (stepwise, stages ["experiment"], backbone = the agent folder's name): the given
  idea, literature review and proposal (`data.given`) and the agent's own `experiment` artifact with
  its trace summary, code and results files, as the end-to-end import stores them;
- one writing run per `paper_<model>.md` (stages ["paper"], backbone = the writing model): the same
  given inputs, the experiment's results as a given input (`data.from_run` names the experiment
  run), and the model's `paper` artifact with the figures it cites.

A run is found again by its release path (`settings.release_path`), so re-imports keep codes and the
judgments attached to them. Faults (missing inputs, figures a paper cites but the run lacks, folders
that are read by nothing) are reported by file and kept on the runs, never dropped silently.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from django.db import transaction
from django.utils import timezone

from benchmark.models import Artifact, ResearchRun, Task
from benchmark.research.coding_agents import experiment_agent, extra_folders
from benchmark.research.imports import (
    STAGE_FILE,
    RunImportReport,
    _import_experiment,
    _import_paper,
    _read,
)

WRITEUPS_DIR = "experiments_and_writeups"
ATTRIBUTION = (
    "Stepwise experiment and write-up from MLR-Bench (github.com/chchenhui/mlrbench), MIT License, "
    "Copyright (c) 2025 Hui Chen."
)
_PAPER = re.compile(r"^paper_(?P<model>.+)\.md$")
INPUT_FILES = ("task.md", "idea.md", "related_work.md", "proposal.md")


@dataclass
class WriteupReport:
    experiments: list[str] = field(default_factory=list)  # <agent>/<task> imported
    papers: list[str] = field(default_factory=list)  # <agent>/<task>/<model> imported
    created: int = 0
    kept: int = 0
    files: int = 0
    errors: list[str] = field(default_factory=list)
    faults: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [
            f"MLR-Bench stepwise experiments and write-ups: {len(self.experiments)} experiments, "
            f"{len(self.papers)} papers (runs {self.created} new, {self.kept} kept), {self.files} files stored, "
            f"{len(self.errors)} errors, {len(self.faults)} data faults"
        ]
        out += [f"ERROR {e}" for e in self.errors]
        out += [f"FAULT {f}" for f in self.faults]
        return out


def writeups_root(path: str | Path) -> Path:
    """The experiments_and_writeups/ folder under a repository root, agent_results/, or itself."""
    root = Path(path)
    for candidate in (root / "agent_results" / WRITEUPS_DIR, root / WRITEUPS_DIR, root):
        if candidate.name == WRITEUPS_DIR and candidate.is_dir():
            return candidate
    return root / "agent_results" / WRITEUPS_DIR


def find_writeup_runs() -> dict[str, ResearchRun]:
    """release path -> the stepwise experiment or writing run imported from it (one query)."""
    runs = ResearchRun.objects.filter(
        source=ResearchRun.Source.STEPWISE, settings__release_path__startswith=f"{WRITEUPS_DIR}/"
    )
    return {r.settings["release_path"]: r for r in runs}


def import_writeups(path: str | Path, *, stdout: TextIO | None = None) -> WriteupReport:
    """Import every `<agent>/<task>/` folder under experiments_and_writeups/; the report is also written to stdout."""
    report = WriteupReport()
    root = writeups_root(path)
    if not root.is_dir():
        report.errors.append(f"{path}: no agent_results/{WRITEUPS_DIR}/ folder")
        return _write(report, stdout)
    tasks_dir = root.parent.parent / "tasks"
    if tasks_dir.is_dir() and not Task.objects.filter(kind=Task.Kind.MLR, is_current=True).exists():
        from benchmark.research.tasks import import_mlr_tasks

        import_mlr_tasks(tasks_dir)  # the runs point at their tasks: make sure they exist
    existing = find_writeup_runs()
    for entry in sorted(root.iterdir()):
        if not entry.is_dir():
            report.faults.append(f"{WRITEUPS_DIR}/{entry.name}: not a coding agent's folder; not read")
            continue
        for run_dir in sorted(entry.iterdir()):
            where = f"{entry.name}/{run_dir.name}"
            if not run_dir.is_dir():
                report.faults.append(f"{WRITEUPS_DIR}/{where}: not a task folder; not read")
                continue
            if not any((run_dir / name).is_file() for name in INPUT_FILES):
                report.faults.append(
                    f"{WRITEUPS_DIR}/{where}: not a run folder (no task.md, idea.md, proposal.md); not read"
                )
                continue
            try:
                _import_folder(run_dir=run_dir, agent_folder=entry.name, where=where, existing=existing, report=report)
            except Exception as exc:  # one broken folder never stops the others
                report.errors.append(f"{WRITEUPS_DIR}/{where}: not imported ({type(exc).__name__}: {exc})")
    return _write(report, stdout)


def _write(report: WriteupReport, stdout: TextIO | None) -> WriteupReport:
    out = stdout if stdout is not None else sys.stdout
    for line in report.lines():
        out.write(line + "\n")
    return report


def _run(
    *, task: Task, backbone: str, stage: str, release_path: str, settings: dict, existing: dict[str, ResearchRun],
    report: WriteupReport,
) -> ResearchRun:  # fmt: skip
    run = existing.get(release_path)
    settings = {"release_path": release_path, "attribution": ATTRIBUTION, **settings}
    if run is None:
        run = ResearchRun.objects.create(
            task=task,
            source=ResearchRun.Source.STEPWISE,
            backbone=backbone,
            mode=ResearchRun.Mode.STEPWISE,
            stages=[stage],
            settings=settings,
            status=ResearchRun.Status.FINISHED,
            finished_at=timezone.now(),
        )
        existing[release_path] = run
        report.created += 1
    else:
        run.settings = {**(run.settings or {}), **settings}
        report.kept += 1
    return run


def _given(run: ResearchRun, stage: str, *, content: str, release_file: str, extra: dict | None = None) -> Artifact:
    """An input the run was given (not its own output): shown and judged against, never judged itself."""
    artifact, _ = Artifact.objects.update_or_create(
        research_run=run,
        stage=stage,
        defaults={
            "status": Artifact.Status.DONE if content.strip() else Artifact.Status.FAILED,
            "content": content,
            "error": "" if content.strip() else f"{release_file} missing in the release",
            "data": {"given": True, "priced": False, "release_file": release_file, **(extra or {})},
            "files": [],
        },
    )
    return artifact


def _givens(run: ResearchRun, run_dir: Path, base: str, inputs: dict[str, str]) -> list[Artifact]:
    return [
        _given(run, stage, content=inputs[stage], release_file=f"{base}/{name}") for stage, name in STAGE_FILE.items()
    ]


def _import_folder(
    *, run_dir: Path, agent_folder: str, where: str, existing: dict[str, ResearchRun], report: WriteupReport
) -> None:
    base = f"{WRITEUPS_DIR}/{where}"
    task = Task.objects.filter(slug=run_dir.name, kind=Task.Kind.MLR, is_current=True).first()
    if task is None:
        report.errors.append(f"{base}: task {run_dir.name} is not imported (run import_mlr_tasks first); skipped")
        return
    faults: list[str] = []
    released_task = _read(run_dir / "task.md", faults)
    if released_task and released_task.strip() != task.description.strip():
        faults.append("task.md differs from the released task file")
    inputs = {stage: _read(run_dir / name, faults) for stage, name in STAGE_FILE.items()}
    faults += [f"{name} missing" for stage, name in STAGE_FILE.items() if not inputs[stage]]
    agent = experiment_agent(run_dir)
    if agent.key and agent.key != agent_folder.lower():
        faults.append(f"the folder names coding agent {agent_folder!r}, its files name {agent.name!r}")
    extra = extra_folders(run_dir, agent)
    if extra:
        faults.append(f"folders read by no importer: {', '.join(f'{d}/' for d in extra)}")
    results = run_dir / "results"
    papers = sorted(p.name for p in results.glob("paper_*.md")) if results.is_dir() else []
    if not papers:
        faults.append("results/ holds no paper_<model>.md: no writing stage")
    top_results = _read(run_dir / "results.md", faults)
    if top_results and top_results.strip() != _read(results / "results.md", []).strip():
        faults.append("results.md differs from results/results.md (results/results.md is the one imported)")
    counter = RunImportReport()
    with transaction.atomic():
        experiment_run = _run(
            task=task, backbone=agent_folder, stage=Artifact.Stage.EXPERIMENT, release_path=base,
            settings={"coding_agent": agent.name}, existing=existing, report=report,
        )  # fmt: skip
        _givens(experiment_run, run_dir, base, inputs)
        experiment = _import_experiment(
            run=experiment_run, run_dir=run_dir, agent=agent, faults=faults, report=counter, skip=frozenset(papers)
        )
        for name in papers:
            model = _PAPER.match(name)["model"]  # type: ignore[index]
            paper_faults: list[str] = []
            writing_run = _run(
                task=task, backbone=model, stage=Artifact.Stage.PAPER, release_path=f"{base}/results/{name}",
                settings={"experiment_run": str(experiment_run.code), "coding_agent": agent.name},
                existing=existing, report=report,
            )  # fmt: skip
            _givens(writing_run, run_dir, base, inputs)
            _given(
                writing_run, Artifact.Stage.EXPERIMENT, content=experiment.content,
                release_file=f"{base}/results/results.md",
                extra={"from_run": str(experiment_run.code), "coding_agent": agent.name},
            )  # fmt: skip
            paper = _import_paper(
                run=writing_run, run_dir=run_dir, faults=paper_faults, report=counter, name=name, usage=None
            )
            paper.data = {**paper.data, "model": model, "cost_note": "the release gives neither tokens nor prices"}
            paper.save(update_fields=["data"])
            _finish_run(writing_run, [paper], paper_faults)
            report.papers.append(f"{where}/{model}")
            report.faults += [f"{base}/results/{name}: {f}" for f in paper_faults]
        _finish_run(experiment_run, [experiment], faults)
    report.files += counter.files
    report.experiments.append(where)
    report.faults += [f"{base}: {f}" for f in faults]


def _finish_run(run: ResearchRun, own: list[Artifact], faults: list[str]) -> None:
    failed = [a.stage for a in own if a.status == Artifact.Status.FAILED]
    run.settings = {
        **run.settings,
        "faults": faults,
        "unpriced_stages": [a.stage for a in own if not a.data.get("priced")],
    }
    run.tokens_sent = sum(a.tokens_sent for a in own)
    run.tokens_received = sum(a.tokens_received for a in own)
    run.cost = sum(a.cost for a in own)
    run.status = ResearchRun.Status.FAILED if failed else ResearchRun.Status.FINISHED
    run.error = f"missing in the release: {', '.join(failed)}" if failed else ""
    run.save()


def writeup_artifacts(stage: str) -> dict[tuple[str, str], list[Artifact]]:
    """(task slug, agent or writing model) -> the runs' own `experiment` or `paper` artifacts, for attaching reviews.

    A list: two coding agents' folders can each hold a paper by the same writing model on a task.
    """
    rows = (
        Artifact.objects.filter(
            stage=stage,
            research_run__source=ResearchRun.Source.STEPWISE,
            research_run__stages=[stage],
            research_run__settings__release_path__startswith=f"{WRITEUPS_DIR}/",
        )
        .select_related("research_run__task")
        .only("pk", "stage", "research_run__backbone", "research_run__settings", "research_run__task__slug")
    )
    out: dict[tuple[str, str], list[Artifact]] = {}
    for artifact in rows:
        out.setdefault((artifact.research_run.task.slug, artifact.research_run.backbone), []).append(artifact)
    return out
