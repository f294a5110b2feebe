"""The agent loop: decide -> execute in the sandbox -> record, until submit or a limit.

The loop knows nothing of Django: a `Recorder` persists and publishes each step, a `Policy`
decides the next action (an LLM, the task's baseline, or a replayed trajectory).
Exit statuses use MLGym's vocabulary.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from benchmark.agent.environment import Environment, Observation


class ExitStatus:
    SUBMITTED = "submitted"
    MAX_STEPS = "max_steps"
    EXIT_COST = "exit_cost"
    EXIT_CONTEXT = "exit_context"
    EXIT_FORMAT = "exit_format"
    EXIT_API = "exit_api"
    EXIT_ERROR = "exit_error"
    EXIT_CANCELLED = "exit_cancelled"


@dataclass
class Usage:
    tokens_sent: int = 0
    tokens_received: int = 0
    cost: float = 0.0
    api_calls: int = 0

    def add(self, other: Usage) -> None:
        self.tokens_sent += other.tokens_sent
        self.tokens_received += other.tokens_received
        self.cost += other.cost
        self.api_calls += other.api_calls


@dataclass
class Decision:
    thought: str
    action: str
    raw: str = ""
    usage: Usage = field(default_factory=Usage)


@dataclass
class Turn:
    """What the policy is told before deciding: the last observation and where the agent stands."""

    step: int
    remaining: int
    observation: str | None
    state: dict[str, str]


class Stop(Exception):
    """The policy cannot go on; `reason` is an exit status.

    ``unanswered``: the model never answered in this run (dead endpoint, rejected key): the run
    has no work of the agent to score, so it fails instead of autosubmitting the starter code."""

    def __init__(self, reason: str, detail: str = "", *, unanswered: bool = False) -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail
        self.unanswered = unanswered


class Cancelled(Exception):
    """Raised by a recorder's `step` when the run was cancelled before the step could be committed."""


class Policy(Protocol):
    usage: Usage

    def decide(self, turn: Turn) -> Decision: ...


class Recorder(Protocol):
    def step(self, *, decision: Decision, observation: Observation, state: dict[str, Any], harness: float) -> None:
        """Record the step; may raise Cancelled (then nothing was recorded)."""
        ...

    def cancelled(self) -> bool: ...


@dataclass
class Outcome:
    exit_status: str
    detail: str = ""
    steps: int = 0
    failed: bool = False  # nothing of the agent's to score (see Stop.unanswered)
    # A cancelled run's last model call, paid for but recorded in no step (its command never ran,
    # or ran and was cut off by the cancel): the run's totals include it, the page says so.
    unrecorded: Usage | None = None


# Stops whose cause is the status itself: the autosubmission is still scored and recorded.
TERMINAL = (ExitStatus.EXIT_FORMAT, ExitStatus.EXIT_CONTEXT, ExitStatus.EXIT_API)


def submission_status(result: Any, reason: str) -> str:
    """MLGym's names: submitted / autosubmission (R) on success; on failure say why, with R."""
    if reason in TERMINAL:
        return reason
    if not result.error:
        return ExitStatus.SUBMITTED if reason == "submit" else f"autosubmission ({reason})"
    if reason.startswith("exit_"):
        return reason
    text = result.error.lower()
    kind = "submission_not_found" if ("not found" in text or "no such file" in text) else "evaluation_format_error"
    return f"{kind} ({reason})"


def run_loop(
    *,
    env: Environment,
    policy: Policy,
    recorder: Recorder,
    max_steps: int,
    first: int = 1,
    observation: str | None = None,
) -> Outcome:
    """Steps `first`..`max_steps`; a resumed run starts after its committed steps, with the last
    one's observation (the step limit counts across both parts)."""
    for number in range(first, max_steps + 1):
        if recorder.cancelled():
            return Outcome(ExitStatus.EXIT_CANCELLED, steps=number - 1)
        turn = Turn(
            step=number - 1, remaining=max_steps - number + 1, observation=observation, state=env.state.as_dict()
        )
        try:
            decision = policy.decide(turn)
        except Stop as stop:
            if stop.unanswered:
                return Outcome(stop.reason, stop.detail, number - 1, failed=True)
            return _autosubmit(env=env, recorder=recorder, reason=stop.reason, detail=stop.detail, steps=number - 1)
        if recorder.cancelled():  # cancelled while the model thought: its command never starts
            return Outcome(ExitStatus.EXIT_CANCELLED, steps=number - 1, unrecorded=decision.usage)
        started = time.perf_counter()
        result = env.execute(decision.action)
        # Harness time of this step = the step's wall time minus the command's own time in the sandbox.
        harness = max(0.0, time.perf_counter() - started - result.duration)
        try:
            recorder.step(decision=decision, observation=result, state=env.state.as_dict(), harness=harness)
        except Cancelled:  # the cancel landed while the command ran (it was interrupted): no step
            return Outcome(ExitStatus.EXIT_CANCELLED, steps=number - 1, unrecorded=decision.usage)
        if result.done:
            return Outcome(submission_status(result.score, "submit"), steps=number)
        observation = result.text
    return _autosubmit(env=env, recorder=recorder, reason=ExitStatus.MAX_STEPS, detail="", steps=max_steps)


def _autosubmit(*, env: Environment, recorder: Recorder, reason: str, detail: str, steps: int) -> Outcome:
    """Score whatever submission the agent left, as MLGym does when a run stops early."""
    if reason == ExitStatus.EXIT_CANCELLED or recorder.cancelled():
        return Outcome(ExitStatus.EXIT_CANCELLED, detail, steps)
    decision = Decision(
        thought=f"(autosubmission after {reason}{': ' + detail if detail else ''})\n", action="submit\n"
    )
    result = env.execute("submit")
    try:
        recorder.step(decision=decision, observation=result, state=env.state.as_dict(), harness=0.0)
    except Cancelled:
        return Outcome(ExitStatus.EXIT_CANCELLED, detail, steps)
    return Outcome(submission_status(result.score, reason), detail, steps + 1)
