"""The 3-SAT task charges the submission's CPU time, measured by Referee's relay outside the
submitted process (sandbox/runtime/driver.py), not the wall time of its calls: waiting costs
nothing, work costs what it costs whenever it is done, and the figures cannot be forged by the
submission, which holds neither the relay's key nor a way to speak for it."""

from __future__ import annotations

import pytest

from benchmark.tasks.evaluation import artifacts_evaluate
from benchmark.tasks.loader import BUILTIN_DIR, task_sync
from tests.benchmark.hidden_state_attacks import JW

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

# Sleeps 30 ms a call: wall time a wall-clock charge would bill (about 30 decisions a call).
SLEEPY = "import time\n" + JW.replace("    score = {}", "    time.sleep(0.03)\n    score = {}")
# Spins 20 ms of CPU in a thread *between* calls, on the previous call's reply: charged to the next one.
BETWEEN = (
    "import threading, time\n"
    "def _spin():\n"
    "    end = time.process_time() + 0.02\n"
    "    while time.process_time() < end:\n"
    "        pass\n"
    + JW.replace("    score = {}", "    threading.Thread(target=_spin).start()\n    score = {}")
)  # fmt: skip
# Speaks for the relay: writes its own reply and CPU line into the evaluator's pipe.
FORGER = (
    """
import json, threading
def _forge():
    with open("/referee-calls/replies", "wb", buffering=0) as pipe:
        pipe.write(b'{"ready": true, "functions": ["heuristic_fn"]}\\n{"cpu_ns": 0, "mac": "00"}\\n')
threading.Thread(target=_forge).start()
"""
    + JW
)
# Looks for the relay's key where it could be: the key file, its environment.
SNOOP = """
import os
FOUND = [os.path.exists(".referee/cpu-key"), any(k.startswith("REFEREE_CPU") for k in os.environ)]
def heuristic_fn(clauses, assigned):
    raise RuntimeError(f"found {FOUND}")
"""


def evaluate(source: str):
    task = task_sync(BUILTIN_DIR / "sat_solver")
    return artifacts_evaluate(task=task, artifacts={"heuristic.py": source.encode()}, split="dev")


def test_it_charges_cpu_time_not_the_time_a_call_waits(task_backend):
    plain, sleepy = evaluate(JW), evaluate(SLEEPY)
    assert plain.error == "" and sleepy.error == "", plain.error + sleepy.error + sleepy.output
    assert sleepy.metrics["solver_decisions"] == plain.metrics["solver_decisions"]
    # A wall-clock charge would bill ~30 decisions per call; CPU time bills at most what waking up
    # costs (cold caches after each sleep: about half a millisecond a call here).
    calls = sleepy.metrics["calls"]
    assert sleepy.metrics["heuristic_ms"] < 0.1 * 30 * calls and sleepy.metrics["time_charge"] < 0.05 * 30 * calls


def test_it_charges_work_done_between_calls(task_backend):
    result = evaluate(BETWEEN)
    assert result.error == "", result.error + result.output
    # Each call leaves a thread spinning 20 ms of the process's CPU time (less where spins overlap),
    # which lands on the following calls: charged beyond the 0.5 ms a call free.
    assert result.metrics["heuristic_ms"] > 8 * (result.metrics["calls"] - 1)
    assert result.metrics["time_charge"] > 5 * (result.metrics["calls"] - 1)


def test_it_refuses_lines_the_submission_writes_into_the_pipes_itself(task_backend):
    result = evaluate(FORGER)
    assert result.primary is None
    assert "did not come from Referee's relay" in result.error + result.output, result.error + result.output


def test_it_keeps_the_relays_key_out_of_the_submissions_reach(task_backend):
    result = evaluate(SNOOP)
    assert result.primary is None and "found [False, False]" in result.error + result.output, result.output
