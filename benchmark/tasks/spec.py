"""Task definitions: the error type, the loaded spec, content hashing and the YAML field readers.

Two formats load into a `TaskSpec`: a Referee task folder (benchmark.tasks.folder) and MLGym's
own task definitions (benchmark.tasks.mlgym). A version is identified by the sha256 of the
folder's content and of Referee's evaluation runtime (sandbox/runtime/: the evaluator's arena and
the submission's driver), i.e. of everything that runs when a submission is scored.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from benchmark.models import Task
from sandbox.evaluation import RUNTIME_DIR

TASK_FILE = "task.yaml"
SLUG_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,199}$")
# Files that never change what a task is (caches, editor droppings).
IGNORED_PARTS = {"__pycache__", ".pytest_cache", ".ipynb_checkpoints", ".DS_Store"}
IGNORED_SUFFIXES = {".pyc", ".pyo"}
MAX_TIMEOUT = 3600

FOLDER_FIELDS = {
    "slug", "title", "category", "description", "description_file", "metric", "direction",
    "artifacts", "workspace", "evaluator", "baseline", "data", "sandbox", "venue", "year", "submission",
    "requirements",
}  # fmt: skip
EVALUATOR_FIELDS = {"dir", "command", "timeout", "metrics"}
BASELINE_FIELDS = {"dir", "command", "timeout"}
SANDBOX_FIELDS = {"memory_mb", "cpus", "gpus"}
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


def hash_parts(parts: list[bytes]) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(len(part).to_bytes(8, "big") + part)
    return digest.hexdigest()


# -- field readers ---------------------------------------------------------------------------


def read_yaml(file: Path) -> dict[str, Any]:
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


def text_field(data: dict, file: Path, name: str, *, required: bool = True, default: str = "") -> str:
    value = data.get(name)
    if value is None:
        if required:
            raise TaskFormatError(file, name, "is required")
        return default
    if not isinstance(value, str) or (required and not value.strip()):
        raise TaskFormatError(file, name, f"must be a non-empty string, not {value!r}")
    return value.strip()


def direction_field(data: dict, file: Path, name: str = "direction") -> str:
    value = text_field(data, file, name)
    if value not in Task.Direction.values:
        raise TaskFormatError(file, name, f"must be 'max' or 'min', not {value!r}")
    return value


def timeout_field(data: dict, file: Path, name: str, default: int) -> int:
    value = data.get("timeout", default)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= MAX_TIMEOUT:
        raise TaskFormatError(file, f"{name}.timeout", f"must be whole seconds in 1..{MAX_TIMEOUT}, not {value!r}")
    return value


def relative_field(value: Any, file: Path, name: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise TaskFormatError(file, name, f"must be a relative path, not {value!r}")
    path = Path(value)
    if path.is_absolute() or ".." in path.parts:
        raise TaskFormatError(file, name, f"must stay inside the task folder: {value!r}")
    return path.as_posix()


def section_field(data: dict, file: Path, name: str, allowed: set[str], *, required: bool) -> dict:
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


def folder_field(root: Path, file: Path, name: str, value: str) -> str:
    relative = relative_field(value, file, name)
    if not (root / relative).is_dir():
        raise TaskFormatError(file, name, f"folder {relative!r} does not exist in {root}")
    return relative


def number_field(section: dict, file: Path, name: str, default: float, low: float, high: float) -> float:
    value = section.get(name.rpartition(".")[2], default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise TaskFormatError(file, name, f"must be a number in {low:g}..{high:g}, not {value!r}")
    return float(value)


def submission_field(data: dict, file: Path, artifacts: list[str]) -> dict | None:
    """The ``submission:`` section: which artifacts are code, and what the evaluator calls.

    Code artifacts run only in a sandbox of their own; the evaluator reaches them through
    sandbox/runtime/arena.py. An artifact that is code without this section would run in the
    evaluator's sandbox, next to the labels and the metrics: refused."""
    section = section_field(data, file, "submission", SUBMISSION_FIELDS, required=False)
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
    module = relative_field(section.get("module"), file, "submission.module")
    files = section.get("files", artifacts)
    if not isinstance(files, list) or not files:
        raise TaskFormatError(file, "submission.files", "must list artifacts that belong to the submitted code")
    files = [relative_field(item, file, "submission.files") for item in files]
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
        "call_timeout": number_field(section, file, "submission.call_timeout", 5, 0.01, 600),
        "load_timeout": number_field(section, file, "submission.load_timeout", 60, 1, 600),
        "max_reply_bytes": int(number_field(section, file, "submission.max_reply_bytes", 1 << 20, 16, 64 << 20)),
        "stub": stub,
    }
