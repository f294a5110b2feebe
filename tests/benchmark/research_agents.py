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
