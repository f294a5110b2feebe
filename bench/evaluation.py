"""Evaluation cost of isolation: each built-in task's baseline submission scored with the
submitted code in a sandbox of its own (what validate and submit do) against the old layout,
where it ran as a process beside the evaluator in one sandbox, measured side by side.

    python bench/evaluation.py [--runs 3] [--split test] [--backend docker]

"old" = one sandbox holding the evaluator and the submission's driver, talking over the same
pipes and protocol (so the difference is exactly the second sandbox). Data tasks (digits,
diabetes) run no submitted code: one sandbox on both paths. Target: new <= 2x old per task.
Prints medians in seconds and the ratio; runs alternate between the paths.
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from benchmark.models import Task  # noqa: E402
from benchmark.tasks.baselines import baseline_command  # noqa: E402
from benchmark.tasks.evaluation import (  # noqa: E402
    agent_sandbox_spec,
    artifacts_evaluate,
    evaluator_spec,
    submission_of,
    task_folder,
    workspace_prepare,
)
from benchmark.tasks.loader import builtin_task_dirs, task_load  # noqa: E402
from sandbox import Mount, backend_info, open_session  # noqa: E402
from sandbox.evaluation import (  # noqa: E402
    EVALUATOR_MOUNT,
    METRICS_FILE,
    RUNTIME_DIR,
    RUNTIME_MOUNT,
    parse_metrics_file,
)

TARGET = 2.0


def unsaved_task(folder: Path) -> Task:
    """A Task row for the folder without a database (the evaluation only reads its fields)."""
    spec = task_load(folder)
    return Task(
        slug=spec.slug,
        version_hash=spec.content_hash,
        kind=spec.kind,
        title=spec.title,
        config=spec.config,
        metric=spec.metric,
        direction=spec.direction,
        path=spec.path,
    )


def baseline_artifacts(task: Task) -> dict[str, bytes]:
    with open_session(agent_sandbox_spec(task=task, run_code="bench")) as session:
        workspace_prepare(task=task, session=session)
        run = session.run(baseline_command(task), timeout=600)
        if run.exit_code != 0:
            raise SystemExit(f"{task.slug}: the baseline failed:\n{run.output[-2000:]}")
        return {name: session.get_file(f"/workspace/{name}") for name in task.config["artifacts"]}


def old_layout(task: Task, artifacts: dict[str, bytes], split: str) -> float | None:
    """The pre-isolation topology: evaluator and submitted code in one sandbox."""
    folder = task_folder(task)
    evaluator = task.config["evaluator"]
    submission, data = submission_of(task, artifacts)
    spec = copy.deepcopy(evaluator_spec(task))
    spec.mounts = [
        Mount(str(folder / evaluator["dir"]), EVALUATOR_MOUNT),
        Mount(str(RUNTIME_DIR), RUNTIME_MOUNT),
    ]
    spec.env = {
        "EVALUATOR_DIR": EVALUATOR_MOUNT,
        "PYTHONPATH": f"{RUNTIME_MOUNT}:{spec.workdir}",
        "PYTHONDONTWRITEBYTECODE": "1",
        "REFEREE_METRICS": f"{spec.workdir}/{METRICS_FILE}",
    }
    if submission is not None:
        spec.env.update(REFEREE_CALLS="/tmp/pipes/calls", REFEREE_REPLIES="/tmp/pipes/replies")
        spec.env["REFEREE_CALL_TIMEOUT"] = f"{submission.call_timeout:g}"
    with open_session(spec) as session:
        for name, value in {**data, **(submission.files if submission else {})}.items():
            session.put_file(name, value)
        if submission is not None:
            functions = ",".join(submission.functions)
            session.run(
                "mkdir -p /tmp/pipes && mkfifo /tmp/pipes/calls /tmp/pipes/replies && "
                f"nohup python3 -I {RUNTIME_MOUNT}/driver.py /tmp/pipes/calls /tmp/pipes/replies "
                f"{submission.module} {functions} >/dev/null 2>&1 </dev/null &",
                timeout=30,
            )
        command = evaluator["command"].format(split=split, evaluator_dir=EVALUATOR_MOUNT)
        result = session.run(command, timeout=float(evaluator["timeout"]))
        if result.exit_code != 0:
            raise SystemExit(f"{task.slug}: the old layout failed:\n{result.output[-2000:]}")
        metrics, error = parse_metrics_file(session.get_file(METRICS_FILE))
    if metrics is None:
        raise SystemExit(f"{task.slug}: {error}")
    return metrics.get(task.metric)


def new_layout(task: Task, artifacts: dict[str, bytes], split: str) -> float | None:
    result = artifacts_evaluate(task=task, artifacts=artifacts, split=split)
    if result.error:
        raise SystemExit(f"{task.slug}: {result.error}\n{result.output[-2000:]}")
    return result.primary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="evaluations per path and task")
    parser.add_argument("--split", choices=["dev", "test"], default="test")
    parser.add_argument("--backend", choices=["docker", "bwrap"], default=None, help="default: SANDBOX_BACKEND")
    parser.add_argument("--task", action="append", help="slug (repeatable); default: every built-in task")
    args = parser.parse_args()
    from django.conf import settings

    if args.backend:
        settings.SANDBOX_BACKEND = args.backend
    if settings.SANDBOX_BACKEND == "bwrap" and not getattr(settings, "SANDBOX_BWRAP_ROOTFS", None):
        from sandbox.image import cached_rootfs

        # The image's packages (numpy, gymnasium, sklearn) for the baselines, where built here.
        settings.SANDBOX_BWRAP_ROOTFS = str(cached_rootfs() or "") or None
    info = backend_info()
    if not info["available"]:
        raise SystemExit(f"sandbox backend {info['backend']} unavailable: {info['detail']}")
    if info["backend"] == "docker":
        from sandbox.image import build_image

        build_image(log=lambda line: None)
    print(f"backend {info['backend']} ({info['detail']}); {args.runs} runs per path, {args.split} split")
    print(f"{'task':<26} {'old (1 sandbox)':>16} {'new (2 sandboxes)':>18} {'ratio':>7}  score")
    worst = 0.0
    for folder in builtin_task_dirs():
        task = unsaved_task(folder)
        if args.task and task.slug not in args.task:
            continue
        artifacts = baseline_artifacts(task)
        timings: dict[str, list[float]] = {"old": [], "new": []}
        scores = set()
        for _ in range(args.runs):
            for name, path in (("old", old_layout), ("new", new_layout)):
                started = time.perf_counter()
                scores.add(path(task, artifacts, args.split))
                timings[name].append(time.perf_counter() - started)
        old, new = statistics.median(timings["old"]), statistics.median(timings["new"])
        ratio = new / old
        worst = max(worst, ratio)
        same = "same on both" if len(scores) == 1 else f"DIFFERENT: {sorted(scores)}"
        print(f"{task.slug:<26} {old:>15.2f}s {new:>17.2f}s {ratio:>6.2f}x  {task.metric} {same}")
    verdict = "within" if worst <= TARGET else "OVER"
    print(f"worst ratio {worst:.2f}x: {verdict} the {TARGET:g}x target")


if __name__ == "__main__":
    main()
