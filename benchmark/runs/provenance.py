"""What a run ran on, kept in `Run.environment` (the run page shows it; leaderboards group by it).

Recorded when the agent's sandbox has started: the image and its digest (sandbox.Session.identity),
the task version's hash, the hashes of its data and of its evaluator (the files that decide a score,
with Referee's evaluation runtime), the network mode, the sandbox backend and, for GPU tasks, the
GPUs leased (count, type, ids, host). At the end the GPU-hours: GPUs x the run's wall time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmark.models import Run, Task
from benchmark.tasks.spec import content_hash
from sandbox import Session
from sandbox.conf import host_id
from sandbox.gpu import Gpu


def _folder_hash(task: Task, relative: str | None) -> str:
    if not relative or not task.path:
        return ""
    folder = Path(task.path) / relative
    return content_hash(folder) if folder.is_dir() else ""


def _data_hash(task: Task) -> str:
    paths = [Path(task.path) / item for item in (task.config or {}).get("data", []) if task.path]
    if not paths:
        return ""
    import hashlib

    digest = hashlib.sha256()
    for path in sorted(paths):
        if path.is_dir():
            digest.update(content_hash(path).encode())
        elif path.is_file():
            digest.update(hashlib.sha256(path.read_bytes()).hexdigest().encode())
    return digest.hexdigest()


def run_environment(*, task: Task, session: Session, gpus: list[Gpu]) -> dict[str, Any]:
    config = task.config or {}
    environment: dict[str, Any] = {
        **session.identity(),
        "backend": session.backend,
        "task_hash": task.version_hash,
        "dataset_hash": _data_hash(task),
        "evaluator_hash": _folder_hash(task, (config.get("evaluator") or {}).get("dir")),
        "network": "bridge" if session.spec.network else "none",
    }
    if gpus:
        names = sorted({gpu.name for gpu in gpus})
        environment["gpus"] = {
            "count": len(gpus),
            "type": ", ".join(names),
            "devices": [gpu.id for gpu in gpus],
            "host": host_id(),
        }
    return {key: value for key, value in environment.items() if value not in ("", None)}


def environment_record(*, run: Run, environment: dict[str, Any]) -> None:
    run.environment = environment
    Run.objects.filter(pk=run.pk).update(environment=environment)


def gpu_hours(*, environment: dict[str, Any], wall_seconds: float) -> float | None:
    """GPUs x wall time for an environment recorded by run_environment; None for a CPU one."""
    gpus = (environment or {}).get("gpus")
    if not gpus:
        return None
    return round(gpus["count"] * wall_seconds / 3600, 4)


def gpu_hours_record(*, run: Run, wall_seconds: float) -> None:
    """GPUs x wall time, once the run has ended (nothing for a CPU run)."""
    hours = gpu_hours(environment=run.environment, wall_seconds=wall_seconds)
    if hours is None:
        return
    run.environment = {**run.environment, "gpu_hours": hours}
    Run.objects.filter(pk=run.pk).update(environment=run.environment)
