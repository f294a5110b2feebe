"""`manage.py execute_run RUN_ID`: claim one queued run and drive it to its end in this process.

What a Slurm job runs on its node (benchmark.runs.slurm): the same `run_execute` an RQ worker's job
calls, with the same database, Redis, heartbeat and cancel watch. Slurm ends a job with SIGTERM
(time limit, preemption, scancel) and SIGKILL KillWait seconds later; SIGTERM is turned into an
exception here so that the run's sandbox is closed on the way out. The run itself is left to the
reaper, which asks Slurm why the job ended and says so on the run (benchmark.runs.slurm.slurm_reap).
"""

from __future__ import annotations

import signal
from typing import Any

from django.core.management.base import BaseCommand, CommandError


class Terminated(BaseException):
    """SIGTERM: not an Exception, so the run loop's handlers let it through to the finally blocks."""


def _terminated(signum: int, frame: Any) -> None:
    raise Terminated


class Command(BaseCommand):
    help = "Run one queued run (by id) in this process: what a Slurm job of a run executes."
    # No system checks: they import every URLconf and view (about a second of a job's start); the
    # web processes and `manage.py check` run them.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("run_id", type=int)

    def handle(self, *args: Any, run_id: int, **options: Any) -> None:
        from benchmark.runs.services import run_execute

        signal.signal(signal.SIGTERM, _terminated)
        try:
            run = run_execute(run_id=run_id)
        except Terminated:
            raise CommandError(f"run {run_id}: terminated by a signal; the reaper records why") from None
        if run is None:
            self.stdout.write(f"run {run_id} was not queued (cancelled, or claimed elsewhere): nothing to do")
            return
        self.stdout.write(f"run {run.code} ended {run.status} ({run.exit_status})")
