"""RQ jobs of the benchmark app: thin, they take ids and call one service."""

from __future__ import annotations


def execute_run(run_id: int) -> None:
    """On the `runs` queue; settings.RUN_WORKERS workers (started by `make up`) bound concurrency."""
    from benchmark.services import run_execute

    run_execute(run_id=run_id)
