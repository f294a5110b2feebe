"""The process supervisor behind `make up` (scripts/up.py): start children, restart the ones that die.

A child that exits while the platform is not stopping is started again after a backoff that doubles
with each quick crash (1 s, 2 s, 4 s ... at most 30 s) and resets once it has run for a minute; every
exit and restart is logged. Only Ctrl-C or SIGTERM (``stop()``) ends everything. The supervisor
writes what each child is doing to a JSON state file that /healthz reads (config/health.py), so a
part that is restarting shows as degraded rather than the whole platform as down.

No Django here: the supervisor starts before the settings matter and must stay small.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Log = Callable[[str], None]
Starter = Callable[[], subprocess.Popen]

FIRST_BACKOFF = 1.0
MAX_BACKOFF = 30.0
# A child that ran this long before exiting was healthy: its next crash starts the backoff afresh.
STABLE_AFTER = 60.0
# A restarted child is "starting" for this long (a worker imports Django and registers, daphne
# binds its application) and /healthz counts it as restarting until then.
STARTING_FOR = 5.0
STOP_TIMEOUT = 10.0

RUNNING, STARTING, RESTARTING = "running", "starting", "restarting"


def state_file(var_dir: Path) -> Path:
    return var_dir / "up" / "state.json"


@dataclass
class Child:
    name: str
    part: str  # what /healthz calls it: redis, workers, web, housekeeping
    start: Starter
    proc: subprocess.Popen | None = None
    started_at: float = 0.0
    restarts: int = 0
    quick_crashes: int = 0
    last_exit: int | None = None
    restart_at: float | None = None
    error: str = ""
    reported: str = RUNNING  # the state last written to the state file
    # Stopped after every other child has exited, with this long to go (a dockerd that make up
    # started: the workers' sandboxes go first, and the engine stops its containers itself).
    stop_last: bool = False
    stop_timeout: float = STOP_TIMEOUT

    def state(self, now: float) -> str:
        if self.restart_at is not None:
            return RESTARTING
        if self.restarts and now - self.started_at < STARTING_FOR:
            return STARTING
        return RUNNING

    def as_dict(self, now: float) -> dict[str, Any]:
        return {
            "part": self.part,
            "state": self.state(now),
            "pid": self.proc.pid if self.proc is not None and self.restart_at is None else None,
            "restarts": self.restarts,
            "last_exit": self.last_exit,
            "restart_at": self.restart_at,
            "error": self.error,
        }


def backoff(quick_crashes: int) -> float:
    return min(MAX_BACKOFF, FIRST_BACKOFF * 2 ** max(0, quick_crashes - 1))


@dataclass
class Supervisor:
    state_path: Path
    log: Log = print
    children: list[Child] = field(default_factory=list)
    stopping: bool = False

    # -- starting ----------------------------------------------------------------------------
    def add(self, name: str, part: str, start: Starter) -> Child:
        """Start a child now; raises what its starter raises (a set-up failure stops `make up`)."""
        child = Child(name=name, part=part, start=start)
        child.proc = start()
        child.started_at = time.monotonic()
        self.children.append(child)
        self.write_state()
        return child

    def adopt(
        self,
        name: str,
        part: str,
        proc: subprocess.Popen,
        start: Starter,
        *,
        stop_last: bool = False,
        stop_timeout: float = STOP_TIMEOUT,
    ) -> Child:
        """Supervise a child started already (`start` starts it again when it dies)."""
        child = Child(name=name, part=part, start=start, proc=proc, stop_last=stop_last, stop_timeout=stop_timeout)
        child.started_at = time.monotonic()
        self.children.append(child)
        self.write_state()
        return child

    def _restart(self, child: Child, now: float) -> None:
        try:
            child.proc = child.start()
        except Exception as exc:  # e.g. redis-server not accepting connections in time
            child.quick_crashes += 1
            child.error = f"{type(exc).__name__}: {exc}"
            delay = backoff(child.quick_crashes)
            child.restart_at = now + delay
            self.log(f"{child.name} could not be started ({child.error}); next try in {delay:g} s")
            self.write_state()
            return
        child.started_at = now
        child.restart_at = None
        child.restarts += 1
        child.error = ""
        self.log(f"{child.name} restarted (pid {child.proc.pid}, restart #{child.restarts})")

    # -- watching ----------------------------------------------------------------------------
    def poll(self) -> None:
        """One look at every child: schedule the restart of the dead, restart the due."""
        if self.stopping:
            return
        now = time.monotonic()
        for child in self.children:
            if child.restart_at is None:
                code = child.proc.poll() if child.proc is not None else None
                if code is None:
                    continue
                ran = now - child.started_at
                child.quick_crashes = 1 if ran >= STABLE_AFTER else child.quick_crashes + 1
                child.last_exit = code
                delay = backoff(child.quick_crashes)
                child.restart_at = now + delay
                self.log(f"{child.name} exited with code {code} after {ran:.0f} s; restarting in {delay:g} s")
            elif now >= child.restart_at:
                self._restart(child, now)
        # Written whenever a child changes state (also when a restarted one leaves "starting"), so
        # /healthz sees it go down and come back.
        if any(child.state(now) != child.reported for child in self.children):
            self.write_state()

    def write_state(self) -> None:
        now = time.monotonic()
        for child in self.children:
            child.reported = child.state(now)
        state = {
            "pid": os.getpid(),
            "written_at": time.time(),
            "children": {child.name: child.as_dict(now) for child in self.children},
        }
        # restart_at is on the monotonic clock: say it as seconds from now, which a reader can use.
        for entry in state["children"].values():
            if entry["restart_at"] is not None:
                entry["restart_in"] = round(max(0.0, entry.pop("restart_at") - now), 1)
            else:
                entry.pop("restart_at")
        self.state_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.state_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(state, indent=1))
        tmp.replace(self.state_path)

    def run_forever(self, interval: float = 0.2) -> None:
        while True:
            self.poll()
            time.sleep(interval)

    # -- stopping ----------------------------------------------------------------------------
    def stop(self) -> None:
        if self.stopping:
            return
        self.stopping = True
        # A second Ctrl-C must not interrupt the clean-up and leave children behind.
        previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            self._stop_children()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def _stop_children(self) -> None:
        self.log("stopping everything it started ...")
        live = [c for c in reversed(self.children) if c.proc is not None and c.restart_at is None]
        self._stop_wave([c for c in live if not c.stop_last], STOP_TIMEOUT)
        last = [c for c in live if c.stop_last]
        if last:
            self._stop_wave(last, max(c.stop_timeout for c in last))
        self.state_path.unlink(missing_ok=True)
        self.log("all stopped")

    def _stop_wave(self, children: list[Child], timeout: float) -> None:
        for child in children:
            if child.proc.poll() is None:
                if child.stop_last:
                    self.log(f"stopping {child.name} (pid {child.proc.pid}) ...")
                try:
                    os.killpg(child.proc.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + timeout
        for child in children:
            try:
                child.proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                self.log(f"{child.name} did not stop in time; killing it")
                try:
                    os.killpg(child.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                child.proc.wait()


def pid_alive(pid: object) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # alive, under another user
    return True


def read_state(path: Path) -> dict[str, Any] | None:
    """The state a live supervisor wrote, or None (no file, unreadable, or its supervisor is gone)."""
    try:
        state = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return state if isinstance(state, dict) and pid_alive(state.get("pid")) else None
