"""A fork's copies of its parent's steps (benchmark.runs.forks), made by the launch that creates it.

Below benchmark.runs.services, which copies them inside the launch's transaction, and
benchmark.runs.forks, which calls that launch.
"""

from __future__ import annotations

from benchmark.models import Run, Step
from benchmark.runs import progress


def steps_copy(*, parent: Run, fork: Run, upto: int) -> int:
    """Copy the parent's steps 1..upto into `fork` (inside the launch's transaction); their count."""
    copied = 0
    for step in Step.objects.filter(run=parent, index__lte=upto).order_by("index").iterator(chunk_size=200):
        progress.step_append(
            run=fork,
            thought=step.thought,
            action=step.action,
            observation=step.observation,
            raw_response=step.raw_response,
            state={**(step.state or {}), "forked_from": {"run": str(parent.code), "index": step.index}},
            execution_time=step.execution_time if step.execution_time is not None else 0.0,
            publish=False,  # nobody watches a run that is not committed yet
        )
        copied += 1
    return copied
