"""RQ jobs of agent runs: thin, they take ids and call one service."""

from __future__ import annotations

from benchmark.runs.attempts import attempts_score
from benchmark.runs.services import run_execute


def execute_run(run_id: int) -> None:
    """On the `runs` queue; settings.RUN_WORKERS workers (started by `make up`) bound concurrency."""
    run_execute(run_id=run_id)


def score_attempts(run_id: int) -> None:
    """On the `default` queue, after a run: its validated attempts scored on the test split."""
    attempts_score(run_id=run_id)
