"""A Referee task folder: ``task.yaml`` + ``workspace/`` (what the agent gets) + ``evaluator/``
(pristine evaluation code, labels, opponents; never shown to the agent) + optional ``baseline/``
(see benchmark/tasks/builtin/prisoners_dilemma/task.yaml). A task whose artifacts are code declares
``submission:`` (the module and the functions the evaluator calls): that code then runs in a
sandbox of its own, never in the evaluator's.
"""

from __future__ import annotations

from pathlib import Path

from benchmark.models import Task
from benchmark.tasks.spec import (
    BASELINE_FIELDS,
    EVALUATOR_FIELDS,
    FOLDER_FIELDS,
    SANDBOX_FIELDS,
    SLUG_RE,
    TASK_FILE,
    TaskFormatError,
    TaskSpec,
    content_hash,
    direction_field,
    folder_field,
    read_yaml,
    relative_field,
    section_field,
    submission_field,
    text_field,
    timeout_field,
)

# -- Referee task folders --------------------------------------------------------------------


def _description(data: dict, file: Path, folder: Path) -> str:
    """The task's description, inline or from ``description_file``; one of the two is required,
    since the agent reads nothing else about what to do."""
    if data.get("description") is not None:
        return text_field(data, file, "description")
    if data.get("description_file") is not None:
        description_path = folder / relative_field(data["description_file"], file, "description_file")
        if not description_path.is_file():
            raise TaskFormatError(file, "description_file", f"{description_path} does not exist")
        return description_path.read_text(encoding="utf-8")
    raise TaskFormatError(file, "description", "is required (or give description_file)")


def _artifacts(data: dict, file: Path) -> list[str]:
    """The workspace files evaluation takes; paths under .referee/ are refused, since that folder
    is Referee's own (its metrics and logs)."""
    artifacts = data.get("artifacts")
    if not isinstance(artifacts, list) or not artifacts:
        raise TaskFormatError(file, "artifacts", "must list the files that evaluation takes from the workspace")
    artifacts = [relative_field(item, file, "artifacts") for item in artifacts]
    if any(Path(name).parts[0] == ".referee" for name in artifacts):
        raise TaskFormatError(file, "artifacts", "paths under .referee/ are Referee's own (metrics, logs)")
    return artifacts


def _evaluator(data: dict, file: Path, folder: Path) -> dict:
    """The evaluator section, its command checked now (a bad placeholder would otherwise fail only
    when the first run is evaluated)."""
    evaluator = section_field(data, file, "evaluator", EVALUATOR_FIELDS, required=True)
    evaluator_dir = folder_field(folder, file, "evaluator.dir", evaluator.get("dir", "evaluator"))
    command = text_field(evaluator, file, "command")
    if "{split}" not in command:
        raise TaskFormatError(file, "evaluator.command", "must contain {split} (dev for validate, test for submit)")
    timeout = timeout_field(evaluator, file, "evaluator", 120)
    try:
        command.format(split="dev", evaluator_dir="/evaluator")
    except (KeyError, IndexError, ValueError) as exc:
        raise TaskFormatError(
            file, "evaluator.command", f"bad placeholder {exc}: use {{split}} and {{evaluator_dir}} only"
        ) from None
    metrics_from = evaluator.get("metrics", "file")
    if metrics_from not in ("file", "stdout"):
        raise TaskFormatError(
            file,
            "evaluator.metrics",
            f"must be file (arena.emit) or stdout (a printed JSON line), not {metrics_from!r}",
        )
    return {"dir": evaluator_dir, "command": command, "timeout": timeout, "metrics": metrics_from}


def _baseline(data: dict, file: Path, folder: Path) -> dict:
    """The baseline section: the command that gives every run a reference score."""
    baseline = section_field(data, file, "baseline", BASELINE_FIELDS, required=True)
    command = text_field(baseline, file, "command")
    timeout = timeout_field(baseline, file, "baseline", 300)
    baseline_dir = folder_field(folder, file, "baseline.dir", baseline["dir"]) if baseline.get("dir") else None
    return {"dir": baseline_dir, "command": command, "timeout": timeout}


def _sandbox(data: dict, file: Path) -> dict:
    """The sandbox's limits, bounded here so that an impossible request is a load error naming the
    field, not a failed run."""
    sandbox = section_field(data, file, "sandbox", SANDBOX_FIELDS, required=False)
    memory_mb = sandbox.get("memory_mb", 1024)
    if isinstance(memory_mb, bool) or not isinstance(memory_mb, int) or not 128 <= memory_mb <= 65536:
        raise TaskFormatError(file, "sandbox.memory_mb", f"must be an integer in 128..65536, not {memory_mb!r}")
    cpus = sandbox.get("cpus", 1.0)
    if isinstance(cpus, bool) or not isinstance(cpus, (int, float)) or not 0.1 <= cpus <= 64:
        raise TaskFormatError(file, "sandbox.cpus", f"must be a number in 0.1..64, not {cpus!r}")
    gpus = sandbox.get("gpus", 0)
    if isinstance(gpus, bool) or not isinstance(gpus, int) or not 0 <= gpus <= 16:
        raise TaskFormatError(file, "sandbox.gpus", f"must be a whole number of GPUs in 0..16, not {gpus!r}")
    return {"memory_mb": memory_mb, "cpus": float(cpus), **({"gpus": gpus} if gpus else {})}


def _data(data: dict, file: Path, folder: Path) -> tuple[list[str], str, str]:
    """The data paths the task needs and whether they are there: a task with missing data is
    loaded (and listed, with what is missing) but not runnable, rather than refused."""
    data_paths = data.get("data", [])
    if not isinstance(data_paths, list):
        raise TaskFormatError(file, "data", "must be a list of paths the task needs")
    data_paths = [relative_field(item, file, "data") for item in data_paths]
    missing = [p for p in data_paths if not (folder / p).exists()]
    if missing:
        return data_paths, Task.DataStatus.MISSING, "missing: " + ", ".join(str(folder / p) for p in missing)
    if data_paths:
        return data_paths, Task.DataStatus.OK, ""
    return data_paths, Task.DataStatus.NOT_NEEDED, ""


def _requirements(data: dict, file: Path) -> list[str]:
    """The pip requirement lines the sandbox installs; a blank or non-text line is refused here
    rather than by pip inside the sandbox."""
    requirements = data.get("requirements", [])
    if not isinstance(requirements, list) or not all(isinstance(line, str) and line.strip() for line in requirements):
        raise TaskFormatError(file, "requirements", "must be a list of pip requirement lines, e.g. [tabulate==0.9.0]")
    return [line.strip() for line in requirements]


def _year(data: dict, file: Path) -> int | None:
    """The task's year, if given (YAML's true would otherwise pass as 1)."""
    year = data.get("year")
    if year is not None and (isinstance(year, bool) or not isinstance(year, int)):
        raise TaskFormatError(file, "year", f"must be a year, not {year!r}")
    return year


def folder_task_load(folder: Path, *, source: str = "folder") -> TaskSpec:
    """Load a Referee task folder (``task.yaml`` + files); raises TaskFormatError.

    Fields are checked in the file's reading order, so that the first error named is the first
    one a task author meets."""
    folder = Path(folder).resolve()
    file = folder / TASK_FILE
    data = read_yaml(file)
    unknown = sorted(set(data) - FOLDER_FIELDS)
    if unknown:
        raise TaskFormatError(file, unknown[0], f"unknown field (allowed: {', '.join(sorted(FOLDER_FIELDS))})")

    slug = text_field(data, file, "slug", required=False, default=folder.name)
    if not SLUG_RE.match(slug):
        raise TaskFormatError(file, "slug", f"{slug!r} is not a slug (letters, digits, _ and -)")
    title = text_field(data, file, "title")
    metric = text_field(data, file, "metric")
    direction = direction_field(data, file)
    category = text_field(data, file, "category", required=False)
    description = _description(data, file, folder)
    artifacts = _artifacts(data, file)
    workspace = folder_field(folder, file, "workspace", data.get("workspace", "workspace"))
    evaluator = _evaluator(data, file, folder)
    submission = submission_field(data, file, artifacts)
    baseline = _baseline(data, file, folder)
    sandbox = _sandbox(data, file)
    data_paths, data_status, data_detail = _data(data, file, folder)
    requirements = _requirements(data, file)
    year = _year(data, file)

    config = {
        "format": "referee",
        "runnable": data_status != Task.DataStatus.MISSING,
        "artifacts": artifacts,
        "workspace_dir": workspace,
        "evaluator": evaluator,
        "submission": submission,
        "baseline": baseline,
        "sandbox": sandbox,
        "data": data_paths,
        **({"requirements": requirements} if requirements else {}),
    }
    return TaskSpec(
        slug=slug,
        title=title,
        source=source,
        description=description,
        metric=metric,
        direction=direction,
        path=str(folder),
        content_hash=content_hash(folder),
        config=config,
        category=category,
        data_status=data_status,
        data_detail=data_detail,
        venue=text_field(data, file, "venue", required=False),
        year=year,
    )
