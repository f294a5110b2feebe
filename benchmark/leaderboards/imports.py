"""MLGym's released runs as Referee runs of methods (`manage.py import_mlgym_results DIR`).

Every `results.json` under DIR becomes a finished `Run` (source `mlgym`, method named as MLGym
does: the folder's model field without `metagen-`) with one `Score` per validation and the
last one as the submission; runs that ship a `.traj` also get their steps, exit status, tokens
and cost. Re-running is safe: folders already imported are skipped. Bad files are reported by
name and skipped; everything valid is imported.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import transaction
from django.utils import timezone

from benchmark.leaderboards.mlgym_results import (
    MLGYM_TASKS,
    ResultsSet,
    RunResult,
    TrajectorySummary,
    clean_value,
    read_results_dir,
    read_trajectory,
)
from benchmark.leaderboards.scoring import Issue
from benchmark.models import AgentConfig, Run, RunGroup, Score, Step, Task


@dataclass
class ImportReport:
    imported: int = 0
    skipped_existing: int = 0
    scores: int = 0
    steps: int = 0
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


def _task_for(task_id: str, *, results: ResultsSet, configs_dir: Path | None, report: ImportReport) -> Task:
    """The current Task for an MLGym task id; created from MLGym's YAML when no one has loaded it yet."""
    spec = MLGYM_TASKS[task_id]
    kebab = "".join(f"-{c.lower()}" if c.isupper() else c for c in task_id).lstrip("-")
    task = Task.objects.filter(is_current=True, slug__in=[task_id, kebab, task_id.lower()]).first()
    if task is not None:
        return task
    yaml_path = configs_dir / f"{task_id}.yaml" if configs_dir else None
    raw = yaml_path.read_bytes() if yaml_path and yaml_path.is_file() else task_id.encode()
    config: dict[str, Any] = {}
    if yaml_path and yaml_path.is_file():
        import yaml

        try:
            loaded = yaml.safe_load(raw)
            config = loaded if isinstance(loaded, dict) else {}
        except yaml.YAMLError as error:
            report.issues.append(Issue(str(yaml_path), "yaml", f"unreadable: {error}"))
    baseline = results.baselines.get(task_id)
    task = Task.objects.create(
        slug=task_id,
        version_hash=hashlib.sha256(raw).hexdigest(),
        kind=Task.Kind.MLGYM,
        title=str(config.get("name") or task_id),
        description=str(config.get("description") or ""),
        config=_finite(config),
        metric=spec.metric,
        direction=Task.Direction(spec.direction.value),
        baseline_scores={spec.metric: baseline} if baseline is not None else {},
        source="mlgym",
        path=str(yaml_path or ""),
    )
    report.tasks_created.append(task_id)
    return task


def _agent_for(run: RunResult, cache: dict[tuple, AgentConfig]) -> AgentConfig:
    f = run.folder
    key = (f.method, f.temperature, f.top_p, f.cost_limit, f.agent_config)
    if key not in cache:
        name = f"{f.method} ({f.agent_config}, MLGym)"
        agent = AgentConfig.objects.filter(name=name, model=f"mlgym:{f.model}").first()
        cache[key] = agent or AgentConfig.objects.create(
            name=name,
            model=f"mlgym:{f.model}",
            temperature=f.temperature,
            top_p=f.top_p,
            cost_limit=f.cost_limit,
            extra={"mlgym_agent_config": f.agent_config},
        )
    return cache[key]


def _steps(run: Run, path: Path, report: ImportReport) -> list[Step]:
    data = json.loads(path.read_bytes())
    steps = []
    for index, raw in enumerate(data.get("trajectory") or []):
        if not isinstance(raw, dict):
            report.issues.append(Issue(str(path), f"trajectory[{index}]", "not an object"))
            continue
        state = raw.get("state")
        if isinstance(state, str):
            try:
                state = json.loads(state)
            except ValueError:
                state = {"raw": state}
        execution_time = raw.get("execution_time")
        if not (isinstance(execution_time, int | float) and not isinstance(execution_time, bool)) or not math.isfinite(
            execution_time
        ):
            if execution_time is not None:
                report.issues.append(
                    Issue(str(path), f"trajectory[{index}].execution_time", f"{execution_time!r} is not a number")
                )
            execution_time = None  # unknown, never 0
        steps.append(
            Step(
                run=run,
                index=index,
                thought=str(raw.get("thought") or ""),
                action=str(raw.get("action") or ""),
                observation=str(raw.get("observation") or ""),
                raw_response=str(raw.get("response") or ""),
                state=_finite(state) if isinstance(state, dict) else {},
                execution_time=float(execution_time) if execution_time is not None else None,
            )
        )
    return steps


def mlgym_results_import(*, directory: Path, log: Callable[[str], None] = lambda _: None) -> ImportReport:
    """Import every results.json under `directory` (see the module docstring)."""
    report = ImportReport()
    results = read_results_dir(directory)
    report.issues.extend(results.issues)
    configs_dir = next((p / "configs" / "tasks" for p in directory.parents if (p / "configs" / "tasks").is_dir()), None)
    done = set(Run.objects.filter(source=Run.Source.MLGYM).values_list("params__mlgym_folder", flat=True).iterator())
    todo = [r for r in results.runs if r.folder.name not in done]
    report.skipped_existing = len(results.runs) - len(todo)
    if not todo:
        return report
    with transaction.atomic():
        group = RunGroup.objects.create(name=f"MLGym release import: {directory.name} ({len(todo)} runs)")
        tasks = {
            t: _task_for(t, results=results, configs_dir=configs_dir, report=report)
            for t in {r.folder.task for r in todo}
        }
        agents: dict[tuple, AgentConfig] = {}
        now = timezone.now()
        runs: list[Run] = []
        trajectories: dict[str, tuple[TrajectorySummary, Path]] = {}
        for result in todo:
            summary: TrajectorySummary | None = None
            for path in sorted(result.path.parent.glob("*.traj")):
                summary, problems = read_trajectory(path)
                report.issues.extend(problems)
                if summary is not None:
                    trajectories[result.folder.name] = (summary, path)
            runs.append(
                Run(
                    task=tasks[result.folder.task],
                    agent=_agent_for(result, agents),
                    group=group,
                    source=Run.Source.MLGYM,
                    method=result.folder.method,
                    status=Run.Status.FINISHED,
                    exit_status=(summary.exit_status if summary else "")[:60],
                    step_count=summary.steps if summary else 0,
                    tokens_sent=(summary.tokens_sent or 0) if summary else 0,
                    tokens_received=(summary.tokens_received or 0) if summary else 0,
                    api_calls=(summary.api_calls or 0) if summary else 0,
                    cost=(summary.cost or 0.0) if summary else 0.0,
                    best_attempt=result.score.best_attempt,
                    best_submission=result.score.best_submission,
                    params={
                        "mlgym_folder": result.folder.name,
                        "run_index": result.folder.run_index,
                        "run_set": result.folder.run_set,
                        "agent_config": result.folder.agent_config,
                        "has_trajectory": summary is not None,
                        "cost_recorded": bool(summary and summary.cost is not None),
                        # Numbers the release does not give for this run: stored as 0, shown as unknown.
                        "unknown": sorted(
                            name
                            for name in ("api_calls", "cost", "tokens_received", "tokens_sent")
                            if summary is None or getattr(summary, name) is None
                        ),
                    },
                    finished_at=now,
                )
            )
        Run.objects.bulk_create(runs, batch_size=500)
        if any(r.pk is None for r in runs):  # backends that do not return ids from bulk_create
            by_folder = {
                r.params["mlgym_folder"]: r for r in Run.objects.filter(group=group).only("id", "params", "task")
            }
            runs = [by_folder[r.params["mlgym_folder"]] for r in runs]
        scores: list[Score] = []
        steps: list[Step] = []
        for run, result in zip(runs, todo, strict=True):
            metric = MLGYM_TASKS[result.folder.task].metric
            baseline = results.baselines.get(result.folder.task)
            for index, metrics in enumerate(result.agent):
                last = index == len(result.agent) - 1
                metrics_dict = metrics if isinstance(metrics, dict) else {}
                primary, issue = clean_value(
                    metrics_dict.get(metric), source=result.folder.name, metric=metric, baseline=baseline
                )
                scores.append(
                    Score(
                        run=run,
                        kind=Score.Kind.SUBMIT if last else Score.Kind.VALIDATE,
                        metrics=_finite(metrics_dict),
                        primary=primary,
                        error=f"{metric}: {issue.message}" if issue else "",
                    )
                )
            if result.folder.name in trajectories:
                steps.extend(_steps(run, trajectories[result.folder.name][1], report))
        Score.objects.bulk_create(scores, batch_size=1000)
        Step.objects.bulk_create(steps, batch_size=500)
    report.imported, report.scores, report.steps = len(runs), len(scores), len(steps)
    log(f"imported {report.imported} runs into group {group.name!r}")
    return report
