"""Who decides the next action: an LLM, the task's baseline, or a stored trajectory (replay)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from benchmark.agent.loop import Decision, ExitStatus, Stop, Turn, Usage
from benchmark.agent.parsing import FORMAT_ERROR, FormatError, parse_reply
from benchmark.agent.prompt import ELIDED, NEXT_TEMPLATE

MAX_FORMAT_RETRIES = 3


@dataclass(frozen=True)
class ModelSettings:
    model: str
    temperature: float
    top_p: float
    max_tokens: int
    cost_limit: float
    history_window: int
    endpoint: Any = None  # benchmark.llm.Endpoint: where calls go, with which key
    prices: Any = None  # benchmark.llm.Prices, overriding the endpoint's price of the model


Complete = Callable[..., Any]  # benchmark.llm.complete's signature


class LLMPolicy:
    """MLGym's default agent: the whole conversation each call, older observations elided."""

    def __init__(self, *, settings: ModelSettings, system: str, task_message: str, complete: Complete | None = None):
        self.settings = settings
        self.system = system
        self.task_message = task_message
        self.turns: list[tuple[str, str]] = []  # (assistant reply, following observation message)
        self.pending_reply: str | None = None
        self.usage = Usage()
        if complete is None:
            from benchmark.llm import complete as llm_complete

            complete = llm_complete
        self.complete = complete

    def _messages(self, observation_message: str | None) -> list[dict[str, str]]:
        messages = [{"role": "user", "content": self.task_message}]
        window = self.settings.history_window
        for position, (reply, seen) in enumerate(self.turns):
            messages.append({"role": "assistant", "content": reply})
            recent = position >= len(self.turns) - window
            if not recent:
                head, _, prompt = seen.rpartition("\n(Current Step:")
                seen = ELIDED.format(lines=len(head.splitlines())) + "\n(Current Step:" + prompt
            messages.append({"role": "user", "content": seen})
        if observation_message is not None:
            messages.append({"role": "user", "content": observation_message})
        return messages

    def decide(self, turn: Turn) -> Decision:
        from benchmark.llm import ContextOverflowError, LLMError

        observation_message = None
        if turn.observation is not None:
            observation_message = NEXT_TEMPLATE.format(
                observation=turn.observation or "Your command ran successfully and did not produce any output.",
                step=turn.step,
                remaining=turn.remaining,
                open_file=turn.state["open_file"],
                working_dir=turn.state["working_dir"],
            )
            assert self.pending_reply is not None
            self.turns.append((self.pending_reply, observation_message))
        messages = self._messages(None)
        step_usage = Usage()
        for attempt in range(1, MAX_FORMAT_RETRIES + 1):
            if self.usage.cost >= self.settings.cost_limit > 0:
                raise Stop(ExitStatus.EXIT_COST, f"spent ${self.usage.cost:.4f} of ${self.settings.cost_limit:.2f}")
            try:
                completion = self.complete(
                    model=self.settings.model,
                    system=self.system,
                    messages=messages,
                    temperature=self.settings.temperature,
                    top_p=self.settings.top_p,
                    max_tokens=self.settings.max_tokens,
                    endpoint=self.settings.endpoint,
                    prices=self.settings.prices,
                )
            except ContextOverflowError as exc:
                raise Stop(ExitStatus.EXIT_CONTEXT, str(exc), unanswered=not self.usage.api_calls) from exc
            except LLMError as exc:
                raise Stop(ExitStatus.EXIT_API, str(exc), unanswered=not self.usage.api_calls) from exc
            call = Usage(completion.tokens_in or 0, completion.tokens_out or 0, float(completion.cost or 0.0), 1)
            self.usage.add(call)
            step_usage.add(call)
            if self.usage.cost > self.settings.cost_limit > 0:
                raise Stop(ExitStatus.EXIT_COST, f"spent ${self.usage.cost:.4f} of ${self.settings.cost_limit:.2f}")
            try:
                parsed = parse_reply(completion.text)
            except FormatError as exc:
                if attempt == MAX_FORMAT_RETRIES:
                    raise Stop(
                        ExitStatus.EXIT_FORMAT, f"{MAX_FORMAT_RETRIES} malformed replies in a row: {exc}"
                    ) from exc
                # Re-ask with the malformed reply and the format reminder; neither stays in the history.
                messages = messages + [
                    {"role": "assistant", "content": completion.text},
                    {"role": "user", "content": FORMAT_ERROR.format(why=exc)},
                ]
                continue
            self.pending_reply = completion.text
            return Decision(thought=parsed.thought, action=parsed.action, raw=completion.text, usage=step_usage)
        raise AssertionError("unreachable")


class ScriptedPolicy:
    """Model-free: plays a fixed list of (thought, action) pairs, then submits."""

    def __init__(self, actions: Sequence[tuple[str, str]]):
        self.actions = list(actions)
        self.position = 0
        self.usage = Usage()

    def decide(self, turn: Turn) -> Decision:
        if self.position >= len(self.actions):
            return Decision(thought="Nothing left to do: submitting.\n", action="submit\n")
        thought, action = self.actions[self.position]
        self.position += 1
        return Decision(thought=thought, action=action)


def baseline_policy(*, baseline_command: str) -> ScriptedPolicy:
    return ScriptedPolicy(
        [
            ("Run the task's baseline to produce a submission.\n", baseline_command.rstrip("\n") + "\n"),
            ("Score the baseline's submission on the dev split.\n", "validate\n"),
            ("Submit the baseline's submission for the held-out test split.\n", "submit\n"),
        ]
    )


def replay_policy(*, steps: Sequence[Any]) -> ScriptedPolicy:
    """Replays the stored actions in order; the recorder compares outputs (see services)."""
    return ScriptedPolicy([(step.thought, step.action) for step in steps if step.action.strip()])
