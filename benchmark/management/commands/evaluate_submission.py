"""Score submission files on a task exactly as `validate` and `submit` do (the public face of evaluation).

    manage.py evaluate_submission prisoners_dilemma --split dev strategy.py=./my_strategy.py
    manage.py evaluate_submission digits_classification --split test --format json submission.csv=out.csv

Prints the metrics, the primary score and any evaluation error; exits 1 when the evaluation
failed (the error, and the evaluator's output, say why), 2 on bad arguments.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from benchmark.models import Task
from benchmark.tasks.evaluation import MAX_ARTIFACT_BYTES, ScoreResult, artifact_matches, artifacts_evaluate


def read_artifacts(task: Task, pairs: list[str]) -> dict[str, bytes]:
    """NAME=PATH arguments -> {artifact name: bytes}; raises CommandError naming the bad one."""
    declared = list(task.config.get("artifacts", []))
    artifacts: dict[str, bytes] = {}
    for pair in pairs:
        name, sep, raw = pair.partition("=")
        if not sep or not name or not raw:
            raise CommandError(f"{pair!r}: write NAME=PATH, e.g. {declared[0] if declared else 'file'}=./path")
        if not any(artifact_matches(name, pattern) for pattern in declared):  # a pattern: one pair per file
            raise CommandError(f"{name!r} is not an artifact of {task.slug}: its artifacts are {', '.join(declared)}")
        if name in artifacts:
            raise CommandError(f"{name!r} is given twice")
        path = Path(raw).expanduser()
        if not path.is_file():
            raise CommandError(f"{name}={raw}: no such file")
        if path.stat().st_size > MAX_ARTIFACT_BYTES:
            raise CommandError(f"{name}={raw}: larger than {MAX_ARTIFACT_BYTES >> 20} MiB")
        artifacts[name] = path.read_bytes()
    missing = [pattern for pattern in declared if not any(artifact_matches(name, pattern) for name in artifacts)]
    if missing:
        raise CommandError(f"{task.slug} needs {', '.join(declared)}: missing {', '.join(missing)}")
    return artifacts


class Command(BaseCommand):
    help = (
        "Evaluate submission files (NAME=PATH per declared artifact) on a task's dev or test split, through "
        "the same isolated path as validate and submit; print the metrics, the primary score and any error."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("task", metavar="TASK_SLUG", help="slug of a current task version")
        parser.add_argument("--split", choices=["dev", "test"], required=True, help="dev = validate, test = submit")
        parser.add_argument("--format", choices=["table", "json"], default="table")
        parser.add_argument("artifacts", nargs="+", metavar="NAME=PATH", help="one per artifact the task declares")

    def handle(self, *args: Any, **options: Any) -> None:
        task = Task.objects.filter(slug=options["task"], is_current=True).first()
        if task is None:
            known = ", ".join(
                Task.objects.filter(is_current=True, config__runnable=True).values_list("slug", flat=True)
            )
            raise CommandError(f"no current task {options['task']!r} (runnable tasks: {known or 'none: load_tasks'})")
        if not task.config.get("runnable"):
            raise CommandError(
                f"task {task.slug} cannot be evaluated here: {task.config.get('not_runnable_reason', '')}"
            )
        artifacts = read_artifacts(task, options["artifacts"])
        result = artifacts_evaluate(task=task, artifacts=artifacts, split=options["split"])
        if options["format"] == "json":
            self.stdout.write(json.dumps(self.as_json(task, result), indent=1, allow_nan=False))
        else:
            self.table(task, result)
        if result.error:
            raise SystemExit(1)

    @staticmethod
    def as_json(task: Task, result: ScoreResult) -> dict[str, Any]:
        return {
            "task": task.slug,
            "version": task.version_hash,
            "split": result.split,
            "metric": task.metric,
            "primary": result.primary,
            "metrics": result.metrics,
            "error": result.error,
            "output": result.output if result.error else "",
            "duration": round(result.duration, 3),
        }

    def table(self, task: Task, result: ScoreResult) -> None:
        self.stdout.write(f"task {task.slug}@{task.version_hash[:8]}, {result.split} split, {result.duration:.1f} s")
        width = max([len(name) for name in result.metrics] + [len("primary")])
        for name, value in sorted(result.metrics.items()):
            self.stdout.write(f"  {name:<{width}}  {value:.6g}")
        if result.error:
            self.stdout.write(f"  {'primary':<{width}}  none")
            self.stderr.write(f"evaluation error: {result.error}")
            if result.output.strip():
                self.stderr.write(result.output.rstrip())
        else:
            self.stdout.write(
                f"  {'primary':<{width}}  {result.primary:.6g}  ({task.metric}, {task.get_direction_display()})"
            )
