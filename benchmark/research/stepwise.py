"""Import MLR-Bench's stepwise results: the ideas and proposals of six models on all 201 tasks.

Layout (the released data folder and a clone of the repository alike):
    agent_results/ideas_and_proposals/<task>/idea/idea_<model>.md
    agent_results/ideas_and_proposals/<task>/proposal/proposal_<model>.md
    agent_results/ideas_and_proposals/<task>/{idea.md, related_work.md, proposal.md}

What the files say about how they were made: each model wrote an idea for the task; one idea was
chosen (the task's idea.md is exactly one model's idea), a literature review was written for it
(related_work.md), and every model then wrote a proposal *from that chosen idea and review*
(the task's proposal.md is exactly the proposal chosen for the later stages). So each (task,
model) becomes two stepwise research runs, as Referee's own stepwise mode records them:

- an idea run: one `idea` artifact, the model's idea;
- a proposal run: the chosen idea and the literature review as given inputs (`data.given`), and
  the model's `proposal` artifact.

That keeps a proposal next to the idea it actually develops (a judge re-judging its consistency
reads the right input). Which model's idea and proposal were chosen is kept on the artifacts.

Idempotent: runs are found again by (task, model, stage) and artifacts by stage, so their codes -
and the judgments on them - survive a re-import. Faults (missing or empty files, models that
appear on some tasks only, a chosen idea that matches no model's) are reported and stored on the
runs, never silently dropped. Every write is a bulk statement: 2,412 runs and 4,824 artifacts in
a few statements, not one round trip each.
"""

from __future__ import annotations

import re
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from django.db import transaction
from django.utils import timezone

from benchmark.models import Artifact, ResearchRun, Task
from config.db import planner_statistics_refresh

STEPWISE_DIR = "ideas_and_proposals"
STAGES = (Artifact.Stage.IDEA, Artifact.Stage.PROPOSAL)
ATTRIBUTION = (
    "Stepwise result from MLR-Bench (github.com/chchenhui/mlrbench), MIT License, Copyright (c) 2025 Hui Chen."
)
_FILE = re.compile(r"^(?P<stage>idea|proposal)_(?P<model>.+)\.md$")
BATCH = 500


@dataclass
class StepwiseReport:
    tasks: int = 0
    runs_created: int = 0
    runs_kept: int = 0
    artifacts_created: int = 0
    artifacts_updated: int = 0
    artifacts_unchanged: int = 0
    per_stage: Counter = field(default_factory=Counter)  # stage -> model artifacts read
    models: dict[str, Counter] = field(default_factory=dict)  # stage -> model -> tasks
    errors: list[str] = field(default_factory=list)
    faults: list[str] = field(default_factory=list)

    @property
    def imported(self) -> int:
        return sum(self.per_stage.values())

    def lines(self) -> list[str]:
        stages = ", ".join(f"{n} {stage}s" for stage, n in sorted(self.per_stage.items()))
        out = [
            f"MLR-Bench stepwise: {self.tasks} tasks, {stages or 'nothing'} read; runs {self.runs_created} new, "
            f"{self.runs_kept} kept; artifacts {self.artifacts_created} new, {self.artifacts_updated} updated, "
            f"{self.artifacts_unchanged} unchanged; {len(self.errors)} errors, {len(self.faults)} data faults"
        ]
        out += [f"ERROR {e}" for e in self.errors]
        out += [f"FAULT {f}" for f in self.faults]
        return out


def stepwise_root(path: str | Path) -> Path:
    """The ideas_and_proposals/ folder under a repository root, agent_results/, or itself."""
    root = Path(path)
    for candidate in (root / "agent_results" / STEPWISE_DIR, root / STEPWISE_DIR, root):
        if candidate.name == STEPWISE_DIR and candidate.is_dir():
            return candidate
    return root / "agent_results" / STEPWISE_DIR


def find_stepwise_runs() -> dict[tuple[str, str, str], ResearchRun]:
    """(task slug, model, stage) -> the stepwise run, for the importers (one query)."""
    runs = ResearchRun.objects.filter(source=ResearchRun.Source.STEPWISE).select_related("task")
    return {(r.task.slug, r.backbone, (r.stages or [""])[0]): r for r in runs}


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""


@dataclass
class _TaskFolder:
    slug: str
    texts: dict[str, dict[str, str]]  # stage -> model -> text
    chosen_idea: str  # task-level idea.md
    literature: str  # related_work.md
    chosen_proposal: str  # task-level proposal.md


def _read_folder(folder: Path, report: StepwiseReport) -> _TaskFolder:
    texts: dict[str, dict[str, str]] = {stage: {} for stage in STAGES}
    for stage in STAGES:
        stage_dir = folder / stage
        if not stage_dir.is_dir():
            report.faults.append(f"{folder.name}: no {stage}/ folder")
            continue
        for path in sorted(stage_dir.iterdir()):
            match = _FILE.match(path.name)
            if not match or match["stage"] != stage or not path.is_file():
                report.faults.append(f"{folder.name}/{stage}/{path.name}: not a {stage}_<model>.md file; skipped")
                continue
            text = _read(path)
            if not text.strip():
                report.faults.append(f"{folder.name}/{stage}/{path.name}: empty; imported as a failed artifact")
            texts[stage][match["model"]] = text
    for name in ("idea.md", "related_work.md", "proposal.md"):
        if not (folder / name).is_file():
            report.faults.append(f"{folder.name}: {name} missing")
    return _TaskFolder(
        slug=folder.name,
        texts=texts,
        chosen_idea=_read(folder / "idea.md"),
        literature=_read(folder / "related_work.md"),
        chosen_proposal=_read(folder / "proposal.md"),
    )


def _chosen(texts: dict[str, str], chosen: str) -> str:
    """The model whose text is the task's chosen one ('' when none matches exactly)."""
    wanted = chosen.strip()
    return next((model for model, text in texts.items() if wanted and text.strip() == wanted), "")


def import_stepwise_results(path: str | Path, *, stdout: TextIO | None = None) -> StepwiseReport:
    """Import every task folder under ideas_and_proposals/; returns the report (also written to stdout)."""
    report = StepwiseReport()
    root = stepwise_root(path)
    if not root.is_dir():
        report.errors.append(
            f"{path}: no agent_results/{STEPWISE_DIR}/ folder (give the MLR-Bench repository, its agent_results/, "
            f"or the {STEPWISE_DIR}/ folder)"
        )
        _write(report, stdout)
        return report
    tasks_dir = root.parent.parent / "tasks"
    if tasks_dir.is_dir() and not Task.objects.filter(kind=Task.Kind.MLR, is_current=True).exists():
        from benchmark.research.tasks import import_mlr_tasks

        import_mlr_tasks(tasks_dir)  # the runs point at their tasks: make sure they exist
    tasks = {t.slug: t for t in Task.objects.filter(kind=Task.Kind.MLR, is_current=True)}
    folders = []
    for folder in sorted(d for d in root.iterdir() if d.is_dir()):
        if folder.name not in tasks:
            report.errors.append(f"{folder.name}: task is not imported (run import_mlr_tasks first); skipped")
            continue
        folders.append(_read_folder(folder, report))
    report.tasks = len(folders)
    if not folders:
        report.errors.append(f"{root}: no task folder to import")
    _coverage_faults(folders, report)
    with transaction.atomic():
        runs = _upsert_runs(folders, tasks, report)
        _upsert_artifacts(folders, runs, report)
    planner_statistics_refresh(ResearchRun, Artifact)  # the reviews' import and the boards query them next
    _write(report, stdout)
    return report


def _coverage_faults(folders: list[_TaskFolder], report: StepwiseReport) -> None:
    """Models that appear on only some tasks, and chosen texts that match no model's."""
    for stage in STAGES:
        counts = Counter(model for f in folders for model in f.texts[stage])
        report.models[stage] = counts
        report.per_stage[stage] = sum(counts.values())
        if not counts:
            continue
        full = max(counts.values())
        for model, n in sorted(counts.items()):
            if n < full:
                where = sorted(f.slug for f in folders if model in f.texts[stage])
                report.faults.append(
                    f"{stage}: {model} appears on {n} of {full} tasks only ({', '.join(where[:5])}"
                    f"{', ...' if len(where) > 5 else ''}); imported, compared only where present"
                )
    for f in folders:
        if f.chosen_idea and not _chosen(f.texts[Artifact.Stage.IDEA], f.chosen_idea):
            report.faults.append(f"{f.slug}: idea.md matches no model's idea; the proposals' input is unattributed")
        if f.chosen_proposal and not _chosen(f.texts[Artifact.Stage.PROPOSAL], f.chosen_proposal):
            report.faults.append(f"{f.slug}: proposal.md matches no model's proposal")


def _upsert_runs(
    folders: list[_TaskFolder], tasks: dict[str, Task], report: StepwiseReport
) -> dict[tuple[str, str, str], ResearchRun]:
    existing = find_stepwise_runs()
    new: list[ResearchRun] = []
    now = timezone.now()
    for f in folders:
        for stage in STAGES:
            for model in f.texts[stage]:
                key = (f.slug, model, stage)
                if key in existing:
                    report.runs_kept += 1
                    continue
                run = ResearchRun(
                    task=tasks[f.slug],
                    source=ResearchRun.Source.STEPWISE,
                    backbone=model,
                    mode=ResearchRun.Mode.STEPWISE,
                    stages=[stage],
                    settings={"release_path": f"{STEPWISE_DIR}/{f.slug}", "attribution": ATTRIBUTION},
                    status=ResearchRun.Status.FINISHED,
                    finished_at=now,
                )
                existing[key] = run
                new.append(run)
    ResearchRun.objects.bulk_create(new, batch_size=BATCH)
    report.runs_created = len(new)
    return existing


def _wanted_artifacts(f: _TaskFolder, stage: str, model: str) -> dict[str, dict[str, Any]]:
    """stage -> the fields its artifact should have, for one (task, model, stage) run."""
    text = f.texts[stage][model]
    chosen_idea = _chosen(f.texts[Artifact.Stage.IDEA], f.chosen_idea)
    own = {
        "status": Artifact.Status.DONE if text.strip() else Artifact.Status.FAILED,
        "content": text,
        "error": "" if text.strip() else f"{stage}/{stage}_{model}.md is empty in the release",
        "data": {
            "release_file": f"{STEPWISE_DIR}/{f.slug}/{stage}/{stage}_{model}.md",
            "model": model,
            "chosen": model
            == _chosen(f.texts[stage], f.chosen_idea if stage == Artifact.Stage.IDEA else f.chosen_proposal),
            "priced": False,
            "cost_note": "the release gives neither tokens nor prices for the stepwise results",
            **({"input_idea_from": chosen_idea or "unattributed"} if stage == Artifact.Stage.PROPOSAL else {}),
        },
    }
    wanted = {stage: own}
    if stage == Artifact.Stage.PROPOSAL:
        given = {"given": True, "priced": False, "release_file": f"{STEPWISE_DIR}/{f.slug}/idea.md"}
        wanted[Artifact.Stage.IDEA] = {
            "status": Artifact.Status.DONE if f.chosen_idea.strip() else Artifact.Status.FAILED,
            "content": f.chosen_idea,
            "error": "" if f.chosen_idea.strip() else "idea.md missing in the release",
            "data": {**given, "model": chosen_idea or "unattributed"},
        }
        wanted[Artifact.Stage.LITERATURE] = {
            "status": Artifact.Status.DONE if f.literature.strip() else Artifact.Status.FAILED,
            "content": f.literature,
            "error": "" if f.literature.strip() else "related_work.md missing in the release",
            "data": {**given, "release_file": f"{STEPWISE_DIR}/{f.slug}/related_work.md"},
        }
    return wanted


def _upsert_artifacts(
    folders: list[_TaskFolder], runs: dict[tuple[str, str, str], ResearchRun], report: StepwiseReport
) -> None:
    run_ids = [r.pk for r in runs.values()]
    existing: dict[tuple[int, str], Artifact] = {}
    for i in range(0, len(run_ids), BATCH * 4):  # IN lists stay short on SQLite
        for a in Artifact.objects.filter(research_run_id__in=run_ids[i : i + BATCH * 4]):
            existing[(a.research_run_id, a.stage)] = a
    new: list[Artifact] = []
    changed: list[Artifact] = []
    fields = ("status", "content", "error", "data")
    for f in folders:
        for stage in STAGES:
            for model in f.texts[stage]:
                run = runs[(f.slug, model, stage)]
                for artifact_stage, values in _wanted_artifacts(f, stage, model).items():
                    artifact = existing.get((run.pk, artifact_stage))
                    if artifact is None:
                        new.append(Artifact(research_run=run, stage=artifact_stage, **values))
                    elif any(getattr(artifact, k) != v for k, v in values.items()):
                        for k, v in values.items():
                            setattr(artifact, k, v)
                        changed.append(artifact)
                    else:
                        report.artifacts_unchanged += 1
    Artifact.objects.bulk_create(new, batch_size=BATCH)
    Artifact.objects.bulk_update(changed, fields, batch_size=BATCH)
    report.artifacts_created, report.artifacts_updated = len(new), len(changed)
    by_slug: dict[str, list[ResearchRun]] = defaultdict(list)
    for (slug, _model, _stage), run in runs.items():
        by_slug[slug].append(run)
    faults_by_run: dict[int, list[str]] = defaultdict(list)
    for line in report.faults:  # a task's faults are shown on each of its runs
        for run in by_slug.get(line.split(":", 1)[0].split("/", 1)[0], []):
            faults_by_run[run.pk].append(line)
    stale = [r for r in runs.values() if (r.settings or {}).get("faults", []) != faults_by_run.get(r.pk, [])]
    for run in stale:
        run.settings = {**(run.settings or {}), "faults": faults_by_run.get(run.pk, [])}
    ResearchRun.objects.bulk_update(stale, ["settings"], batch_size=BATCH)


def _write(report: StepwiseReport, stdout: TextIO | None) -> None:
    out = stdout if stdout is not None else sys.stdout
    for line in report.lines():
        out.write(line + "\n")
