"""Run the agent's submitted function in a child process and call it over a pipe.

Copied verbatim into each built-in task's evaluator/ (a task folder must be self-contained;
tests/benchmark/test_builtin_tasks.py checks that the copies stay identical). The evaluator
(trusted) keeps the game, the opponents, the instances and the counters in its own process; the
agent's code only ever sees the arguments of each call, so it can neither patch an opponent nor
edit a counter. The evaluator's folder is a read-only mount; an audit hook installed before the
submission loads refuses Python-level reads of it (and of /proc, where the parent's memory and
arguments live) and refuses starting programs, so that the submission cannot read opponents or
seeds either. The hook is defence in depth for Python code, not a sandbox: the sandbox is.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import tempfile
from pathlib import Path

DRIVER = r"""
import importlib.util, json, os, random, sys
path, name = sys.argv[1], sys.argv[2]
# The protocol owns the original stdout; the agent's prints go to stderr.
channel = os.fdopen(os.dup(1), "w", buffering=1)
os.dup2(2, 1)
sys.stdout = sys.stderr
FORBIDDEN = tuple(os.path.realpath(p) for p in (os.environ.get("REFEREE_EVALUATOR_DIR") or "/evaluator", "/proc"))
BLOCKED_EVENTS = {"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty",
                  "ctypes.dlopen", "ctypes.dlsym", "ctypes.addressof", "sys.addaudithook"}


def hook(event, args):
    if event in BLOCKED_EVENTS:
        raise PermissionError(f"{event} is not allowed during evaluation")
    if event in ("open", "os.listdir", "os.scandir", "os.chdir") and args and isinstance(args[0], (str, bytes, os.PathLike)):
        target = os.path.realpath(os.fsdecode(args[0]))
        if any(target == p or target.startswith(p + os.sep) for p in FORBIDDEN):
            raise PermissionError(f"{target} is off limits during evaluation")


sys.addaudithook(hook)
try:
    spec = importlib.util.spec_from_file_location("submission", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["submission"] = module
    spec.loader.exec_module(module)
    function = getattr(module, name)
except BaseException as exc:
    channel.write(json.dumps({"error": f"cannot load {name} from {os.path.basename(path)}: {exc!r}"}) + "\n")
    raise SystemExit(0)
channel.write(json.dumps({"ready": True}) + "\n")
for line in sys.stdin:
    request = json.loads(line)
    if request.get("seed") is not None:
        random.seed(request["seed"])  # the evaluator seeds random strategies: scores are reproducible
    try:
        reply = {"ok": function(*request["args"])}
        text = json.dumps(reply)
    except BaseException as exc:
        text = json.dumps({"error": f"{name} raised {exc!r}"})
    channel.write(text + "\n")
"""


class SubmissionError(Exception):
    """The submission failed: it did not load, raised, timed out or returned garbage."""


class Player:
    def __init__(self, path: str | Path, function: str, *, call_timeout: float = 5.0) -> None:
        self.function = function
        self.call_timeout = call_timeout
        self.stderr = tempfile.TemporaryFile()
        path = Path(path).resolve()
        evaluator_dir = str(Path(__file__).resolve().parent)
        self.process = subprocess.Popen(
            [sys.executable, "-I", "-c", DRIVER, str(path), function],
            env={
                "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "REFEREE_EVALUATOR_DIR": evaluator_dir,
                "OPENBLAS_NUM_THREADS": "1",
                "HOME": str(path.parent),
            },
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            cwd=str(path.parent),
            text=True,
            bufsize=1,
        )
        self._read(timeout=60)

    def _stderr_tail(self) -> str:
        self.stderr.seek(0)
        text = self.stderr.read().decode("utf-8", "replace")
        return text[-1500:]

    def _read(self, *, timeout: float):
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        if not ready:
            self.close()
            raise SubmissionError(f"{self.function} did not answer within {timeout:g} s")
        line = self.process.stdout.readline()
        if not line:
            self.close()
            raise SubmissionError(f"the submission's process exited\n{self._stderr_tail()}")
        reply = json.loads(line)
        if "error" in reply:
            self.close()
            raise SubmissionError(reply["error"] + "\n" + self._stderr_tail())
        return reply.get("ok")

    def __call__(self, *args, seed: int | None = None):
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(json.dumps({"args": list(args), "seed": seed}) + "\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            raise SubmissionError(f"the submission's process exited\n{self._stderr_tail()}") from None
        return self._read(timeout=self.call_timeout)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def emit(metrics: dict) -> None:
    """The last stdout line that is a JSON object is the metrics (sandbox.evaluation reads it)."""
    print(json.dumps(metrics), flush=True)


def fail(message: str) -> None:
    print(f"evaluation failed: {message}", file=sys.stderr, flush=True)
    raise SystemExit(1)
