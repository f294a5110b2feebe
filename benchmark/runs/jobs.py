"""RQ jobs of agent runs: thin, they take ids and call one service."""

from __future__ import annotations

from benchmark.runs.services import run_execute


def execute_run(run_id: int) -> None:
    """On the `runs` queue; settings.RUN_WORKERS workers (started by `make up`) bound concurrency."""
    run_execute(run_id=run_id)
