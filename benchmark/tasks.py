"""Task folders: the YAML format, its loader, content hashing and versioned sync into `Task` rows.

Two formats load here:

* a Referee task folder: ``task.yaml`` + ``workspace/`` (what the agent gets) + ``evaluator/``
  (pristine evaluation code, labels, opponents; never shown to the agent) + optional
  ``baseline/`` (see benchmark/builtin_tasks/prisoners_dilemma/task.yaml). A task whose
  artifacts are code declares ``submission:`` (the module and the functions the evaluator
  calls): that code then runs in a sandbox of its own, never in the evaluator's;
* MLGym's own task definitions (``configs/tasks/<name>.yaml`` with ``configs/datasets/*.yaml``).
  MLGym keeps the priority metric in code, so its table is reproduced below; a file may carry
  ``metric:`` / ``direction:`` keys to say it itself.

A version is identified by the sha256 of the folder's content and of Referee's evaluation
runtime (sandbox/runtime/: the evaluator's arena and the submission's driver), i.e. of
everything that runs when a submission is scored; a change to either becomes a new `Task` row
and the old row stays, with its runs and baseline scores (never edited in place).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from django.db import transaction

from benchmark.mlgym_results import MLGYM_TASKS
from benchmark.models import Task
from sandbox.evaluation import RUNTIME_DIR

BUILTIN_DIR = Path(__file__).resolve().parent / "builtin_tasks"
TASK_FILE = "task.yaml"
SLUG_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,199}$")
# Files that never change what a task is (caches, editor droppings).
IGNORED_PARTS = {"__pycache__", ".pytest_cache", ".ipynb_checkpoints", ".DS_Store"}
IGNORED_SUFFIXES = {".pyc", ".pyo"}
MAX_TIMEOUT = 3600

# MLGym's priority metric per task id (from its code, as listed in ../shared/mlgym/README.md).
MLGYM_METRICS: dict[str, tuple[str, str]] = {
    slug: (spec.metric, spec.direction.value) for slug, spec in MLGYM_TASKS.items()
}
# Task files MLGym ships that its README table does not cover: Referee's reading of them, marked
# as such on the task (config["metric_source"]).
MLGYM_METRICS_INFERRED: dict[str, tuple[str, str]] = {
    "regressionKaggleHousePriceL1": ("r2", "max"),
    "regressionHousePrice": ("r2", "max"),
    "regressionHousingPrice": ("r2", "max"),
    "rlMountainCarContinuousReinforce": ("Reward Mean", "max"),
    "titanicSurvival": ("Accuracy", "max"),
}

FOLDER_FIELDS = {
    "slug", "title", "category", "description", "description_file", "metric", "direction",
    "artifacts", "workspace", "evaluator", "baseline", "data", "sandbox", "venue", "year", "submission",
}  # fmt: skip
EVALUATOR_FIELDS = {"dir", "command", "timeout", "metrics"}
BASELINE_FIELDS = {"dir", "command", "timeout"}
SANDBOX_FIELDS = {"memory_mb", "cpus"}
SUBMISSION_FIELDS = {"module", "functions", "files", "call_timeout", "load_timeout", "max_reply_bytes", "stub"}
# Artifacts that are code (or unpickle into code): they may only run in a submission sandbox.
CODE_SUFFIXES = {".py", ".pyc", ".so", ".pkl", ".pickle", ".pt", ".pth", ".joblib", ".sh"}


class TaskFormatError(ValueError):
    """A task definition is invalid; names the file and the field."""

    def __init__(self, file: str | Path, field_name: str, message: str) -> None:
        self.file = str(file)
        self.field = field_name
        self.message = message
        super().__init__(f"{self.file}: field '{field_name}': {message}")


@dataclass(frozen=True)
class TaskSpec:
    """A loaded task definition, before it becomes a `Task` row."""

    slug: str
    title: str
    source: str  # "builtin", "folder" or "mlgym"
    description: str
    metric: str
    direction: str
    path: str
    content_hash: str
    config: dict[str, Any] = field(default_factory=dict)
    category: str = ""
    kind: str = Task.Kind.MLGYM
    data_status: str = Task.DataStatus.NOT_NEEDED
    data_detail: str = ""
    venue: str = ""
    year: int | None = None

    @property
    def runnable(self) -> bool:
        """Whether Referee can prepare a workspace and evaluate submissions for this task."""
        return bool(self.config.get("runnable"))


# -- hashing ---------------------------------------------------------------------------------


def task_files(folder: Path) -> list[Path]:
    files = []
    for path in folder.rglob("*"):
        relative = path.relative_to(folder)
        if any(part in IGNORED_PARTS for part in relative.parts) or path.suffix in IGNORED_SUFFIXES:
            continue
        if path.is_file() and not path.is_symlink():
            files.append(path)
    return sorted(files, key=lambda p: p.relative_to(folder).as_posix())


def content_hash(folder: Path) -> str:
    """sha256 over every file's relative path and bytes (caches ignored), and over Referee's
    evaluation runtime that runs with them: the version identity."""
    folder = Path(folder)
    digest = hashlib.sha256()
    files = [(path.relative_to(folder).as_posix(), path) for path in task_files(folder)]
    files += [
        (f"(referee runtime)/{path.relative_to(RUNTIME_DIR).as_posix()}", path) for path in task_files(RUNTIME_DIR)
    ]
    for relative, path in files:
        name = relative.encode()
        data = path.read_bytes()
        digest.update(len(name).to_bytes(4, "big") + name + len(data).to_bytes(8, "big"))
        digest.update(data)
    return digest.hexdigest()


def _hash_parts(parts: list[bytes]) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(len(part).to_bytes(8, "big") + part)
    return digest.hexdigest()


# -- field readers ---------------------------------------------------------------------------


def _read_yaml(file: Path) -> dict[str, Any]:
    try:
        data = file.read_bytes()
    except FileNotFoundError:
        raise TaskFormatError(file, "(file)", "not found") from None
    except OSError as exc:
        raise TaskFormatError(file, "(file)", f"cannot be read: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise TaskFormatError(file, "(file)", f"is not UTF-8 at line {line} (byte offset {exc.start})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise TaskFormatError(file, "(file)", f"is not valid YAML{where}: {getattr(exc, 'problem', exc)}") from None
    if not isinstance(data, dict):
        raise TaskFormatError(file, "(file)", f"must be a YAML mapping, not {type(data).__name__}")
    return data


def _text(data: dict, file: Path, name: str, *, required: bool = True, default: str = "") -> str:
    value = data.get(name)
    if value is None:
        if required:
            raise TaskFormatError(file, name, "is required")
        return default
    if not isinstance(value, str) or (required and not value.strip()):
        raise TaskFormatError(file, name, f"must be a non-empty string, not {value!r}")
    return value.strip()


def _direction(data: dict, file: Path, name: str = "direction") -> str:
    value = _text(data, file, name)
    if value not in Task.Direction.values:
        raise TaskFormatError(file, name, f"must be 'max' or 'min', not {value!r}")
    return value


def _timeout(data: dict, file: Path, name: str, default: int) -> int:
    value = data.get("timeout", default)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= MAX_TIMEOUT:
        raise TaskFormatError(file, f"{name}.timeout", f"must be whole seconds in 1..{MAX_TIMEOUT}, not {value!r}")
    return value


def _relative(value: Any, file: Path, name: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise TaskFormatError(file, name, f"must be a relative path, not {value!r}")
    path = Path(value)
    if path.is_absolute() or ".." in path.parts:
        raise TaskFormatError(file, name, f"must stay inside the task folder: {value!r}")
    return path.as_posix()


def _section(data: dict, file: Path, name: str, allowed: set[str], *, required: bool) -> dict:
    value = data.get(name)
    if value is None:
        if required:
            raise TaskFormatError(file, name, "is required")
        return {}
    if not isinstance(value, dict):
        raise TaskFormatError(file, name, f"must be a mapping, not {type(value).__name__}")
    unknown = sorted(set(value) - allowed)
    if unknown:
        raise TaskFormatError(file, f"{name}.{unknown[0]}", f"unknown field (allowed: {', '.join(sorted(allowed))})")
    return value


def _folder(root: Path, file: Path, name: str, value: str) -> str:
    relative = _relative(value, file, name)
    if not (root / relative).is_dir():
        raise TaskFormatError(file, name, f"folder {relative!r} does not exist in {root}")
    return relative


def _number(section: dict, file: Path, name: str, default: float, low: float, high: float) -> float:
    value = section.get(name.rpartition(".")[2], default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise TaskFormatError(file, name, f"must be a number in {low:g}..{high:g}, not {value!r}")
    return float(value)


def _submission(data: dict, file: Path, artifacts: list[str]) -> dict | None:
    """The ``submission:`` section: which artifacts are code, and what the evaluator calls.

    Code artifacts run only in a sandbox of their own; the evaluator reaches them through
    sandbox/runtime/arena.py. An artifact that is code without this section would run in the
    evaluator's sandbox, next to the labels and the metrics: refused."""
    section = _section(data, file, "submission", SUBMISSION_FIELDS, required=False)
    if not section:
        code = [name for name in artifacts if Path(name).suffix in CODE_SUFFIXES]
        if code:
            raise TaskFormatError(
                file,
                "submission",
                f"artifact {code[0]!r} is code: declare submission: (module, functions) so that it runs in "
                "a sandbox of its own and the evaluator calls it, instead of importing it next to its labels",
            )
        return None
    module = _relative(section.get("module"), file, "submission.module")
    files = section.get("files", artifacts)
    if not isinstance(files, list) or not files:
        raise TaskFormatError(file, "submission.files", "must list artifacts that belong to the submitted code")
    files = [_relative(item, file, "submission.files") for item in files]
    unknown = [name for name in [module, *files] if name not in artifacts]
    if unknown:
        raise TaskFormatError(file, "submission", f"{unknown[0]!r} is not one of the artifacts {artifacts}")
    if module not in files or not module.endswith(".py"):
        raise TaskFormatError(file, "submission.module", f"must be a .py file among submission.files, not {module!r}")
    code = [name for name in artifacts if Path(name).suffix in CODE_SUFFIXES and name not in files]
    if code:
        raise TaskFormatError(file, "submission.files", f"artifact {code[0]!r} is code and must be listed here")
    functions = section.get("functions")
    if (
        not isinstance(functions, list)
        or not functions
        or not all(isinstance(name, str) and name.isidentifier() for name in functions)
    ):
        raise TaskFormatError(file, "submission.functions", f"must list Python function names, not {functions!r}")
    stub = section.get("stub", True)
    if not isinstance(stub, bool):
        raise TaskFormatError(file, "submission.stub", f"must be true or false, not {stub!r}")
    return {
        "module": module,
        "functions": functions,
        "files": files,
        "call_timeout": _number(section, file, "submission.call_timeout", 5, 0.01, 600),
        "load_timeout": _number(section, file, "submission.load_timeout", 60, 1, 600),
        "max_reply_bytes": int(_number(section, file, "submission.max_reply_bytes", 1 << 20, 16, 64 << 20)),
        "stub": stub,
    }


# -- Referee task folders --------------------------------------------------------------------


def folder_task_load(folder: Path, *, source: str = "folder") -> TaskSpec:
    """Load a Referee task folder (``task.yaml`` + files); raises TaskFormatError."""
    folder = Path(folder).resolve()
    file = folder / TASK_FILE
    data = _read_yaml(file)
    unknown = sorted(set(data) - FOLDER_FIELDS)
    if unknown:
        raise TaskFormatError(file, unknown[0], f"unknown field (allowed: {', '.join(sorted(FOLDER_FIELDS))})")

    slug = _text(data, file, "slug", required=False, default=folder.name)
    if not SLUG_RE.match(slug):
        raise TaskFormatError(file, "slug", f"{slug!r} is not a slug (letters, digits, _ and -)")
    title = _text(data, file, "title")
    metric = _text(data, file, "metric")
    direction = _direction(data, file)
    category = _text(data, file, "category", required=False)

    if data.get("description") is not None:
        description = _text(data, file, "description")
    elif data.get("description_file") is not None:
        description_path = folder / _relative(data["description_file"], file, "description_file")
        if not description_path.is_file():
            raise TaskFormatError(file, "description_file", f"{description_path} does not exist")
        description = description_path.read_text(encoding="utf-8")
    else:
        raise TaskFormatError(file, "description", "is required (or give description_file)")

    artifacts = data.get("artifacts")
    if not isinstance(artifacts, list) or not artifacts:
        raise TaskFormatError(file, "artifacts", "must list the files that evaluation takes from the workspace")
    artifacts = [_relative(item, file, "artifacts") for item in artifacts]
    if any(Path(name).parts[0] == ".referee" for name in artifacts):
        raise TaskFormatError(file, "artifacts", "paths under .referee/ are Referee's own (metrics, logs)")

    workspace = _folder(folder, file, "workspace", data.get("workspace", "workspace"))

    evaluator = _section(data, file, "evaluator", EVALUATOR_FIELDS, required=True)
    evaluator_dir = _folder(folder, file, "evaluator.dir", evaluator.get("dir", "evaluator"))
    evaluator_command = _text(evaluator, file, "command")
    if "{split}" not in evaluator_command:
        raise TaskFormatError(file, "evaluator.command", "must contain {split} (dev for validate, test for submit)")
    evaluator_timeout = _timeout(evaluator, file, "evaluator", 120)
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
    submission = _submission(data, file, artifacts)

    baseline = _section(data, file, "baseline", BASELINE_FIELDS, required=True)
    baseline_command = _text(baseline, file, "command")
    baseline_timeout = _timeout(baseline, file, "baseline", 300)
    baseline_dir = _folder(folder, file, "baseline.dir", baseline["dir"]) if baseline.get("dir") else None

    sandbox = _section(data, file, "sandbox", SANDBOX_FIELDS, required=False)
    memory_mb = sandbox.get("memory_mb", 1024)
    if isinstance(memory_mb, bool) or not isinstance(memory_mb, int) or not 128 <= memory_mb <= 65536:
        raise TaskFormatError(file, "sandbox.memory_mb", f"must be an integer in 128..65536, not {memory_mb!r}")
    cpus = sandbox.get("cpus", 1.0)
    if isinstance(cpus, bool) or not isinstance(cpus, (int, float)) or not 0.1 <= cpus <= 64:
        raise TaskFormatError(file, "sandbox.cpus", f"must be a number in 0.1..64, not {cpus!r}")

    data_paths = data.get("data", [])
    if not isinstance(data_paths, list):
        raise TaskFormatError(file, "data", "must be a list of paths the task needs")
    data_paths = [_relative(item, file, "data") for item in data_paths]
    missing = [p for p in data_paths if not (folder / p).exists()]
    if missing:
        data_status, data_detail = Task.DataStatus.MISSING, "missing: " + ", ".join(str(folder / p) for p in missing)
    elif data_paths:
        data_status, data_detail = Task.DataStatus.OK, ""
    else:
        data_status, data_detail = Task.DataStatus.NOT_NEEDED, ""

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
        "sandbox": {"memory_mb": memory_mb, "cpus": float(cpus)},
        "data": data_paths,
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
        venue=_text(data, file, "venue", required=False),
        year=year,
    )


# -- MLGym task definitions ------------------------------------------------------------------


def _string_list(data: dict, file: Path, name: str) -> list[str]:
    value = data.get(name, [])
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, str) and item.strip() for item in value):
        raise TaskFormatError(file, name, f"must be a list of paths, not {value!r}")
    return value


def _mlgym_slug(file: Path, task_id: str) -> str:
    """The MLGym id, unless another file in the folder owns that id (e.g. the L1 variants)."""
    if file.stem != task_id and (file.parent / f"{task_id}{file.suffix}").is_file():
        return file.stem
    return task_id


def _mlgym_dataset(configs_dir: Path, reference: str, file: Path) -> tuple[dict | None, str]:
    """(the dataset config or None, a note when it is missing)."""
    dataset_file = configs_dir / _relative(reference, file, "dataset_configs")
    if not dataset_file.is_file():
        return None, f"dataset config {reference} not found in {configs_dir}"
    dataset = _read_yaml(dataset_file)
    _text(dataset, dataset_file, "name")
    _text(dataset, dataset_file, "data_path")
    is_local = dataset.get("is_local", True)
    if not isinstance(is_local, bool):
        raise TaskFormatError(dataset_file, "is_local", f"must be true or false, not {is_local!r}")
    return dataset, ""


def mlgym_task_load(file: Path, *, mlgym_dir: Path | None = None) -> TaskSpec:
    """Load one of MLGym's ``configs/tasks/*.yaml``; code and data are looked up under mlgym_dir.

    MLGym's released data has no code files, so these tasks usually load as data "missing"
    (saying which paths): they are listed, compared and used by imported trajectories, but not run.
    """
    file = Path(file).resolve()
    configs_dir = file.parent.parent
    root = Path(mlgym_dir).resolve() if mlgym_dir else configs_dir.parent
    data = _read_yaml(file)
    task_id = _text(data, file, "id")
    if not SLUG_RE.match(task_id):
        raise TaskFormatError(file, "id", f"{task_id!r} cannot be used as a slug")
    title = _text(data, file, "name")
    description = _text(data, file, "description")

    if data.get("metric") is not None:
        metric, direction, metric_source = _text(data, file, "metric"), _direction(data, file), "task file"
    elif task_id in MLGYM_METRICS:
        (metric, direction), metric_source = MLGYM_METRICS[task_id], "MLGym (table in its README)"
    elif task_id in MLGYM_METRICS_INFERRED:
        (metric, direction), metric_source = (
            MLGYM_METRICS_INFERRED[task_id],
            "inferred by Referee (not in MLGym's table)",
        )
    else:
        raise TaskFormatError(file, "metric", f"no metric is known for task id {task_id!r}: add metric: and direction:")

    for name in ("starter_code", "baseline_paths", "evaluation_paths"):
        _string_list(data, file, name)
    baseline_scores = data.get("baseline_scores", [])
    if not isinstance(baseline_scores, list) or not all(isinstance(item, dict) for item in baseline_scores):
        raise TaskFormatError(file, "baseline_scores", "must be a list of metric mappings")
    timeout = data.get("training_timeout")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int)):
        raise TaskFormatError(file, "training_timeout", f"must be whole seconds, not {timeout!r}")

    missing: list[str] = []
    datasets: dict[str, dict] = {}
    hash_parts = [file.read_bytes()]
    docs = []
    for reference in _string_list(data, file, "dataset_configs"):
        dataset, note = _mlgym_dataset(configs_dir, reference, file)
        if dataset is None:
            missing.append(note)
            continue
        datasets[reference] = dataset
        hash_parts.append((configs_dir / reference).read_bytes())
        docs.append(f"{dataset['name']}:\n{(dataset.get('description') or '').strip()}")
        if dataset.get("is_local", True):
            if not (root / dataset["data_path"]).exists():
                missing.append(f"dataset {dataset['name']}: {root / dataset['data_path']}")
        else:
            missing.append(
                f"dataset {dataset['name']}: Hugging Face dataset {dataset['data_path']} (no downloads here)"
            )
    for path in _string_list(data, file, "starter_code"):
        if not (root / path).exists():
            missing.append(f"starter code: {root / path}")
    description = description.replace("{dataset_docs}", "\n\n".join(docs) or "(no dataset)")

    if missing:
        data_status = Task.DataStatus.MISSING
    else:
        data_status = Task.DataStatus.OK if datasets else Task.DataStatus.NOT_NEEDED
    data_detail = "\n".join(missing)
    # Data appearing on the machine is a new version: the row's data status is part of what it is.
    hash_parts.append(f"{data_status}\n{data_detail}".encode())

    config = {
        "format": "mlgym",
        # Running MLGym's own code needs its repository; Referee only lists these tasks.
        "runnable": False,
        "not_runnable_reason": "MLGym's task code and data are not part of the released data on this machine",
        "mlgym_id": task_id,
        "metric_source": metric_source,
        "published_baseline_scores": baseline_scores[0] if baseline_scores else {},
        "task_entrypoint": data.get("task_entrypoint", ""),
        "training_timeout": timeout,
        "mlgym": data,
        "datasets": datasets,
    }
    return TaskSpec(
        slug=_mlgym_slug(file, task_id),
        title=title,
        source="mlgym",
        description=description,
        metric=metric,
        direction=direction,
        path=str(file),
        content_hash=_hash_parts(hash_parts),
        config=config,
        category=str(data.get("task_entrypoint") or ""),
        data_status=data_status,
        data_detail=data_detail,
    )


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
