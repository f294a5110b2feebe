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


def folder_task_load(folder: Path, *, source: str = "folder") -> TaskSpec:
    """Load a Referee task folder (``task.yaml`` + files); raises TaskFormatError."""
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

    if data.get("description") is not None:
        description = text_field(data, file, "description")
    elif data.get("description_file") is not None:
        description_path = folder / relative_field(data["description_file"], file, "description_file")
        if not description_path.is_file():
            raise TaskFormatError(file, "description_file", f"{description_path} does not exist")
        description = description_path.read_text(encoding="utf-8")
    else:
        raise TaskFormatError(file, "description", "is required (or give description_file)")

    artifacts = data.get("artifacts")
    if not isinstance(artifacts, list) or not artifacts:
        raise TaskFormatError(file, "artifacts", "must list the files that evaluation takes from the workspace")
    artifacts = [relative_field(item, file, "artifacts") for item in artifacts]
    if any(Path(name).parts[0] == ".referee" for name in artifacts):
        raise TaskFormatError(file, "artifacts", "paths under .referee/ are Referee's own (metrics, logs)")

    workspace = folder_field(folder, file, "workspace", data.get("workspace", "workspace"))

    evaluator = section_field(data, file, "evaluator", EVALUATOR_FIELDS, required=True)
    evaluator_dir = folder_field(folder, file, "evaluator.dir", evaluator.get("dir", "evaluator"))
    evaluator_command = text_field(evaluator, file, "command")
    if "{split}" not in evaluator_command:
        raise TaskFormatError(file, "evaluator.command", "must contain {split} (dev for validate, test for submit)")
    evaluator_timeout = timeout_field(evaluator, file, "evaluator", 120)
    try:
        evaluator_command.format(split="dev", evaluator_dir="/evaluator")
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
    submission = submission_field(data, file, artifacts)

    baseline = section_field(data, file, "baseline", BASELINE_FIELDS, required=True)
    baseline_command = text_field(baseline, file, "command")
    baseline_timeout = timeout_field(baseline, file, "baseline", 300)
    baseline_dir = folder_field(folder, file, "baseline.dir", baseline["dir"]) if baseline.get("dir") else None

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

    data_paths = data.get("data", [])
    if not isinstance(data_paths, list):
        raise TaskFormatError(file, "data", "must be a list of paths the task needs")
    data_paths = [relative_field(item, file, "data") for item in data_paths]
    missing = [p for p in data_paths if not (folder / p).exists()]
    if missing:
        data_status, data_detail = Task.DataStatus.MISSING, "missing: " + ", ".join(str(folder / p) for p in missing)
    elif data_paths:
        data_status, data_detail = Task.DataStatus.OK, ""
    else:
        data_status, data_detail = Task.DataStatus.NOT_NEEDED, ""

    requirements = data.get("requirements", [])
    if not isinstance(requirements, list) or not all(isinstance(line, str) and line.strip() for line in requirements):
        raise TaskFormatError(file, "requirements", "must be a list of pip requirement lines, e.g. [tabulate==0.9.0]")

    year = data.get("year")
    if year is not None and (isinstance(year, bool) or not isinstance(year, int)):
        raise TaskFormatError(file, "year", f"must be a year, not {year!r}")

    config = {
        "format": "referee",
        "runnable": data_status != Task.DataStatus.MISSING,
        "artifacts": artifacts,
        "workspace_dir": workspace,
        "evaluator": {
            "dir": evaluator_dir,
            "command": evaluator_command,
            "timeout": evaluator_timeout,
            "metrics": metrics_from,
        },
        "submission": submission,
        "baseline": {"dir": baseline_dir, "command": baseline_command, "timeout": baseline_timeout},
        "sandbox": {"memory_mb": memory_mb, "cpus": float(cpus), **({"gpus": gpus} if gpus else {})},
        "data": data_paths,
        **({"requirements": [line.strip() for line in requirements]} if requirements else {}),
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
