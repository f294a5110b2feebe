"""What the agent harness calls to set up a task's workspace and to score a submission.

The rule (DESIGN.md, flow 2): scoring never trusts the agent's sandbox. Only the task's declared
artifact files are copied out of it. Data artifacts go into a fresh sandbox without network that
holds the task's pristine evaluator (labels, opponents, instances); code artifacts (the task's
``submission:``) go into a sandbox of their own that the evaluator calls over two pipes (see
sandbox/evaluation.py). The metrics come from a file the evaluator writes in its own sandbox,
never from anything the agent's code can print. `validate`, `submit`, the baselines (benchmark.tasks.baselines) and
`manage.py evaluate_submission` all go through ``artifacts_evaluate``.
"""

from __future__ import annotations

import fnmatch
import math
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from benchmark.models import Task
from benchmark.tasks.resources import task_image, task_requirements
from benchmark.tasks.spec import content_hash, task_files
from sandbox import SandboxError, SandboxSpec, Session
from sandbox.evaluation import Submission

Split = Literal["dev", "test"]
WORKDIR = "/workspace"
MAX_ARTIFACT_BYTES = 64 << 20
# A declared artifact may be a pattern in its last path segment (MLGym's `checkpoints/*.pkl`): the
# files that match, in that folder only, up to this many.
MAX_ARTIFACT_MATCHES = 32
OUTPUT_KEPT = 20_000


class TaskNotRunnable(RuntimeError):
    """The task cannot be prepared or evaluated here (MLGym task without its code, changed folder...)."""


@dataclass
class ScoreResult:
    split: str
    metrics: dict[str, Any] = field(default_factory=dict)
    primary: float | None = None
    error: str = ""
    output: str = ""
    duration: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.error and self.primary is not None

    def as_dict(self) -> dict[str, Any]:
        return {"metrics": self.metrics, "primary": self.primary, "error": self.error}


def primary_value(metrics: dict[str, Any], metric: str) -> float | None:
    """The task's metric as a finite float, else None (a NaN or a string is not a score)."""
    value = metrics.get(metric)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def task_folder(task: Task) -> Path:
    """The task's folder, checked to hold exactly the version this row describes."""
    if not task.config.get("runnable"):
        reason = task.config.get("not_runnable_reason") or task.data_detail or "its data is missing"
        raise TaskNotRunnable(f"task {task.slug} cannot run here: {reason}")
    if task.config.get("format") == "mlgym":
        # MLGym's own task: its folder is built from the checkout (benchmark.tasks.mlgym_build),
        # which is checked against this version there.
        from benchmark.tasks.mlgym_build import MlgymBuildError, mlgym_task_folder

        try:
            return mlgym_task_folder(task)
        except MlgymBuildError as exc:
            raise TaskNotRunnable(f"task {task.slug} cannot run here: {exc}") from None
    folder = Path(task.path)
    if not folder.is_dir():
        raise TaskNotRunnable(f"task {task.slug}: folder {folder} is gone")
    if content_hash(folder) != task.version_hash:
        raise TaskNotRunnable(
            f"task {task.slug}: {folder} no longer holds version {task.version_hash[:8]} "
            "(it changed since it was loaded: run `manage.py load_tasks` to load the new version)"
        )
    return folder


def task_image_ensure(task: Task, *, log: Callable[[str], None] = lambda line: None) -> str | None:
    """The task's image variant, built first if it is missing; refused on a backend without images."""
    from sandbox import conf as sandbox_conf

    requirements = task_requirements(task)
    if not requirements:
        return None
    if sandbox_conf.backend_name() not in ("docker", "podman"):
        raise TaskNotRunnable(
            f"task {task.slug} needs Python packages of its own ({', '.join(requirements)}), which only the "
            "Docker and Podman backends install (an image variant); this machine's sandbox backend is "
            f"{sandbox_conf.backend_name()}"
        )
    from sandbox.variants import variant_build

    return variant_build(requirements, log=log)


def agent_sandbox_spec(*, task: Task, run_code: str, gpus: list[str] | None = None) -> SandboxSpec:
    """The agent's sandbox: no network, the task's resource limits, labels naming run and task, and
    the GPUs leased for the run (benchmark.runs.gpus), if any."""
    limits = task.config.get("sandbox", {})
    return SandboxSpec(
        network=False,
        memory_mb=int(limits.get("memory_mb", 1024)),
        cpus=float(limits.get("cpus", 1.0)),
        labels={"referee.run": str(run_code), "referee.task": task.slug, "referee.role": "agent"},
        workdir=WORKDIR,
        gpus=list(gpus or []),
        image=task_image(task),
        # e.g. HF_DATASETS_OFFLINE for MLGym's hub tasks: their code finds the local copy, never the hub.
        env={str(k): str(v) for k, v in (task.config.get("sandbox_env") or {}).items()},
    )


def _put_tree(session: Session, source: Path, target: str) -> None:
    for path in task_files(source):
        relative = path.relative_to(source).as_posix()
        session.put_file(f"{target}/{relative}", path.read_bytes(), 0o644)


def workspace_prepare(*, task: Task, session: Session) -> None:
    """Starter code, training data and the baseline's files; never the evaluator or its labels."""
    folder = task_folder(task)
    _put_tree(session, folder / task.config["workspace_dir"], WORKDIR)
    baseline_dir = task.config["baseline"].get("dir")
    if baseline_dir:
        _put_tree(session, folder / baseline_dir, WORKDIR)


def evaluator_spec(task: Task) -> SandboxSpec:
    limits = task.config.get("sandbox", {})
    return SandboxSpec(
        network=False,
        memory_mb=int(limits.get("memory_mb", 1024)),
        cpus=float(limits.get("cpus", 1.0)),
        labels={"referee.task": task.slug, "referee.role": "evaluator"},
        # MLGym's evaluate.py files read their answers from MLGym's absolute workspace path.
        workdir=str(task.config.get("evaluator_workdir") or WORKDIR),
        image=task_image(task),
    )


def submission_of(task: Task, artifacts: dict[str, bytes]) -> tuple[Submission | None, dict[str, bytes]]:
    """(the submitted code with its own sandbox, the data artifacts left for the evaluator)."""
    declared = task.config.get("submission")
    if not declared:
        return None, artifacts
    code = {name: data for name, data in artifacts.items() if name in declared["files"]}
    data = {name: value for name, value in artifacts.items() if name not in declared["files"]}
    submission = Submission(
        files=code,
        module=declared["module"],
        functions=list(declared["functions"]),
        call_timeout=float(declared["call_timeout"]),
        load_timeout=float(declared["load_timeout"]),
        max_reply_bytes=int(declared["max_reply_bytes"]),
        stub=bool(declared.get("stub", True)),
        cpu_charge=bool(declared.get("cpu_charge", True)),
    )
    return submission, data


def artifact_is_pattern(declared: str) -> bool:
    return any(char in declared for char in "*?[")


def artifact_matches(name: str, declared: str) -> bool:
    """name is the declared artifact, or a file a declared pattern covers (`checkpoints/*.pkl`
    covers checkpoints/a.pkl, never checkpoints/x/a.pkl)."""
    if name == declared or not artifact_is_pattern(declared):
        return name == declared
    parts, pattern = PurePosixPath(name).parts, PurePosixPath(declared).parts
    return len(parts) == len(pattern) and all(fnmatch.fnmatchcase(a, b) for a, b in zip(parts, pattern, strict=True))


def _artifact_read(session: Session, name: str) -> bytes:
    try:
        return session.get_file(f"{WORKDIR}/{name}", max_bytes=MAX_ARTIFACT_BYTES)
    except SandboxError as exc:
        raise SandboxError(f"cannot take {name} from the workspace: {exc}") from None


def artifacts_take(*, task: Task, session: Session) -> dict[str, bytes]:
    """The declared artifacts as they stand in the agent's workspace (a pattern: every file it
    matches); raises SandboxError saying which one cannot be taken."""
    artifacts: dict[str, bytes] = {}
    for declared in task.config.get("artifacts", []):
        if not artifact_is_pattern(declared):
            artifacts[declared] = _artifact_read(session, declared)
            continue
        folder = PurePosixPath(declared).parent.as_posix()
        # Only names come back from the agent's shell; each is matched here and read like any artifact.
        listing = session.run(f"cd {WORKDIR} && find {shlex.quote(folder)} -maxdepth 1 -type f 2>/dev/null", timeout=60)
        names = sorted(
            {line.strip() for line in listing.output.splitlines() if artifact_matches(line.strip(), declared)}
        )
        if not names:
            raise SandboxError(f"cannot take {declared} from the workspace: no file there matches it")
        if len(names) > MAX_ARTIFACT_MATCHES:
            raise SandboxError(f"cannot take {declared}: {len(names)} files match it, at most {MAX_ARTIFACT_MATCHES}")
        for name in names:
            artifacts[name] = _artifact_read(session, name)
    return artifacts


def artifacts_evaluate(*, task: Task, artifacts: dict[str, bytes], split: Split) -> ScoreResult:
    """Run the task's pristine evaluator on these artifact files in fresh sandboxes."""
    from sandbox.evaluation import EVALUATOR_MOUNT, evaluate

    if split not in ("dev", "test"):
        raise ValueError(f"split must be dev or test, not {split!r}")
    try:
        folder = task_folder(task)
    except TaskNotRunnable as exc:
        return ScoreResult(split=split, error=str(exc))
    declared = task.config.get("artifacts", [])
    missing = [pattern for pattern in declared if not any(artifact_matches(name, pattern) for name in artifacts)]
    if missing:
        return ScoreResult(
            split=split, error=f"no {missing[0]} to evaluate: the task's artifacts are {task.config['artifacts']}"
        )
    unknown = [name for name in artifacts if not any(artifact_matches(name, pattern) for pattern in declared)]
    if unknown:
        return ScoreResult(
            split=split, error=f"{unknown[0]} is not an artifact of task {task.slug}: use {task.config['artifacts']}"
        )
    evaluator = task.config["evaluator"]
    submission, data = submission_of(task, artifacts)
    try:
        result = evaluate(
            evaluator_dir=folder / evaluator["dir"],
            artifacts=data,
            command=evaluator["command"].format(split=split, evaluator_dir=EVALUATOR_MOUNT),
            timeout=float(evaluator["timeout"]),
            spec=evaluator_spec(task),
            submission=submission,
            metrics=evaluator.get("metrics", "file"),
        )
    except SandboxError as exc:
        return ScoreResult(split=split, error=f"the evaluator sandbox failed: {exc}")
    metrics = dict(result.metrics or {})
    primary = primary_value(metrics, task.metric)
    error = result.error or ""
    if not error and primary is None:
        error = f"the evaluator reported no finite value for the metric {task.metric!r}"
    return ScoreResult(
        split=split,
        metrics=metrics,
        primary=None if error else primary,
        error=error,
        output=(result.output or "")[-OUTPUT_KEPT:],
        duration=float(result.duration or 0.0),
    )


def submission_evaluate(*, task: Task, session: Session, split: Split) -> ScoreResult:
    """Copy only the declared artifacts out of the agent's session and score them (validate/submit)."""
    if not task.config.get("artifacts"):
        return ScoreResult(split=split, error=f"task {task.slug} declares no artifacts to evaluate")
    try:
        artifacts = artifacts_take(task=task, session=session)
    except SandboxError as exc:
        return ScoreResult(split=split, error=str(exc))
    return artifacts_evaluate(task=task, artifacts=artifacts, split=split)
