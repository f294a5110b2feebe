"""Evaluation in a fresh sandbox that the agent never touched.

The evaluator directory (pristine evaluation code, labels, opponents) is mounted read-only at
``/evaluator``; only the declared artifact files are copied into the empty workspace; there is
no network. The evaluator must print its metrics as a JSON object on the last such line of its
output: anything else (no JSON, non-numeric values, a crash, a timeout) is an evaluation error
that carries the output, never a made-up score.
"""

from __future__ import annotations

import copy
import json
import math
import time
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from sandbox.base import Mount, SandboxError, SandboxSpec, open_session

EVALUATOR_MOUNT = "/evaluator"


@dataclass
class EvaluationResult:
    ok: bool
    metrics: dict[str, float] | None
    error: str | None
    output: str
    duration: float


def parse_metrics(output: str) -> tuple[dict[str, float] | None, str | None]:
    """The last line that is a JSON object, as numeric metrics; else (None, why)."""
    for line in reversed(output.splitlines()):
        line = line.strip()
        if not (line.startswith("{") and line.endswith("}")):
            continue
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if not isinstance(value, dict):
            continue
        if not value:
            return None, "the metrics JSON object is empty"
        metrics: dict[str, float] = {}
        for key, number in value.items():
            if isinstance(number, bool) or not isinstance(number, int | float) or not math.isfinite(number):
                return None, f"metric {key!r} is not a finite number: {number!r}"
            metrics[str(key)] = float(number)
        return metrics, None
    return None, "the evaluator printed no JSON object of metrics"


def artifact_path(name: str) -> str:
    """Artifacts land inside the workspace: no absolute paths, no '..'."""
    path = PurePosixPath(name)
    if not name or path.is_absolute() or ".." in path.parts:
        raise ValueError(f"artifact path {name!r} must be relative and stay inside the workspace")
    return path.as_posix()


def evaluate(
    *,
    evaluator_dir: Path,
    artifacts: dict[str, bytes],
    command: str,
    timeout: float = 600,
    spec: SandboxSpec | None = None,
    backend: str | None = None,
) -> EvaluationResult:
    started = time.monotonic()
    spec = copy.deepcopy(spec) if spec else SandboxSpec()
    spec.network = False  # never, whatever the caller's spec says
    spec.mounts = [*spec.mounts, Mount(source=str(evaluator_dir), target=EVALUATOR_MOUNT, read_only=True)]
    spec.labels = {**spec.labels, "referee.sandbox.role": "evaluator"}
    spec.env = {**spec.env, "EVALUATOR_DIR": EVALUATOR_MOUNT, "WORKSPACE": spec.workdir}

    def failed(error: str, output: str = "") -> EvaluationResult:
        return EvaluationResult(False, None, error, output, time.monotonic() - started)

    try:
        paths = {artifact_path(name): data for name, data in artifacts.items()}
    except ValueError as exc:
        return failed(str(exc))
    if not Path(evaluator_dir).is_dir():
        return failed(f"evaluator directory {evaluator_dir} does not exist")
    try:
        with open_session(spec, backend=backend) as session:
            for path, data in paths.items():
                session.put_file(path, data)
            result = session.run(command, timeout=timeout)
    except SandboxError as exc:
        return failed(f"sandbox error: {exc}")
    if result.timed_out:
        return failed(f"the evaluation timed out after {timeout:g}s", result.output)
    if result.oom:
        return failed("the evaluation ran out of memory", result.output)
    if result.exit_code != 0:
        return failed(f"the evaluator exited with code {result.exit_code}", result.output)
    metrics, error = parse_metrics(result.output)
    if metrics is None:
        return failed(error or "no metrics", result.output)
    return EvaluationResult(True, metrics, None, result.output, time.monotonic() - started)
