"""Small factories for run tests: built-in tasks, agent configs, runs (no JSON fixtures)."""

from __future__ import annotations

import uuid
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
