"""Finding tasks and syncing them into versioned `Task` rows.

A changed folder (or runtime) becomes a new `Task` row and the old row stays, with its runs and
baseline scores: versions are never edited in place. A folder that moved keeps its version (the
hash covers content, not location); its row learns the new path.
"""

from __future__ import annotations

from pathlib import Path

from django.db import transaction

from benchmark.models import Task
from benchmark.tasks.folder import folder_task_load
from benchmark.tasks.mlgym import mlgym_task_load
from benchmark.tasks.spec import TASK_FILE, TaskFormatError, TaskSpec

BUILTIN_DIR = Path(__file__).resolve().parent / "builtin"

# -- discovery -------------------------------------------------------------------------------


def task_load(path: str | Path, *, mlgym_dir: Path | None = None) -> TaskSpec:
    """A task folder, its task.yaml, or an MLGym task YAML file -> TaskSpec."""
    path = Path(path)
    if path.is_dir():
        if not (path / TASK_FILE).is_file():
            raise TaskFormatError(path / TASK_FILE, "(file)", "not found: a task folder needs a task.yaml")
        return folder_task_load(path, source="builtin" if path.resolve().parent == BUILTIN_DIR else "folder")
    if path.name == TASK_FILE:
        return task_load(path.parent, mlgym_dir=mlgym_dir)
    if path.suffix in (".yaml", ".yml"):
        return mlgym_task_load(path, mlgym_dir=mlgym_dir)
    raise TaskFormatError(path, "(file)", "is neither a task folder nor a YAML task definition")


def task_paths(root: str | Path) -> list[Path]:
    """Every task under root: a task folder, a folder of task folders, or an MLGym checkout/configs dir."""
    root = Path(root)
    if root.is_file() or (root / TASK_FILE).is_file():
        return [root]
    for candidate in (root / "configs" / "tasks", root / "tasks"):
        if candidate.is_dir():
            return sorted(p for p in candidate.iterdir() if p.suffix in (".yaml", ".yml"))
    if root.name == "tasks" and root.parent.joinpath("datasets").is_dir():
        return sorted(p for p in root.iterdir() if p.suffix in (".yaml", ".yml"))
    return sorted(p for p in root.iterdir() if p.is_dir() and (p / TASK_FILE).is_file()) if root.is_dir() else []


def mlgym_root(path: Path) -> Path | None:
    """The MLGym checkout that a configs/tasks/*.yaml belongs to."""
    path = Path(path).resolve()
    if path.parent.name == "tasks" and path.parent.parent.name == "configs":
        return path.parent.parent.parent
    return None


def tasks_load(root: str | Path) -> tuple[list[TaskSpec], list[TaskFormatError]]:
    """Load every task under root, keeping the valid ones and collecting the errors."""
    specs, errors = [], []
    for path in task_paths(root):
        try:
            specs.append(task_load(path, mlgym_dir=mlgym_root(path)))
        except TaskFormatError as exc:
            errors.append(exc)
    return specs, errors


# -- versioned sync --------------------------------------------------------------------------


def task_sync_spec(spec: TaskSpec) -> Task:
    """Make spec the current version of its slug: a new row when the content hash is new."""
    with transaction.atomic():
        versions = Task.objects.select_for_update().filter(slug=spec.slug)
        existing = versions.filter(version_hash=spec.content_hash).first()
        current = versions.filter(is_current=True).first()
        if existing is not None and existing.path != spec.path:
            # The same content in another place (the folder moved): still this version.
            Task.objects.filter(pk=existing.pk).update(path=spec.path)
            existing.path = spec.path
        if existing is not None and existing.is_current:
            return existing
        if current is not None:
            # Unset first: the "one current version per slug" constraint is checked per statement.
            Task.objects.filter(pk=current.pk).update(is_current=False)
        if existing is not None:  # the folder went back to an earlier version
            Task.objects.filter(pk=existing.pk).update(is_current=True)
            existing.refresh_from_db()
            return existing
        return Task.objects.create(
            slug=spec.slug,
            version_hash=spec.content_hash,
            is_current=True,
            kind=spec.kind,
            title=spec.title,
            description=spec.description,
            config=spec.config,
            metric=spec.metric,
            direction=spec.direction,
            category=spec.category,
            source=spec.source,
            path=spec.path,
            data_status=spec.data_status,
            data_detail=spec.data_detail,
            venue=spec.venue,
            year=spec.year,
        )


def task_sync(path: str | Path) -> Task:
    """Load the task at path and make it current (see task_sync_spec); raises TaskFormatError."""
    path = Path(path)
    return task_sync_spec(task_load(path, mlgym_dir=mlgym_root(path)))


def tasks_sync(root: str | Path) -> tuple[list[Task], list[TaskFormatError]]:
    specs, errors = tasks_load(root)
    return [task_sync_spec(spec) for spec in specs], errors


def builtin_task_dirs() -> list[Path]:
    return task_paths(BUILTIN_DIR)
