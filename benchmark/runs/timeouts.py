"""A run's command timeout: the services give it to the sandbox, Slurm sizes a job's time limit by it.

Below benchmark.runs.services and benchmark.runs.slurm, which both read it.
"""

from __future__ import annotations

from benchmark.models import Run

DEFAULT_COMMAND_TIMEOUT = 1800


def command_timeout_of(run: Run) -> int:
    """The launch's command timeout, else the task's own (MLGym's `training_timeout`), else 1800 s."""
    launched = run.params.get("command_timeout")
    return int(launched or (run.task.config or {}).get("training_timeout") or DEFAULT_COMMAND_TIMEOUT)
