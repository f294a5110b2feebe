"""`manage.py housekeeping`: the platform's sweeps in one long-running process, each on its schedule.

Each sweep stays a management command of its own that can be run by hand for one pass
(`reap_runs`, `reap_judgments`, `sandbox_reaper`); this process calls them by name, so it knows
nothing of runs, judgments or sandboxes (the apps own their sweeps; dependencies keep pointing one
way). A pass that fails (Redis or the database away for a moment) is logged and the next one comes
on schedule: a sweeper keeps sweeping. One process instead of three saves two Django processes.
"""

from __future__ import annotations

import io
import signal
import threading
import time
from dataclasses import dataclass
from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

# (command, seconds between passes). The run reaper is the most urgent: a run whose worker died
# shows as running until it passes.
SWEEPS: tuple[tuple[str, float], ...] = (
    ("reap_runs", 30.0),
    ("reap_judgments", 60.0),
    ("sandbox_reaper", 60.0),
    # SQLite's write-ahead log into the database file, so that no run's commit pays for it.
    ("checkpoint_db", 5.0),
)


@dataclass
class Sweep:
    command: str
    interval: float
    due: float = 0.0
    passes: int = 0
    failures: int = 0


class Command(BaseCommand):
    help = "Run every sweep (reap_runs, reap_judgments, sandbox_reaper, checkpoint_db) on its schedule in this one process."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--once", action="store_true", help="one pass of every sweep, then exit")
        parser.add_argument(
            "--every",
            action="append",
            default=[],
            metavar="SWEEP=SECONDS",
            help="change a sweep's interval, e.g. --every reap_runs=10 (repeatable)",
        )
        parser.add_argument(
            "--only",
            action="append",
            default=[],
            metavar="SWEEP",
            help="run only this sweep (repeatable), e.g. --only checkpoint_db",
        )

    def handle(self, *args: Any, once: bool = False, every: list[str], only: list[str], **options: Any) -> None:
        sweeps = self.schedule(every)
        unknown = sorted(set(only) - {sweep.command for sweep in sweeps})
        if unknown:
            raise CommandError(f"--only {unknown[0]!r}: no such sweep (sweeps: {', '.join(dict(SWEEPS))})")
        if only:
            sweeps = [sweep for sweep in sweeps if sweep.command in only]
        if once:
            for sweep in sweeps:
                self.run_sweep(sweep)
            return
        self.stdout.write(
            "housekeeping: " + ", ".join(f"{sweep.command} every {sweep.interval:g} s" for sweep in sweeps)
        )
        self.loop(sweeps)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # SIGTERM (systemd, `make up` stopping) ends the loop between passes, never inside one.
        self.stopping = threading.Event()

    # The clock and the sleep are attributes so that a test can drive the schedule.
    clock = staticmethod(time.monotonic)

    def sleep(self, seconds: float) -> None:
        self.stopping.wait(seconds)

    def loop(self, sweeps: list[Sweep], *, passes: int | None = None) -> None:
        """Run the sweep that is due next until SIGTERM (or for `passes` passes)."""
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, lambda signum, frame: self.stopping.set())
        while passes is None or passes > 0:
            sweep = min(sweeps, key=lambda s: s.due)
            self.wait_until(sweep.due)
            if self.stopping.is_set():
                return
            self.run_sweep(sweep)
            sweep.due = max(sweep.due + sweep.interval, self.clock())  # no burst of passes after a stall
            if passes is not None:
                passes -= 1

    def schedule(self, overrides: list[str]) -> list[Sweep]:
        intervals = dict(SWEEPS)
        for item in overrides:
            name, _, seconds = item.partition("=")
            if name not in intervals:
                raise CommandError(f"--every {item!r}: no sweep {name!r} (sweeps: {', '.join(intervals)})")
            try:
                intervals[name] = float(seconds)
            except ValueError:
                raise CommandError(f"--every {item!r}: {seconds!r} is not a number of seconds") from None
            if not intervals[name] > 0:
                raise CommandError(f"--every {item!r}: the interval must be positive")
        now = self.clock()
        return [Sweep(command=name, interval=interval, due=now) for name, interval in intervals.items()]

    def wait_until(self, due: float) -> None:
        delay = due - self.clock()
        if delay > 0:
            self.sleep(delay)

    def run_sweep(self, sweep: Sweep) -> None:
        """One pass of one sweep; what it did (nothing is printed when it did nothing) or why it failed."""
        out, err = io.StringIO(), io.StringIO()
        sweep.passes += 1
        try:
            call_command(sweep.command, verbosity=0, stdout=out, stderr=err)
        except Exception as exc:  # Redis, the database or the engine away for a moment
            sweep.failures += 1
            self.stderr.write(f"{sweep.command}: this pass failed, next in {sweep.interval:g} s: {exc}")
        for line in (out.getvalue() + err.getvalue()).splitlines():
            if line.strip():
                self.stdout.write(f"{sweep.command}: {line}")
