"""The sandbox interface: specs, results, and a Session that talks to the in-sandbox shell server.

Backends differ only in how they start the sandbox and connect to the server's stdin/stdout
(a ``Channel``); the protocol, output capping and decoding live here, once.
"""

from __future__ import annotations

import json
import os
import struct
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol

from sandbox import conf

SERVER_SOURCE = (Path(__file__).resolve().parent / "shellserver.py").read_bytes()
# Reads the server's source from stdin and runs it as __main__ (keeps argv, and ``ps``, short).
BOOTSTRAP = "import sys;exec(compile(sys.stdin.buffer.read(int(sys.argv[1])),'shellserver','exec'))"
STATE_DIR = "/tmp/.sandbox-shell"
# How long past a command's own timeout the host waits for the server before giving up on it.
GRACE_SECONDS = 30.0
LABEL = "referee.sandbox"
INTERRUPT = b'{"op": "interrupt"}\n'  # byte for byte what the server looks for (shellserver.INTERRUPT)


class SandboxError(RuntimeError):
    """The sandbox failed (not the command inside it)."""


class SandboxUnavailable(SandboxError):
    """The requested backend cannot run here (no engine, no image, local not allowed...)."""


@dataclass
class Mount:
    source: str
    target: str
    read_only: bool = True


@dataclass
class SandboxSpec:
    image: str | None = None
    mounts: list[Mount] = field(default_factory=list)
    network: bool = False
    # Defaults come from settings (SANDBOX_MEMORY, SANDBOX_CPUS, SANDBOX_PIDS, SANDBOX_DISK).
    memory_mb: int = field(default_factory=conf.memory_mb)
    cpus: float = field(default_factory=conf.cpus)
    pids: int = field(default_factory=conf.pids)
    disk_mb: int = field(default_factory=conf.disk_mb)
    labels: dict[str, str] = field(default_factory=dict)
    workdir: str = "/workspace"
    env: dict[str, str] = field(default_factory=dict)
    # GPU device ids (as the host's driver numbers them, e.g. ["0"]) this sandbox gets for itself:
    # a Docker device request; the backends without one refuse a spec that asks for GPUs.
    gpus: list[str] = field(default_factory=list)


@dataclass
class CommandResult:
    exit_code: int
    output: str
    duration: float
    truncated: bool
    timed_out: bool
    oom: bool
    interrupted: bool = False  # stopped by Session.interrupt (a cancelled run)


class Channel(Protocol):
    def send(self, data: bytes) -> None: ...

    def recv(self, timeout: float) -> bytes:
        """Some bytes, b"" at end of stream; raises TimeoutError."""
        ...

    def close(self) -> None: ...


def decode_output(data: bytes) -> str:
    # Invalid UTF-8 is shown as \\xNN, and NUL too: outputs end up in text columns.
    return data.decode("utf-8", errors="backslashreplace").replace("\x00", "\\x00")


def cut_marker(*, omitted: int, head: int, tail: int, total: int) -> str:
    return f"\n[... {omitted} bytes of output cut: kept the first {head} and the last {tail} of {total} bytes ...]\n"


def session_labels(spec: SandboxSpec, session_id: str) -> dict[str, str]:
    return {
        LABEL: "1",
        f"{LABEL}.session": session_id,
        f"{LABEL}.worker": f"{conf.host_id()}:{os.getpid()}",
        f"{LABEL}.created": str(int(time.time())),
        **spec.labels,
    }


class Session:
    """One sandbox with one persistent shell. Use as a context manager."""

    backend = "abstract"

    def __init__(self, spec: SandboxSpec) -> None:
        self.spec = spec
        self.id = uuid.uuid4().hex[:16]
        self.labels = session_labels(spec, self.id)
        self.workdir = spec.workdir  # where relative paths land (a host path for local)
        self._channel: Channel | None = None
        self._buffer = bytearray()
        self._closed = False
        self.server_info: dict[str, Any] = {}
        # Where the server reads the kernel's OOM-kill counter, when not at the cgroup's usual path.
        self.oom_file: str | None = None
        # interrupt() comes from another thread: writes to the channel take turns, and it writes
        # only while a command is in flight (the server ignores one that arrives just after).
        self._send_lock = threading.Lock()
        self._running = False

    def identity(self) -> dict[str, str]:
        """What this sandbox runs on, for a run's record: the image and its digest where there is one."""
        return {"image": f"{self.backend} (no image)"}

    # -- backend hooks -------------------------------------------------------------------
    def _start(self) -> Channel:
        raise NotImplementedError

    def _destroy(self) -> None:
        raise NotImplementedError

    def _diagnostics(self) -> str:
        return ""

    def server_command(
        self,
        *,
        workdir: str,
        kill_scope: str = "namespace",
        state_dir: str = STATE_DIR,
        env: dict[str, str] | None = None,
    ) -> list[str]:
        config = {
            "workdir": workdir,
            "state_dir": state_dir,
            "kill_scope": kill_scope,
            "pids": self.spec.pids,
            "env": self.spec.env if env is None else env,
            "oom_file": self.oom_file,
        }
        return ["python3", "-I", "-c", BOOTSTRAP, str(len(SERVER_SOURCE)), json.dumps(config)]

    # -- lifecycle -----------------------------------------------------------------------
    def start(self) -> Session:
        try:
            self._channel = self._start()
            try:
                self._channel.send(SERVER_SOURCE)
            except OSError as exc:  # the sandbox process died before it read its server: say why
                why = self._diagnostics().strip()[-2000:] or "no output"
                raise SandboxError(f"the {self.backend} sandbox exited as it started ({exc}): {why}") from exc
            kind, payload = self._frame(time.monotonic() + 60)
            if kind != b"R":
                raise SandboxError(f"shell server sent {kind!r} instead of ready")
            self.server_info = json.loads(payload)
        except BaseException:
            self.close()
            raise
        return self

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._channel is not None:
            try:
                with self._send_lock:
                    self._channel.send(b'{"op": "exit"}\n')
            except OSError:
                pass
            self._channel.close()
        self._destroy()

    def __enter__(self) -> Session:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- protocol ------------------------------------------------------------------------
    def _broken(self, why: str) -> SandboxError:
        detail = self._diagnostics()
        self.close()
        return SandboxError(f"{self.backend} sandbox {self.id}: {why}" + (f"\n{detail}" if detail else ""))

    def _read(self, size: int, deadline: float) -> bytes:
        assert self._channel is not None
        while len(self._buffer) < size:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self._broken("the shell server stopped answering")
            try:
                chunk = self._channel.recv(min(remaining, 60.0))
            except TimeoutError:
                continue
            except OSError as exc:
                raise self._broken(f"lost the shell server ({exc})") from exc
            if not chunk:
                raise self._broken("the shell server exited")
            self._buffer += chunk
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        return data

    def _frame(self, deadline: float) -> tuple[bytes, bytes]:
        kind, size = struct.unpack(">cI", self._read(5, deadline))
        return kind, self._read(size, deadline) if size else b""

    def _request(self, request: dict[str, Any], body: bytes = b"", *, running: bool = False) -> None:
        if self._closed or self._channel is None:
            raise SandboxError(f"{self.backend} sandbox {self.id} is closed")
        try:
            with self._send_lock:
                self._channel.send(json.dumps(request).encode() + b"\n" + body)
                self._running = running
        except OSError as exc:
            raise self._broken(f"cannot reach the shell server ({exc})") from exc

    def interrupt(self) -> bool:
        """Stop the command in flight, from any thread: the server kills it as on a timeout and
        its result says ``interrupted``; the shell lives on. False when no command was running."""
        with self._send_lock:
            if not self._running or self._closed or self._channel is None:
                return False
            try:
                self._channel.send(INTERRUPT)
            except OSError:
                return False
            self._running = False  # once per command
            return True

    def _reply(self, deadline: float) -> tuple[bytes, bytes]:
        kind, payload = self._frame(deadline)
        if kind == b"X":
            raise SandboxError(json.loads(payload)["error"])
        return kind, payload

    # -- the interface -------------------------------------------------------------------
    def run(
        self,
        command: str,
        *,
        timeout: float | None = 60,
        idle_timeout: float | None = None,
        on_output: Callable[[str], None] | None = None,
    ) -> CommandResult:
        """Run in the persistent shell; ``timeout=None`` waits as long as the command runs.

        ``on_output`` receives the head of the output as it arrives (for live views); the
        result holds all of it, capped."""
        limit = conf.output_limit()
        self._request(
            {"op": "run", "command": command, "timeout": timeout, "idle_timeout": idle_timeout, "limit": limit},
            running=True,
        )
        deadline = time.monotonic() + (timeout if timeout else float("inf")) + GRACE_SECONDS
        head = bytearray()
        tail = b""
        while True:
            kind, payload = self._reply(deadline)
            if kind == b"O":
                head += payload
                if on_output is not None:
                    on_output(decode_output(payload))
            elif kind == b"T":
                tail = payload
            elif kind == b"D":
                break
            else:
                raise self._broken(f"unexpected frame {kind!r} during a command")
        with self._send_lock:
            self._running = False
        done = json.loads(payload)
        output = decode_output(bytes(head))
        if done["omitted"]:
            output += cut_marker(omitted=done["omitted"], head=len(head), tail=len(tail), total=done["total"])
        output += decode_output(tail)
        return CommandResult(
            exit_code=int(done["exit_code"]),
            output=output,
            duration=float(done["duration"]),
            truncated=bool(done["omitted"]),
            timed_out=bool(done["timed_out"]),
            oom=bool(done["oom"]),
            interrupted=bool(done.get("interrupted")),
        )

    def put_file(self, path: str, data: bytes, mode: int = 0o644) -> None:
        """Write a file; ``path`` is relative to the workdir or absolute."""
        self._request({"op": "put", "path": path, "mode": mode, "size": len(data)}, data)
        self._reply(time.monotonic() + 60 + len(data) / 1e6)

    def get_file(self, path: str, *, max_bytes: int = 256 << 20) -> bytes:
        self._request({"op": "get", "path": path, "max": max_bytes})
        kind, payload = self._reply(time.monotonic() + 120)
        if kind != b"F":
            raise self._broken(f"unexpected frame {kind!r} for a file")
        return payload

    def put_dir(self, local_dir: Path, target: str) -> None:
        """Copy a directory tree (regular files; symlinks are skipped, never followed)."""
        local_dir = Path(local_dir)
        for root, dirs, files in os.walk(local_dir):
            dirs[:] = [d for d in dirs if not (Path(root) / d).is_symlink()]
            for name in files:
                source = Path(root) / name
                if source.is_symlink() or not source.is_file():
                    continue
                relative = source.relative_to(local_dir).as_posix()
                mode = 0o755 if os.access(source, os.X_OK) else 0o644
                self.put_file(f"{target.rstrip('/')}/{relative}", source.read_bytes(), mode)


BACKEND_MODULES = {
    "docker": "sandbox.docker",
    "podman": "sandbox.podman",
    "bwrap": "sandbox.bwrap",
    "local": "sandbox.local",
}


def _backend_module(name: str) -> Any:
    import importlib

    if name not in BACKEND_MODULES:
        raise SandboxUnavailable(f"unknown sandbox backend {name!r}: use one of {', '.join(conf.BACKENDS)}")
    return importlib.import_module(BACKEND_MODULES[name])


def open_session(spec: SandboxSpec, *, backend: str | None = None) -> Session:
    """Start a sandbox for ``spec`` on the configured (or given) backend; caller closes it."""
    name = backend or conf.backend_name()
    if spec.gpus and name != "docker":
        raise SandboxUnavailable(
            f"this sandbox asks for GPU(s) {', '.join(spec.gpus)}, and the {name} backend cannot give a sandbox a "
            "GPU: GPU tasks run on hosts with Docker and the NVIDIA container runtime"
        )
    module = _backend_module(name)
    return module.open_session(spec)


def backend_info(backend: str | None = None) -> dict[str, Any]:
    """What /healthz and the UI show: which backend is active and how isolated it is."""
    name = backend or conf.backend_name()
    try:
        module = _backend_module(name)
    except SandboxUnavailable as exc:
        return {"backend": name, "isolation": "none", "available": False, "detail": str(exc)}
    except ImportError as exc:
        return {"backend": name, "isolation": "none", "available": False, "detail": f"cannot load: {exc}"}
    return {"backend": name, **module.info()}
