"""Experiment agents for the pipeline tests, selected through settings.RESEARCH_EXPERIMENT_AGENT.

`released_agent` hands back the real results of a released MLR-Bench run (results.md and its
figures, from the data folder) instead of running code: it stands in for the sandboxed agent
so the paper stage can be tested on real figures. It says what it is in its trace.
"""

from __future__ import annotations

from benchmark.research.experiment import ExperimentOutcome, ExperimentRequest
from tests.benchmark.mlrbench_data import MLRBENCH

RELEASED = MLRBENCH / "agent_results" / "end2end_claude" / "iclr2025_dl4c" / "results"


def released_agent(request: ExperimentRequest) -> ExperimentOutcome:
    files = {f"figures/{p.name}": p.read_bytes() for p in sorted(RELEASED.glob("*.png"))[:2]}
    results = (RELEASED / "results.md").read_text()
    return ExperimentOutcome(
        results_md=results,
        files=files,
        trace={
            "agent": "released results of end2end_claude/iclr2025_dl4c (test stand-in)",
            "inputs": sorted(request.inputs),
        },
        tokens_sent=1000,
        tokens_received=200,
        cost=0.25,
    )


def failing_agent(request: ExperimentRequest) -> ExperimentOutcome:
    return ExperimentOutcome(error="the sandbox ran out of disk")


def agent_that_fails_after_working(request: ExperimentRequest) -> ExperimentOutcome:
    """Works a few steps as an agent Run, writes its log, then fails: what a page must link to."""
    from benchmark.models import AgentConfig, Run, Step

    research_run = request.research_run
    agent, _ = AgentConfig.objects.get_or_create(name="test coding agent", defaults={"model": research_run.backbone})
    run = Run.objects.create(
        task=research_run.task,
        agent=agent,
        owner=research_run.owner,
        method=agent.name,
        status=Run.Status.FINISHED,
        exit_status="exit_cost",
        step_count=1,
        params={"research_run": str(research_run.code), "stage": "experiment"},
    )
    Step.objects.create(run=run, index=0, action="python train.py", observation="CUDA not available")
    return ExperimentOutcome(
        files={"log.txt": b"epoch 0: CUDA not available\n"}, run=run, error="the agent ran out of budget"
    )
