"""RQ jobs of the research pipeline: thin, they take an id and call one service."""

from __future__ import annotations

from benchmark.research.services import research_execute


def execute_research(research_run_id: int) -> None:
    """On the `runs` queue (the experiment stage holds a sandbox like an agent run does)."""
    research_execute(research_run_id=research_run_id)
