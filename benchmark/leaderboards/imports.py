"""MLGym's released runs as Referee runs of methods (`manage.py import_mlgym_results DIR`).

Every `results.json` under DIR gives a finished `Run` (source `mlgym`, method named as MLGym
does: the folder's model field without `metagen-`) its scores, one `Score` per validation and
the last one the submission, and the released baseline (`params["mlgym_baseline"]`, what the
leaderboard's baseline row shows for imported results). A run a `.traj` import created first is
completed, not duplicated (benchmark.runs.released); a `.traj` next to a results.json is imported
too (benchmark.runs.trajectories). Re-running changes nothing. Bad files are reported by name
and skipped; everything valid is imported.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import transaction
from django.utils import timezone

from benchmark.leaderboards.mlgym_results import MLGYM_TASKS, RunResult, clean_value, read_results_dir
from benchmark.leaderboards.scoring import Issue
from benchmark.models import AgentConfig, Run, RunGroup, Score, Task
from benchmark.runs.released import TRAJ_NUMBERS, folder_meta, mlgym_agent, mlgym_task, scores_link


@dataclass
class ImportReport:
    imported: int = 0
    completed: int = 0  # runs imported before without results.json's part (from a .traj, or an older import)
    skipped_existing: int = 0
    scores: int = 0
    steps: int = 0
    trajectories: int = 0
    tasks_created: list[str] = field(default_factory=list)
    issues: list[Issue] = field(default_factory=list)


def _finite(value: Any) -> Any:
    """JSON-safe copy: NaN/inf become None (PostgreSQL's jsonb rejects them)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def _results_params(result: RunResult) -> dict[str, Any]:
    """results.json's part of a run's params (the .traj import owns the others)."""
    return {
        "mlgym_folder": result.folder.name,
        "results_imported": True,
        "mlgym_baseline": _finite(result.baseline),
        "run_index": result.folder.run_index,
        "run_set": result.folder.run_set,
        "agent_config": result.folder.agent_config,
    }


def _scores(run: Run, result: RunResult, baseline: float | None) -> list[Score]:
    metric = MLGYM_TASKS[result.folder.task].metric
    scores = []
    for index, metrics in enumerate(result.agent):
        metrics_dict = metrics if isinstance(metrics, dict) else {}
        primary, issue = clean_value(
            metrics_dict.get(metric), source=result.folder.name, metric=metric, baseline=baseline
        )
        scores.append(
            Score(
                run=run,
                kind=Score.Kind.SUBMIT if index == len(result.agent) - 1 else Score.Kind.VALIDATE,
                metrics=_finite(metrics_dict),
                primary=primary,
                error=f"{metric}: {issue.message}" if issue else "",
            )
        )
    return scores


def mlgym_results_import(*, directory: Path, log: Callable[[str], None] = lambda _: None) -> ImportReport:
    """Import every results.json under `directory` (see the module docstring)."""
    report = ImportReport()
    results = read_results_dir(directory)
    report.issues.extend(results.issues)
    # The MLGym checkout the results belong to: its configs define the tasks the runs ran on.
    checkout = next((p for p in (directory, *directory.parents) if (p / "configs" / "tasks").is_dir()), None)
    present = _present_runs()
    new = [r for r in results.runs if r.folder.name not in present]
    # Created by a .traj import (or by an import that predates the stored baseline): completed now.
    incomplete = [r for r in results.runs if r.folder.name in present and not present[r.folder.name][1]]
    report.skipped_existing = len(results.runs) - len(new) - len(incomplete)
    if new or incomplete:
        with transaction.atomic():
            group = RunGroup.objects.create(
                name=f"MLGym release import: {directory.name} ({len(new) + len(incomplete)} runs)"
            )
            runs = _create_runs(new, group=group, checkout=checkout, report=report)
            completed = _complete_runs(incomplete, group=group, present=present)
            scores = [
                score
                for run, result in zip([*runs, *completed], [*new, *incomplete], strict=True)
                for score in _scores(run, result, results.baselines.get(result.folder.task))
            ]
            Score.objects.bulk_create(scores, batch_size=1000)
            for run in completed:
                scores_link(run)
        report.imported, report.completed, report.scores = len(runs), len(completed), len(scores)
        log(f"imported {report.imported} runs into group {group.name!r}")
    _import_trajectories(results.runs, present=present, report=report)
    return report


def _present_runs() -> dict[str, tuple[int, bool, bool]]:
    """The MLGym runs already here, by folder: (pk, results imported, has its trajectory)."""
    return {
        folder: (pk, bool(done), bool(key) or steps > 0)
        for folder, pk, done, key, steps in Run.objects.filter(source=Run.Source.MLGYM)
        .values_list("params__mlgym_folder", "pk", "params__results_imported", "params__import_key", "step_count")
        .iterator()
        if folder
    }


def _create_runs(new: list[RunResult], *, group: RunGroup, checkout: Path | None, report: ImportReport) -> list[Run]:
    """A finished run per new results.json (its task loaded from the checkout where not here yet)."""
    before = set(Task.objects.filter(slug__in=MLGYM_TASKS).values_list("slug", flat=True))
    tasks = {t: mlgym_task(t, mlgym_dir=checkout) for t in {r.folder.task for r in new}}
    report.tasks_created = sorted(t for t in tasks if t not in before)
    agents: dict[tuple, AgentConfig] = {}
    now = timezone.now()
    runs = [
        Run(
            task=tasks[result.folder.task],
            agent=mlgym_agent(folder_meta(result.folder.name), agents),
            group=group,
            source=Run.Source.MLGYM,
            method=result.folder.method,
            status=Run.Status.FINISHED,
            best_attempt=result.score.best_attempt,
            best_submission=result.score.best_submission,
            params={
                **_results_params(result),
                # The .traj's numbers, until one is imported: stored as 0, shown as unknown.
                "has_trajectory": False,
                "cost_recorded": False,
                "unknown": list(TRAJ_NUMBERS),
            },
            finished_at=now,
        )
        for result in new
    ]
    Run.objects.bulk_create(runs, batch_size=500)
    if any(r.pk is None for r in runs):  # backends that do not return ids from bulk_create
        by_folder = {r.params["mlgym_folder"]: r for r in Run.objects.filter(group=group).only("id", "params")}
        runs = [by_folder[r.params["mlgym_folder"]] for r in runs]
    return runs


def _complete_runs(incomplete: list[RunResult], *, group: RunGroup, present: dict) -> list[Run]:
    """Runs a .traj import created, given their results.json's numbers and scores."""
    completed = []
    for result in incomplete:
        run = Run.objects.select_for_update().get(pk=present[result.folder.name][0])
        run.params = {**run.params, **_results_params(result)}
        Run.objects.filter(pk=run.pk).update(
            group=group,
            best_attempt=result.score.best_attempt,
            best_submission=result.score.best_submission,
            params=run.params,
        )
        Score.objects.filter(run=run).delete()  # the .traj's copy; results.json's are the release's scores
        completed.append(run)
    return completed


def _import_trajectories(runs: list[RunResult], *, present: dict, report: ImportReport) -> None:
    """A run folder's .traj (some runs have one): its steps, cost and exit status join the run."""
    from benchmark.runs.trajectories import TrajImportError, traj_import

    for result in runs:
        if result.folder.name in present and present[result.folder.name][2]:
            continue  # the run has its trajectory already
        for path in sorted(result.path.parent.glob("*.traj")):
            try:
                run, stored = traj_import(path)
            except TrajImportError as exc:
                report.issues.append(Issue(str(path.parent.name), "traj", str(exc)))
                continue
            if stored:
                report.trajectories += 1
                report.steps += run.step_count
