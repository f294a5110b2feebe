"""Helpers of the cancel tests: an LLM run, a model call held open, the worker in a thread."""

from __future__ import annotations

import json
import threading
from typing import Any

from benchmark.models import AgentConfig, Run
from tests.benchmark.runs_support import agent, make_run
from tests.llm_fakes import FakeLLM, is_check

PRICES = {"price_input_per_mtok": 3.0, "price_output_per_mtok": 15.0}


def reply(command: str) -> str:
    return f"DISCUSSION\nNext.\n\n```\n{command}\n```"


def llm_run(owner: Any, task: Any) -> Run:
    config = agent(AgentConfig.Kind.MODEL, model="openai:gpt-test", **PRICES)
    return make_run(owner=owner, task=task, agent_config=config)


class HeldCall:
    """The fake LLM's transport, with the agent's call number `at` held open until `release` is
    set: a model that is still thinking when the researcher presses Cancel."""

    def __init__(self, fake: FakeLLM, at: int) -> None:
        self.fake = fake
        self.at = at
        self.entered = threading.Event()
        self.release = threading.Event()

    def __call__(self, request: Any) -> Any:
        body = json.loads(request.content or b"{}")
        if not is_check(body) and len(self.fake.calls) == self.at - 1:
            self.entered.set()
            self.release.wait(120)
        return self.fake(request)


class Worker:
    """run_execute in a thread, as an RQ work horse drives it; `join` says whether it ended."""

    def __init__(self, run: Run) -> None:
        self.run_id = run.pk
        self.thread = threading.Thread(target=self._drive, name=f"worker-{run.pk}", daemon=True)

    def _drive(self) -> None:
        from django.db import connection

        from benchmark.runs.services import run_execute

        try:
            run_execute(run_id=self.run_id)
        finally:
            connection.close()

    def start(self) -> Worker:
        self.thread.start()
        return self

    def join(self, timeout: float) -> bool:
        self.thread.join(timeout)
        return not self.thread.is_alive()


def cancel_when_held(held: HeldCall, run: Run) -> threading.Thread:
    """A researcher who presses Cancel (confirmed) while the held call thinks, then lets it answer."""

    def press() -> None:
        from django.db import connection

        from benchmark.runs.services import run_cancel

        try:
            if held.entered.wait(120):
                run_cancel(run=Run.objects.get(pk=run.pk))
        finally:
            held.release.set()
            connection.close()

    thread = threading.Thread(target=press, name="cancel", daemon=True)
    thread.start()
    return thread
