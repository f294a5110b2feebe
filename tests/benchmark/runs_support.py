"""Small factories for run tests: built-in tasks, agent configs, runs (no JSON fixtures)."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path
from typing import Any

from benchmark.models import AgentConfig, Run, Task


def builtin_task(slug: str = "prisoners_dilemma") -> Task:
    from benchmark.tasks.loader import BUILTIN_DIR, task_sync

    return task_sync(BUILTIN_DIR / slug)


def stub_task(slug: str = "") -> Task:
    """A task row with no folder: listed, never runnable."""
    slug = slug or f"stub-{uuid.uuid4().hex[:8]}"
    return Task.objects.create(
        slug=slug, version_hash="0" * 64, kind=Task.Kind.MLGYM, title=slug, metric="Score", source="test"
    )


def agent(kind: str = AgentConfig.Kind.BASELINE, **fields: Any) -> AgentConfig:
    return AgentConfig.objects.create(name=fields.pop("name", fields.get("model") or kind), kind=kind, **fields)


def make_run(*, owner: Any, task: Task | None = None, agent_config: AgentConfig | None = None, **fields: Any) -> Run:
    return Run.objects.create(
        task=task or stub_task(), agent=agent_config or agent(), owner=owner, method="test", **fields
    )


def gpu_task(tmp_path: Path, gpus_line: str = "  gpus: 1\n") -> Task:
    """The built-in Prisoner's Dilemma, as a task that asks for a GPU."""
    from benchmark.tasks.loader import BUILTIN_DIR, task_sync

    folder = tmp_path / "pd_gpu"
    shutil.copytree(BUILTIN_DIR / "prisoners_dilemma", folder)
    yaml = folder / "task.yaml"
    yaml.write_text(yaml.read_text() + "sandbox:\n  memory_mb: 1024\n" + gpus_line)
    return task_sync(folder)
