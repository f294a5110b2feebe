"""The evaluator's side of an evaluation (stdlib only): call the submission, report the metrics.

Runs INSIDE the evaluator's sandbox (importable there as ``arena``: the runtime directory is on
PYTHONPATH). The submitted code never runs here: it runs in a sandbox of its own (runtime/
driver.py) and is reached through two named pipes, one JSON object per line. Every reply is
held to a time limit and a size limit and must be plain JSON data; anything else is a
``SubmissionError``, which the evaluator turns into an evaluation error. The metrics leave
through a file in this sandbox only (``emit``), which the submission cannot reach, never
through printed output.

    from arena import Player, SubmissionError, emit, fail
    player = Player("row_strategy")            # limits from the task's submission: section
    move = player(history, seed=1234)          # seeds the submission's `random` before the call
    emit({"Score": 2.5})

``remote_function(name)`` gives a plain function with the same calling convention as the
submitted one: Referee puts modules made of these in the evaluator's workspace under the
submitted file's name, so that evaluators written to ``import strategy`` (MLGym's) work unchanged.
"""

from __future__ import annotations

import errno
import hashlib
import hmac
import json
import math
import os
import select
import sys
import time
from typing import Any

import arena_wire  # the values on the pipes: JSON, dicts keeping their integer keys

CALLS = "REFEREE_CALLS"
REPLIES = "REFEREE_REPLIES"
METRICS = "REFEREE_METRICS"
CPU_KEY = "REFEREE_CPU_KEY"  # shared with the relay in the submission's sandbox (runtime/driver.py)


def _env_float(name: str, default: float) -> float:
    try:
        return float(os.environ.get(name) or default)
    except ValueError:
        return default


CALL_TIMEOUT = _env_float("REFEREE_CALL_TIMEOUT", 5.0)
LOAD_TIMEOUT = _env_float("REFEREE_LOAD_TIMEOUT", 60.0)
MAX_REPLY = int(_env_float("REFEREE_MAX_REPLY_BYTES", 1 << 20))


class SubmissionError(Exception):
    """The submission failed: it did not load, raised, timed out, or answered with garbage."""


def _no_constants(name: str) -> float:
    raise ValueError(f"{name} is not a number JSON allows")


def _quote(text: Any, limit: int = 1500) -> str:
    # What the submission says is shown on one line, escaped: it cannot start a line of its own
    # in the evaluator's output.
    text = str(text)
    escaped = text.encode("unicode_escape").decode("ascii")
    return escaped if len(escaped) <= limit else escaped[:limit] + "..."


class Connection:
    """The two pipes to the submission's sandbox; one per evaluation (see ``connection``)."""

    def __init__(self, *, load_timeout: float | None = None, max_reply: int | None = None) -> None:
        calls, replies = os.environ.get(CALLS), os.environ.get(REPLIES)
        if not calls or not replies:
            raise SubmissionError(
                "this evaluator calls submitted code, but no submission sandbox is attached "
                "(declare submission: in task.yaml)"
            )
        self.max_reply = max_reply or MAX_REPLY
        self.buffer = bytearray()
        self.counter = 0
        self.closed = False
        # Each line of the submission's is followed by the relay's, saying (and signing) the CPU
        # time the submission's sandbox spent since the line before: see driver.relay.
        self.key = os.environ.get(CPU_KEY, "").encode()
        self.lines = 0
        self.last_cpu_ns: int | None = None
        # Readable end first (never blocks); then the writable end, which exists once the
        # submission's driver has opened it: its sandbox may still be loading the module.
        self.replies = os.open(replies, os.O_RDONLY | os.O_NONBLOCK)
        deadline = time.monotonic() + (load_timeout or LOAD_TIMEOUT)
        while True:
            try:
                self.calls = os.open(calls, os.O_WRONLY | os.O_NONBLOCK)
                break
            except OSError as exc:
                if exc.errno != errno.ENXIO:
                    raise
                if time.monotonic() > deadline:
                    raise SubmissionError("the submission's sandbox did not start its driver in time") from None
                time.sleep(0.005)
        ready = self._line(deadline - time.monotonic(), what="loading")
        if "error" in ready:
            raise SubmissionError(_quote(ready["error"]))
        functions = ready.get("functions")
        if ready.get("ready") is not True or not isinstance(functions, list):
            raise SubmissionError(f"the submission's driver sent {_quote(ready)} instead of ready")
        self.functions = [str(name) for name in functions]

    def _raw(self, deadline: float, timeout: float, *, what: str) -> bytes:
        while b"\n" not in self.buffer:
            if len(self.buffer) > self.max_reply:
                raise SubmissionError(f"the submission's reply is longer than {self.max_reply} bytes")
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([self.replies], [], [], remaining)[0]:
                raise SubmissionError(f"the submission did not answer ({what}) within {timeout:g} s")
            chunk = os.read(self.replies, 1 << 16)
            if not chunk:
                raise SubmissionError(f"the submission's process exited ({what})")
            self.buffer += chunk
        line, _, rest = bytes(self.buffer).partition(b"\n")
        self.buffer = bytearray(rest)
        if len(line) > self.max_reply:
            raise SubmissionError(f"the submission's reply is longer than {self.max_reply} bytes")
        return line

    def _cpu(self, line: bytes, deadline: float, timeout: float, *, what: str) -> None:
        """The relay's word on the CPU time behind ``line``, checked against the shared key."""
        self.lines += 1
        raw = self._raw(deadline, timeout, what=what)
        try:
            said = json.loads(raw)
            cpu_ns = said["cpu_ns"]
            digest = hashlib.sha256(line + b"\n").hexdigest()
            expected = hmac.digest(self.key, f"{self.lines}:{digest}:{cpu_ns}".encode(), "sha256").hex()
            genuine = isinstance(cpu_ns, int) and cpu_ns >= 0 and hmac.compare_digest(str(said["mac"]), expected)
        except (ValueError, KeyError, TypeError):
            genuine = False
        if not genuine:
            raise SubmissionError(f"a line on the pipes did not come from Referee's relay ({what}): {_quote(raw)}")
        self.last_cpu_ns = cpu_ns

    def _line(self, timeout: float, *, what: str) -> dict[str, Any]:
        deadline = time.monotonic() + max(timeout, 0.0)
        line = self._raw(deadline, timeout, what=what)
        if self.key:
            self._cpu(line, deadline, timeout, what=what)
        try:
            value = arena_wire.loads(line, parse_constant=_no_constants)
        except (ValueError, UnicodeDecodeError) as exc:
            raise SubmissionError(f"the submission's reply is not JSON data: {_quote(exc)}") from None
        if not isinstance(value, dict):
            raise SubmissionError(f"the submission's reply is not a JSON object: {_quote(value)}")
        return value

    def _write(self, data: bytes, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        view = memoryview(data)
        while view:
            # A call fits the pipe's buffer: write first, wait only when the submission lags.
            try:
                view = view[os.write(self.calls, view) :]
                continue
            except BlockingIOError:
                pass
            except BrokenPipeError:
                raise SubmissionError("the submission's process exited") from None
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([], [self.calls], [], remaining)[1]:
                raise SubmissionError(f"the submission stopped reading its calls for {timeout:g} s")

    def call(self, function: str, args: Any = (), kwargs: Any = None, *, seed: int | None = None,
             timeout: float | None = None) -> Any:  # fmt: skip
        if self.closed:
            raise SubmissionError("the submission's connection is closed")
        if function not in self.functions:
            raise SubmissionError(f"the submission offers no function {function!r}")
        timeout = timeout or CALL_TIMEOUT
        self.counter += 1
        request = {"id": self.counter, "function": function, "args": list(args), "kwargs": dict(kwargs or {})}
        request["seed"] = seed
        self._write(arena_wire.dumps(request).encode() + b"\n", timeout)
        reply = self._line(timeout, what=function)
        if reply.get("id") != self.counter:
            raise SubmissionError(f"the submission answered out of turn: {_quote(reply)}")
        if "error" in reply:
            raise SubmissionError(_quote(reply["error"]))
        if "ok" not in reply:
            raise SubmissionError(f"the submission's reply has no value: {_quote(reply)}")
        return reply["ok"]

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            for fd in (self.calls, self.replies):
                try:
                    os.close(fd)
                except OSError:
                    pass


_shared: Connection | None = None


def connection() -> Connection:
    """The evaluation's one connection to the submission, opened on first use."""
    global _shared
    if _shared is None or _shared.closed:
        _shared = Connection()
    return _shared


class Player:
    """One submitted function as a callable: ``player(*args, seed=None)``."""

    def __init__(self, function: str, *, call_timeout: float | None = None) -> None:
        self.function = function
        self.call_timeout = call_timeout
        self.link = connection()
        if function not in self.link.functions:
            raise SubmissionError(f"the submission offers no function {function!r}")

    def __call__(self, *args: Any, seed: int | None = None) -> Any:
        return self.link.call(self.function, args, seed=seed, timeout=self.call_timeout)

    @property
    def cpu_seconds(self) -> float | None:
        """The CPU time the submission's sandbox spent from the previous reply to the last one
        (measured by the relay, outside the submitted process); None where nothing measured it."""
        return None if self.link.last_cpu_ns is None else self.link.last_cpu_ns / 1e9

    def close(self) -> None:
        self.link.close()


def remote_function(name: str) -> Any:
    """A function that forwards its (JSON) arguments to the submission's function ``name``."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return connection().call(name, args, kwargs)

    call.__name__ = call.__qualname__ = name
    return call


def emit(metrics: dict[str, Any]) -> None:
    """Report the metrics: a JSON object of finite numbers, written to the metrics file."""
    checked = {}
    for key, value in metrics.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            fail(f"metric {key!r} is not a finite number: {value!r}")
        checked[str(key)] = value
    text = json.dumps(checked, allow_nan=False)
    path = os.environ.get(METRICS)
    if not path:  # run by hand, outside Referee
        print(text, flush=True)
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".part", "w") as handle:
        handle.write(text)
    os.replace(path + ".part", path)
    print(f"metrics written: {text}", flush=True)


def fail(message: str) -> None:
    print(f"evaluation failed: {message}", file=sys.stderr, flush=True)
    raise SystemExit(1)
