"""The experiment stage's one interface to an agent working in a sandbox.

The pipeline asks `experiment_agent()` for a callable and hands it an `ExperimentRequest`;
the callable returns an `ExperimentOutcome`: results.md, the files it produced (figures, logs,
CSV), a trace summary and the agent Run (whose steps are the full trace). The agent is chosen by
settings.RESEARCH_EXPERIMENT_AGENT (a dotted path); by default Referee's own agent
(benchmark.research.agent). When that agent (or a sandbox backend) is not installed the stage fails with a
message saying so - it never makes results up.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from benchmark.models import ResearchRun, Run

DEFAULT_AGENT = "benchmark.research.agent.research_experiment_run"

INSTRUCTIONS = """You are running the experiments of a research project, in this sandbox, from start to finish.
The files task.md, idea.md, related_work.md and proposal.md in the working directory describe the project.

1. Design an experimental plan that tests whether the proposed method works.
2. Write the code and run it, fully automated. Use real, publicly available data and models that fit
   in this sandbox; if something cannot be obtained, use a smaller real substitute and say so.
3. Run every baseline the proposal names, alongside the proposed method, under the same settings.
4. Save all raw results (JSON or CSV) and a log of each run (log.txt).
5. Make figures with clear titles, axis labels and legends (PNG, under figures/), and tables of the key numbers.
6. Write results.md: the setup, the results tables, the figures (by relative path), what they show,
   and the limitations.
7. Never fabricate, simulate or hard-code results. If an experiment fails, report the failure honestly
   in results.md instead of inventing numbers.
"""


@dataclass
class ExperimentRequest:
    research_run: ResearchRun
    inputs: dict[str, str]  # task.md, idea.md, related_work.md, proposal.md
    instructions: str = INSTRUCTIONS
    limits: dict[str, Any] = field(default_factory=dict)


@dataclass
class ExperimentOutcome:
    results_md: str = ""
    files: dict[str, bytes] = field(default_factory=dict)  # relative path -> content (figures, logs, data)
    trace: dict[str, Any] = field(default_factory=dict)  # summary; the full trace is the agent run's steps
    run: Run | None = None
    tokens_sent: int = 0
    tokens_received: int = 0
    cost: float = 0.0
    error: str = ""


class ExperimentUnavailable(Exception):
    """No agent or sandbox is available to run experiments on this deployment."""


class ExperimentInterrupted(Exception):
    """A fault outside the agent stopped the experiment (Redis away past RUN_REDIS_OUTAGE_LIMIT):
    the stage and its research run end interrupted, not failed; the agent run keeps its steps."""

    def __init__(self, message: str, run: Run | None = None) -> None:
        super().__init__(message)
        self.run = run


ExperimentAgent = Callable[[ExperimentRequest], ExperimentOutcome]


def experiment_agent() -> ExperimentAgent:
    path = getattr(settings, "RESEARCH_EXPERIMENT_AGENT", "") or DEFAULT_AGENT
    module_name, _, attr = path.rpartition(".")
    try:
        return getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise ExperimentUnavailable(f"the experiment agent {path!r} cannot be loaded: {exc}") from exc
