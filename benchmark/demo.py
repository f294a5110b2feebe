"""Demo data of the benchmark app (`manage.py seed_demo`, run by `make up`). Idempotent.

A list of small steps, each taking the output stream; add a step to add demo data.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TextIO

from django.conf import settings

from benchmark.models import Task
from benchmark.tasks.loader import BUILTIN_DIR, tasks_sync


def builtin_tasks_sync(stdout: TextIO) -> None:
    tasks, errors = tasks_sync(BUILTIN_DIR)
    stdout.write(f"  built-in tasks: {len(tasks)} current")
    for error in errors:
        stdout.write(f"  ! {error}")


def missing_package_reason(error: str, info: dict) -> str:
    """Said first when a baseline failed for want of a package that only the sandbox image has."""
    missing = re.search(r"No module named '([\w.]+)'", error)
    if not missing or info.get("backend") != "bwrap":
        return ""
    return (
        f"not computed here: the bwrap sandbox runs this machine's own Python, which has no "
        f"{missing.group(1)} (the sandbox image has every package the built-in tasks need; with Docker or "
        "Podman, or SANDBOX_BWRAP_ROOTFS pointing at the image's root filesystem, it runs)"
    )


def builtin_baselines_compute(stdout: TextIO) -> None:
    """Baseline scores of each current built-in version, once (again after a failure)."""
    from benchmark.tasks.baselines import baseline_compute
    from sandbox import backend_info

    info = backend_info()
    for task in Task.objects.filter(source="builtin", is_current=True).order_by("slug"):
        if task.baseline_scores and not task.baseline_scores.get("error"):
            continue
        if not info.get("available"):
            # Recorded, never invented: the page shows why there is no baseline score.
            task.baseline_scores = {"version": task.version_hash, "error": f"sandbox unavailable: {info.get('detail')}"}
            task.save(update_fields=["baseline_scores"])
            stdout.write(f"  ! {task.slug}: no baseline, sandbox unavailable")
            continue
        scores = baseline_compute(task=task)
        plain = missing_package_reason(scores.get("error", ""), info)
        if plain:
            scores["error"] = f"{plain}\n\n{scores['error']}"
            task.baseline_scores = scores
            task.save(update_fields=["baseline_scores"])
        if scores.get("error"):
            stdout.write(f"  ! {task.slug}: baseline failed: {scores['error'][:300]}")
        else:
            stdout.write(
                f"  {task.slug}: baseline dev {scores['dev']['primary']:.4g}, test {scores['test']['primary']:.4g}"
            )


def mlgym_tasks_sync(stdout: TextIO) -> None:
    root = getattr(settings, "MLGYM_DIR", "")
    if not root or not Path(root).is_dir():
        stdout.write("  MLGym tasks: skipped (MLGYM_DIR not set)")
        return
    tasks, errors = tasks_sync(root)
    missing = sum(1 for task in tasks if task.data_status == Task.DataStatus.MISSING)
    runnable = sum(1 for task in tasks if task.config.get("runnable"))
    stdout.write(f"  MLGym tasks: {len(tasks)} loaded from {root} ({runnable} runnable, {missing} with data missing)")
    for error in errors:
        stdout.write(f"  ! {error}")


def mlgym_results_import(stdout: TextIO) -> None:
    """MLGym's 676 released results.json as runs of methods, for the leaderboard."""
    from django.core.management import call_command

    root = Path(getattr(settings, "MLGYM_DIR", "") or "/nonexistent") / "trajectories" / "mlgym_bench_v0"
    if not root.is_dir():
        stdout.write("  MLGym results: skipped (MLGYM_DIR not set)")
        return
    call_command("import_mlgym_results", str(root), stdout=stdout)


def mlgym_trajectories_import(stdout: TextIO) -> None:
    """MLGym's released .traj files: the results import above attached them to their runs already (benchmark.runs.released)."""
    root = Path(getattr(settings, "MLGYM_DIR", "") or "/nonexistent") / "trajectories"
    if not root.is_dir():
        stdout.write("  MLGym trajectories: skipped (MLGYM_DIR not set)")
        return
    from benchmark.runs.trajectories import traj_import_paths

    traj_import_paths(paths=[str(root)], stdout=stdout)


def model_endpoints_seed(stdout: TextIO) -> None:
    """The default endpoints from ANTHROPIC_API_KEY / OPENAI_API_KEY / OPENAI_BASE_URL (benchmark.llm.seed)."""
    from benchmark.llm.endpoints import key_status
    from benchmark.llm.seed import endpoints_seed_from_settings
    from benchmark.models import ModelEndpoint

    for endpoint in endpoints_seed_from_settings():
        stdout.write(f"  model endpoint {endpoint.name}: created from the environment")
    for endpoint in ModelEndpoint.objects.filter(scope=ModelEndpoint.Scope.SHARED, enabled=True).order_by("name"):
        ready, words = key_status(endpoint)
        stdout.write(f"  {'' if ready else '! '}model endpoint {endpoint.name}: key {words}")  # never the key


def mlrbench_import(stdout: TextIO) -> None:
    """The released MLR-Bench tasks and runs when MLRBENCH_DIR is set (refreshes fault notes, keeps codes)."""
    from benchmark.research.imports import import_mlr_runs
    from benchmark.research.tasks import import_mlr_tasks

    root = getattr(settings, "MLRBENCH_DIR", "")
    if not root or not Path(root).is_dir():
        stdout.write("  MLR-Bench: skipped (MLRBENCH_DIR not set)\n")
        return
    tasks = import_mlr_tasks(root)
    stdout.write(f"  {tasks.lines()[0]} (from {root})\n")
    for line in tasks.errors:
        stdout.write(f"  ! {line}\n")
    stdout.write(f"  MLR-Bench task data faults: {len(tasks.faults)} (listed on each task's page)\n")
    runs = import_mlr_runs(root, stdout=_FirstLines(stdout))
    for line in runs.errors:
        stdout.write(f"  ! {line}\n")
    from benchmark.research.aiscientist import import_ai_scientist
    from benchmark.research.release import unread_folders
    from benchmark.research.writeups import import_writeups

    # The stepwise experiments and write-ups, and the AI Scientist v2 papers (their reviews: judge's demo).
    for importer in (import_writeups, import_ai_scientist):
        report = importer(root, stdout=_FirstLines(stdout))
        for line in report.errors:
            stdout.write(f"  ! {line}\n")
    for folder in unread_folders(root):
        stdout.write(f"  ! NOT READ {Path(root) / folder}: no importer reads this folder\n")


class _FirstLines:
    """Keeps the demo log short: the summary line of a report, not its every fault."""

    def __init__(self, out: TextIO) -> None:
        self.out, self.written = out, False

    def write(self, text: str) -> None:
        if not self.written:
            self.out.write(f"  {text}")
            self.written = True


STEPS = [
    model_endpoints_seed,
    builtin_tasks_sync,
    builtin_baselines_compute,
    mlgym_tasks_sync,
    mlrbench_import,
    mlgym_results_import,
    mlgym_trajectories_import,
]


def seed(stdout: TextIO) -> None:
    for step in STEPS:
        step(stdout)
