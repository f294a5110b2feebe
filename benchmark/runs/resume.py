"""Resuming an interrupted run: replay its committed steps into a fresh sandbox, rebuild what the
agent knew, and let it go on from the next step.

The replay re-executes every committed action except `validate` and `submit` (they score, they do
not change the workspace) so the workspace, the working directory, the open file and the memory
are as the agent left them. The agent's conversation is rebuilt from the stored replies and the
stored observations (what the model saw then, not the replay's outputs); replay outputs that
differ from the originals are recorded on the resume entry, so the page can say the workspace may
differ. Step, cost and token counts carry over: the limits count across every part of the run.
"""

from __future__ import annotations

from typing import Any

from benchmark.agent.environment import EVAL_TOOLS, Environment, command_name
from benchmark.agent.loop import Usage
from benchmark.agent.policies import LLMPolicy, ScriptedPolicy
from benchmark.agent.prompt import NEXT_TEMPLATE
from benchmark.models import Run, Step


def committed_steps(run: Run) -> list[Step]:
    return list(run.steps.order_by("index"))


def prior_usage(run: Run, steps: list[Step]) -> Usage:
    """What the earlier parts spent, from the committed steps (each step row holds its own usage)."""
    return Usage(
        tokens_sent=sum(s.tokens_sent for s in steps),
        tokens_received=sum(s.tokens_received for s in steps),
        cost=sum(s.cost for s in steps),
        # A fork's copied steps (state "forked_from") were paid for by its parent, not by this run.
        api_calls=max(
            run.api_calls, sum(1 for s in steps if s.raw_response and not (s.state or {}).get("forked_from"))
        ),
    )


def workspace_replay(env: Environment, steps: list[Step]) -> list[int]:
    """Re-execute the steps' actions in `env`; the indexes whose output differs from the original."""
    differing = []
    for step in steps:
        if not step.action.strip() or command_name(step.action) in EVAL_TOOLS:
            continue
        result = env.execute(step.action)
        if result.text.strip() != step.observation.strip():
            differing.append(step.index)
    return differing


def observation_message(step: Step, *, max_steps: int) -> str:
    """The message the model was shown after `step` (see run_loop and LLMPolicy.decide)."""
    state = step.state or {}
    return NEXT_TEMPLATE.format(
        observation=step.observation or "Your command ran successfully and did not produce any output.",
        step=step.index,
        remaining=max_steps - step.index,
        open_file=state.get("open_file", "n/a"),
        working_dir=state.get("working_dir", ""),
    )


def policy_restore(policy: Any, steps: list[Step], *, max_steps: int, usage: Usage) -> None:
    """Put the policy where it stood after the last committed step; run_loop then hands it that
    step's observation as the next turn's."""
    policy.usage = Usage()
    policy.usage.add(usage)  # the cost limit counts what earlier parts spent
    if isinstance(policy, LLMPolicy):
        replied = [s for s in steps if s.raw_response]
        policy.turns = [(s.raw_response, observation_message(s, max_steps=max_steps)) for s in replied[:-1]]
        policy.pending_reply = replied[-1].raw_response if replied else None
    elif isinstance(policy, ScriptedPolicy):
        policy.position = min(len(steps), len(policy.actions))
