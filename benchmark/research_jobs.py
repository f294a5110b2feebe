"""RQ jobs of the research pipeline: thin, they take an id and call one service."""

from __future__ import annotations


def execute_research(research_run_id: int) -> None:
    """On the `runs` queue (the experiment stage holds a sandbox like an agent run does)."""
    from benchmark.research import research_execute

    research_execute(research_run_id=research_run_id)
