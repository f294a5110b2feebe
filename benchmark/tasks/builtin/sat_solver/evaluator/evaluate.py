"""Count the DPLL decisions heuristic.py needs on the hidden instances of a split, the time it
thinks charged as decisions too (the rule below; the task's README states it to the agent)."""

import argparse
import json
import random
import subprocess
import sys
import time

from arena import Player, SubmissionError, emit, fail
from solver import BadDecision, DecisionLimit, random_3sat, satisfies, solve

# 128-bit instance seeds, evaluator-side only (this folder never reaches the agent or the
# submission's sandbox); the submission is handed no seed at all.
SPLITS = {"dev": (0xF7FBFC50B6B07DE71437DFDAFAF09105, 12), "test": (0xDC9AAF2D6443B8BCC8D4622C437E83D9, 16)}
MAX_DECISIONS = 20_000

# Work done inside heuristic_fn counts, or solving the formula inside the call would beat the
# branching rule it solves with. Every call is timed here, never by the submission (which can
# patch any clock of its own process), from sending the call to reading the reply. Right before
# each call the same request makes a round trip through ECHO, a child of this sandbox that only
# answers: what the trip costs at this moment, under this machine's load, with no thinking. Per
# instance, TRIP_FACTOR times those trips plus FREE_MS are free; every further MS_PER_DECISION
# milliseconds cost one decision. A plain heuristic stays inside the allowance; a search inside
# the call pays for its own decisions.
TRIP_FACTOR = 2.0
FREE_MS = 5.0
MS_PER_DECISION = 1.0
ECHO = """
import json, sys
for line in sys.stdin:
    request = json.loads(line)
    sys.stdout.write(json.dumps({"id": request["id"], "ok": [1, True]}) + "\\n")
    sys.stdout.flush()
"""


class Timed:
    """The player, each call timed on this side of the pipes beside an echo of the same request."""

    def __init__(self, player: Player) -> None:
        self.player = player
        self.echo = subprocess.Popen(
            [sys.executable, "-I", "-c", ECHO], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0
        )
        self.counter = 0
        self.thinking = self.trips = 0.0

    def _trip(self, clauses: list[list[int]], assigned: list[int]) -> float:
        self.counter += 1
        started = time.perf_counter()
        request = {"id": self.counter, "function": "heuristic_fn", "args": [clauses, assigned], "kwargs": {}}
        self.echo.stdin.write(json.dumps(request).encode() + b"\n")
        json.loads(self.echo.stdout.readline())
        return time.perf_counter() - started

    def __call__(self, clauses: list[list[int]], assigned: list[int]):
        self.trips += self._trip(clauses, assigned)
        started = time.perf_counter()
        try:
            return self.player(clauses, assigned)
        finally:
            self.thinking += time.perf_counter() - started

    def close(self) -> None:
        self.echo.kill()
        self.echo.wait()


def charge(thinking_ms: float, trips_ms: float) -> float:
    """Decisions that one instance's heuristic time costs beyond its free allowance."""
    return max(0.0, thinking_ms - TRIP_FACTOR * trips_ms - FREE_MS) / MS_PER_DECISION


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--split", choices=["dev", "test"], required=True)
    args = parser.parse_args()
    seed, count = SPLITS[args.split]
    rng = random.Random(seed)
    instances = []
    for _ in range(count):
        n = rng.randint(50, 60)
        instances.append(random_3sat(rng, n, round(4.26 * n)))
    try:
        player = Player("heuristic_fn")
    except SubmissionError as exc:
        fail(str(exc))
    timed = Timed(player)
    total = charged = thinking = trips = 0.0
    satisfiable = capped = 0
    try:
        for formula in instances:
            timed.thinking = timed.trips = 0.0
            try:
                model, decisions = solve(formula, timed, max_decisions=MAX_DECISIONS)
            except DecisionLimit:
                model, decisions = None, MAX_DECISIONS
                capped += 1
            if model is not None:
                if not satisfies(formula, model):
                    fail("the solver returned a model that does not satisfy the formula")
                satisfiable += 1
            total += decisions
            thinking += 1000 * timed.thinking
            trips += 1000 * timed.trips
            charged += charge(1000 * timed.thinking, 1000 * timed.trips)
    except (SubmissionError, BadDecision) as exc:
        fail(str(exc))
    finally:
        player.close()
        timed.close()
    emit(
        {
            "Decisions": (total + charged) / len(instances),
            "solver_decisions": total / len(instances),
            "time_charge": charged / len(instances),
            "heuristic_ms": thinking / len(instances),
            "trip_ms": trips / len(instances),
            "instances": len(instances),
            "satisfiable": satisfiable,
            "capped": capped,
        }
    )


if __name__ == "__main__":
    main()
