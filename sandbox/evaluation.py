"""Evaluation in fresh sandboxes that the agent never touched.

The evaluator's sandbox has no network; the evaluator directory (pristine evaluation code,
labels, opponents) is mounted read-only at ``/evaluator`` and the evaluator-side runtime
(runtime/arena.py) at ``/referee``; the declared data artifacts are copied into its empty
workspace. Submitted *code* never runs there: given a ``Submission``, its files go into a
second sandbox of their own (no network, no evaluator, nothing but those files) where
runtime/driver.py loads them and answers the evaluator's calls over a pair of named pipes
mounted into both sandboxes: data in, data out, each reply held to a time and size limit by the
evaluator's side. The two sandboxes share no process tree, no filesystem but the two pipes,
and no output.

Metrics leave the evaluator's sandbox as a JSON file written by ``arena.emit`` into its own
workspace (``$REFEREE_METRICS``) and read back after the evaluator exits: a channel nothing of
the submission can write. Anything else (no metrics file, non-numeric or non-finite values, a
crash, a timeout) is an evaluation error that carries the output, never a made-up score.
``metrics="stdout"`` instead takes the last JSON object line of the evaluator's output, for
evaluators written to print their metrics (MLGym's); it is safe only because submitted code
cannot print there, and only for evaluators that print nothing of the submission's after it.
"""

from __future__ import annotations

import copy
import json
import math
import os
import secrets
import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from sandbox import conf
from sandbox.base import CommandResult, Mount, SandboxError, SandboxSpec, Session, decode_output, open_session

EVALUATOR_MOUNT = "/evaluator"
RUNTIME_DIR = Path(__file__).resolve().parent / "runtime"
RUNTIME_MOUNT = "/referee"
CALLS_MOUNT = "/referee-calls"
CALLS_PREFIX = "referee-calls-"  # host temp dirs holding the pipes
METRICS_FILE = ".referee/metrics.json"  # in the evaluator's workspace
SUBMISSION_LOG = ".referee/submission.log"  # in the submission's workspace
CPU_KEY_FILE = ".referee/cpu-key"  # in the submission's workspace, until its relay starts
MAX_METRICS_BYTES = 1 << 20
SUBMISSION_OUTPUT_KEPT = 4000


@dataclass
class EvaluationResult:
    ok: bool
    metrics: dict[str, float] | None
    error: str | None
    output: str
    duration: float


@dataclass
class Submission:
    """Submitted code: its files, the module the evaluator calls into and that module's functions."""

    files: dict[str, bytes]
    module: str
    functions: list[str]
    call_timeout: float = 5.0
    load_timeout: float = 60.0
    max_reply_bytes: int = 1 << 20
    spec: SandboxSpec | None = None  # limits of its sandbox (default: the evaluator's)
    stub: bool = True  # put a stand-in module under the same name into the evaluator's workspace
    # Run it behind the relay that signs the CPU time of each call (runtime/driver.py), for
    # evaluators that charge it (Player.cpu_seconds). Off, the calls skip the relay's hop: for
    # evaluators that never read the figure (MLGym's games: 100,000 calls an evaluation).
    cpu_charge: bool = True


def metrics_from_json(value: object) -> tuple[dict[str, float] | None, str | None]:
    """A JSON object of finite numbers as metrics; else (None, why)."""
    if not isinstance(value, dict):
        return None, f"the metrics are not a JSON object: {str(value)[:200]}"
    if not value:
        return None, "the metrics JSON object is empty"
    metrics: dict[str, float] = {}
    for key, number in value.items():
        if isinstance(number, bool) or not isinstance(number, int | float) or not math.isfinite(number):
            return None, f"metric {key!r} is not a finite number: {number!r}"
        metrics[str(key)] = float(number)
    return metrics, None


def _strict_json(text: str) -> object:
    def refuse(name: str) -> float:
        raise ValueError(f"{name} is not a finite number")

    return json.loads(text, parse_constant=refuse)


def parse_metrics_file(data: bytes) -> tuple[dict[str, float] | None, str | None]:
    try:
        value = _strict_json(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        return None, f"the metrics file is not valid JSON of numbers: {exc}"
    return metrics_from_json(value)


def parse_metrics(output: str) -> tuple[dict[str, float] | None, str | None]:
    """The last line of ``output`` that is a JSON object, as numeric metrics; else (None, why)."""
    for line in reversed(output.splitlines()):
        line = line.strip()
        if not (line.startswith("{") and line.endswith("}")):
            continue
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            return metrics_from_json(value)
    return None, "the evaluator printed no JSON object of metrics"


def artifact_path(name: str) -> str:
    """Artifacts land inside the workspace: no absolute paths, no '..', nothing of Referee's."""
    path = PurePosixPath(name)
    if not name or path.is_absolute() or ".." in path.parts or path.parts[0] == ".referee":
        raise ValueError(f"artifact path {name!r} must be relative and stay inside the workspace")
    return path.as_posix()


def stub_source(submission: Submission) -> bytes:
    lines = [
        f'"""Stand-in for the submitted {submission.module}: its functions run in the submission\'s own',
        'sandbox and are called over Referee\'s pipes (see arena.remote_function)."""',
        "from arena import remote_function",
        "",
        *(f"{name} = remote_function({name!r})" for name in submission.functions),
    ]
    return ("\n".join(lines) + "\n").encode()


class CallPipes:
    """A host directory holding the two named pipes, mounted read-only into both sandboxes
    (writing to a pipe is not writing to the filesystem): the only thing the two share."""

    def __init__(self) -> None:
        self.dir = tempfile.mkdtemp(prefix=CALLS_PREFIX)
        os.chmod(self.dir, 0o755)  # bwrap under a root worker binds it as an unprivileged uid
        with open(os.path.join(self.dir, ".owner"), "w") as fh:  # for the reaper, if we die
            fh.write(str(os.getpid()))
        for name in ("calls", "replies"):
            os.mkfifo(os.path.join(self.dir, name))
            os.chmod(os.path.join(self.dir, name), 0o666)  # the sandboxes' users differ per backend

    def mount(self) -> Mount:
        return Mount(source=self.dir, target=CALLS_MOUNT, read_only=True)

    def close(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


@dataclass
class _Sessions:
    evaluator: Session | None = None
    submission: Session | None = None
    opened: list[Session] = field(default_factory=list)

    def close(self, *, side_by_side: bool = False) -> None:
        """Close them all; side by side on Docker and Podman, where removing a container is
        mostly waiting for the engine (see _open_both for why not elsewhere)."""
        if side_by_side and len(self.opened) > 1:
            with ThreadPoolExecutor(max_workers=len(self.opened)) as pool:
                list(pool.map(_close_quietly, self.opened))
            return
        for session in self.opened:
            _close_quietly(session)


def _close_quietly(session: Session) -> None:
    try:
        session.close()
    except Exception:  # closing is best effort; the reaper finds what is left
        pass


def _side_by_side(backend: str | None) -> bool:
    return (backend or conf.backend_name()) in ("docker", "podman")


def _open_both(specs: list[SandboxSpec], backend: str | None) -> list[Session]:
    """Start the sandboxes side by side on Docker and Podman (a start is mostly waiting for the
    engine or the runtime).

    Elsewhere one after the other, in this thread: bwrap's --die-with-parent kills a sandbox
    when the *thread* that started it ends, and bwrap starts in a few tens of milliseconds."""
    if not _side_by_side(backend):
        sessions: list[Session] = []
        try:
            for spec in specs:
                sessions.append(open_session(spec, backend=backend))
        except BaseException:
            for session in sessions:
                session.close()
            raise
        return sessions
    with ThreadPoolExecutor(max_workers=len(specs)) as pool:
        futures = [pool.submit(open_session, spec, backend=backend) for spec in specs]
    sessions, errors = [], []
    for future in futures:
        try:
            sessions.append(future.result())
        except BaseException as exc:
            errors.append(exc)
    if errors:
        for session in sessions:
            session.close()
        raise errors[0]
    return sessions


def _driver_command(submission: Submission) -> str:
    functions = ",".join(submission.functions)
    return (
        f'mkdir -p .referee && nohup python3 -I "$REFEREE_RUNTIME/driver.py" "$REFEREE_CALLS" "$REFEREE_REPLIES" '
        f"'{submission.module}' '{functions}' > {SUBMISSION_LOG} 2>&1 < /dev/null &"
    )


def _submission_output(session: Session) -> str:
    try:
        result = session.run(f"tail -c {SUBMISSION_OUTPUT_KEPT} {SUBMISSION_LOG} 2>/dev/null", timeout=20)
    except SandboxError:
        return ""
    return result.output if result.exit_code == 0 else ""


def _check_submission(submission: Submission) -> None:
    for name in submission.files:
        artifact_path(name)
    module = artifact_path(submission.module)
    if module not in submission.files:
        raise ValueError(f"the submission's module {submission.module!r} is not one of its files")
    if not submission.functions or not all(name.isidentifier() for name in submission.functions):
        raise ValueError(f"the submission's functions must be Python names, not {submission.functions!r}")
    if not module.endswith(".py") or "'" in module:
        raise ValueError(f"the submission's module {submission.module!r} must be a .py file")


def _checked_artifacts(
    *, evaluator_dir: Path, artifacts: dict[str, bytes], submission: Submission | None, metrics: str
) -> dict[str, bytes]:
    """The artifacts by their workspace paths, once every input is known to be usable; a ValueError
    says what is wrong before any sandbox starts."""
    paths = {artifact_path(name): data for name, data in artifacts.items()}
    if submission is not None:
        _check_submission(submission)
    if metrics not in ("file", "stdout"):
        raise ValueError(f"metrics must come from 'file' or 'stdout', not {metrics!r}")
    if not Path(evaluator_dir).is_dir():
        raise ValueError(f"evaluator directory {evaluator_dir} does not exist")
    return paths


def _runtime_mount() -> Mount:
    return Mount(source=str(RUNTIME_DIR), target=RUNTIME_MOUNT, read_only=True)


def _evaluator_spec(spec: SandboxSpec | None, evaluator_dir: Path) -> SandboxSpec:
    """A copy of the caller's spec (never changed in place), without network whatever it says, with
    the evaluator's directory and runtime mounted read-only."""
    spec = copy.deepcopy(spec) if spec else SandboxSpec()
    spec.network = False  # never, whatever the caller's spec says
    evaluator = Mount(source=str(evaluator_dir), target=EVALUATOR_MOUNT, read_only=True)
    spec.mounts = [*spec.mounts, evaluator, _runtime_mount()]
    spec.labels = {**spec.labels, "referee.sandbox.role": "evaluator"}
    spec.env = {
        **spec.env,
        "EVALUATOR_DIR": EVALUATOR_MOUNT,
        "WORKSPACE": spec.workdir,
        # arena for the evaluator; the workspace too, for evaluators that import the submitted
        # module by name (MLGym's): there it is the stand-in, the real one runs elsewhere.
        "PYTHONPATH": f"{RUNTIME_MOUNT}:{spec.workdir}",
        "PYTHONDONTWRITEBYTECODE": "1",
        "REFEREE_METRICS": f"{spec.workdir}/{METRICS_FILE}",
    }
    return spec


def _submission_spec(
    spec: SandboxSpec, submission: Submission, pipes: CallPipes, backend: str | None
) -> tuple[SandboxSpec, str]:
    """The submission's own sandbox (the runtime and the pipes, nothing of the evaluator's) and the
    CPU key both sides share; the evaluator's spec gains the pipes and the call limits."""
    calls = {"REFEREE_CALLS": f"{CALLS_MOUNT}/calls", "REFEREE_REPLIES": f"{CALLS_MOUNT}/replies"}
    spec.mounts.append(pipes.mount())
    spec.env.update(
        calls,
        REFEREE_CALL_TIMEOUT=f"{submission.call_timeout:g}",
        REFEREE_LOAD_TIMEOUT=f"{submission.load_timeout:g}",
        REFEREE_MAX_REPLY_BYTES=str(submission.max_reply_bytes),
    )
    own = copy.deepcopy(submission.spec) if submission.spec else copy.deepcopy(spec)
    own.network = False
    own.mounts = [_runtime_mount(), pipes.mount()]  # nothing of the evaluator's
    own.labels = {**own.labels, "referee.sandbox.role": "submission"}
    own.env = {**calls, "REFEREE_RUNTIME": RUNTIME_MOUNT, "OPENBLAS_NUM_THREADS": "1"}
    # The submission's CPU time per call, measured by the relay in its sandbox and signed with a
    # key only the relay and the evaluator hold (runtime/driver.py). On Docker the sandbox has a
    # cgroup of its own to read; elsewhere the relay counts its child's threads.
    # Without cpu_charge the calls skip the relay's hop (evaluators that never read the figure).
    cpu_key = secrets.token_hex(32) if submission.cpu_charge else ""
    if cpu_key:
        spec.env["REFEREE_CPU_KEY"] = cpu_key
    if cpu_key and (backend or conf.backend_name()) == "docker":
        own.env["REFEREE_CPU_SOURCE"] = "cgroup"
    return own, cpu_key


def _start_submission(session: Session, evaluator: Session, submission: Submission, cpu_key: str) -> None:
    for path, data in submission.files.items():
        session.put_file(artifact_path(path), data)
    if cpu_key:  # read and deleted by the relay before anything submitted runs in that sandbox
        session.put_file(CPU_KEY_FILE, cpu_key.encode(), 0o600)
    session.run(_driver_command(submission), timeout=30)
    if submission.stub:
        evaluator.put_file(artifact_path(submission.module), stub_source(submission))


def _read_metrics_file(evaluator: Session) -> bytes | None:
    """The metrics file's bytes, or None when the evaluator wrote none (any other failure raises)."""
    try:
        return evaluator.get_file(METRICS_FILE, max_bytes=MAX_METRICS_BYTES)
    except SandboxError as exc:
        if "No such file" not in str(exc):
            raise
    return None


def _metrics_of(result: CommandResult, metrics: str, metrics_data: bytes | None) -> tuple[dict[str, float] | None, str]:
    if metrics == "stdout":
        parsed, error = parse_metrics(result.output)
    elif metrics_data is None:
        parsed, error = None, "the evaluator wrote no metrics (arena.emit writes them to $REFEREE_METRICS)"
    else:
        parsed, error = parse_metrics_file(metrics_data)
    return parsed, error or "no metrics"


def evaluate(
    *,
    evaluator_dir: Path,
    artifacts: dict[str, bytes],
    command: str,
    timeout: float = 600,
    spec: SandboxSpec | None = None,
    backend: str | None = None,
    submission: Submission | None = None,
    metrics: str = "file",
) -> EvaluationResult:
    started = time.monotonic()

    def failed(error: str, output: str = "") -> EvaluationResult:
        return EvaluationResult(False, None, error, output, time.monotonic() - started)

    try:
        paths = _checked_artifacts(
            evaluator_dir=evaluator_dir, artifacts=artifacts, submission=submission, metrics=metrics
        )
    except ValueError as exc:
        return failed(str(exc))
    spec = _evaluator_spec(spec, evaluator_dir)
    specs = [spec]
    pipes = CallPipes() if submission is not None else None
    if submission is not None and pipes is not None:
        own, cpu_key = _submission_spec(spec, submission, pipes, backend)
        specs.append(own)

    sessions = _Sessions()
    submission_output = ""
    try:
        sessions.opened = _open_both(specs, backend)
        sessions.evaluator = sessions.opened[0]
        if submission is not None:
            sessions.submission = sessions.opened[1]
            _start_submission(sessions.submission, sessions.evaluator, submission, cpu_key)
        for path, data in paths.items():
            sessions.evaluator.put_file(path, data)
        result = sessions.evaluator.run(command, timeout=timeout)
        metrics_data = _read_metrics_file(sessions.evaluator) if metrics == "file" else None
        if sessions.submission is not None:
            submission_output = _submission_output(sessions.submission)
    except SandboxError as exc:
        return failed(f"sandbox error: {exc}")
    finally:
        sessions.close(side_by_side=_side_by_side(backend))
        if pipes is not None:
            pipes.close()
    output = result.output
    if submission_output.strip():
        output += f"\n[output of the submission's own sandbox, last {SUBMISSION_OUTPUT_KEPT} bytes]\n"
        output += decode_output(submission_output.encode())
    if result.timed_out:
        return failed(f"the evaluation timed out after {timeout:g}s", output)
    if result.oom:
        return failed("the evaluation ran out of memory", output)
    if result.exit_code != 0:
        return failed(f"the evaluator exited with code {result.exit_code}", output)
    parsed, error = _metrics_of(result, metrics, metrics_data)
    if parsed is None:
        return failed(error, output)
    return EvaluationResult(True, parsed, None, output, time.monotonic() - started)
