"""Forking a run from one of its steps: a new run that starts where the parent stood after step N
and goes on with another agent (an endpoint and model).

The fork's steps 1..N are copies of the parent's, each marked `state["forked_from"]` and carrying
no tokens or cost (the parent paid for them; the fork's totals count only its own calls). Its
worker then treats them as a resume does (benchmark.runs.resume): it re-executes their actions in a
fresh sandbox so the workspace is the parent's after step N, rebuilds the conversation from the
stored replies, and the chosen model goes on from step N + 1. Scores of the copied steps stay the
parent's: the fork's best attempt and submission count only what the fork itself evaluated.
"""

from __future__ import annotations

from typing import Any

from benchmark.models import AgentConfig, Run, Step
from benchmark.runs import services

# A fork replays finished work: an active run has no settled steps, an imported one no sandbox
# history Referee can re-execute (MLGym's tasks may not even be runnable here).
FORKABLE_STATUSES = (Run.Status.FINISHED, Run.Status.FAILED, Run.Status.CANCELLED, Run.Status.INTERRUPTED)


def fork_refusal(run: Run, step_index: int | None = None) -> str:
    """Why `run` cannot be forked (at `step_index`), or "" when it can."""
    if run.source != Run.Source.REFEREE:
        return "Only runs made on Referee can be forked: an imported trajectory cannot be replayed here."
    if run.status not in FORKABLE_STATUSES:
        return f"A {run.get_status_display().lower()} run cannot be forked yet; wait until it has ended."
    if not run.step_count:
        return "This run has no steps to fork from."
    if step_index is not None and not run.steps.filter(index=step_index).exists():
        return f"This run has no step {step_index}."
    return ""


def run_fork(
    *, run: Run, step_index: int, agent: AgentConfig, owner: Any, limits: Any, title: str = "", note: str = ""
) -> Run:
    """Launch the fork of `run` at `step_index` with `agent`; ValueError if it cannot be forked there,
    services.LaunchError if the queue does not answer (nothing is created then)."""
    refusal = fork_refusal(run, step_index)
    if refusal:
        raise ValueError(refusal)
    (fork,) = services.run_launch(
        owner=owner,
        tasks=[run.task],
        agent=agent,
        limits=limits,
        title=title or f"fork of {str(run.code)[:8]} at step {step_index}",
        note=note,
        fork_of=run,
        fork_step=step_index,
    )
    return fork


def is_copied(step: Step) -> bool:
    """A step a fork copied from its parent (not one its own agent took)."""
    return bool((step.state or {}).get("forked_from"))
