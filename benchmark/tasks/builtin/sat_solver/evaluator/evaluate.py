"""Count the DPLL decisions heuristic.py needs on the hidden instances of a split, the time it
thinks charged as decisions too (the rule below; the task's README states it to the agent)."""

import argparse
import random

from arena import Player, SubmissionError, emit, fail
from solver import BadDecision, DecisionLimit, random_3sat, satisfies, solve

# 128-bit instance seeds, evaluator-side only (this folder never reaches the agent or the
# submission's sandbox); the submission is handed no seed at all.
SPLITS = {"dev": (0xF7FBFC50B6B07DE71437DFDAFAF09105, 12), "test": (0xDC9AAF2D6443B8BCC8D4622C437E83D9, 16)}
MAX_DECISIONS = 20_000

# Work done inside heuristic_fn counts, or solving the formula inside the call would beat the
# branching rule it solves with. What is charged is CPU time, not wall time: the CPU time the
# submission's whole sandbox spent from one reply to the next (so work done between calls is
# charged too), measured by Referee's relay outside the submitted process and signed with a key
# the submission never holds (sandbox/runtime/driver.py). Load on the machine slows a call's wall
# time but not its CPU time, so the charge holds under load. Per instance, FREE_MS plus CALL_MS
# per call (decoding the request, encoding the reply) are free; every further MS_PER_DECISION
# milliseconds cost one decision. A plain heuristic stays inside the allowance; a search inside
# the call pays for its own decisions.
FREE_MS = 5.0
CALL_MS = 0.5
MS_PER_DECISION = 1.0


class Timed:
    """The player, each call's CPU time (as the relay measured it) added up per instance."""

    def __init__(self, player: Player) -> None:
        self.player = player
        self.thinking = 0.0
        self.calls = 0

    def __call__(self, clauses: list[list[int]], assigned: list[int]):
        try:
            return self.player(clauses, assigned)
        finally:
            cpu = self.player.cpu_seconds
            if cpu is None:
                fail("the submission's CPU time was not measured: this evaluator needs Referee's relay")
            self.thinking += cpu
            self.calls += 1

    def close(self) -> None:
        pass


def charge(thinking_ms: float, calls: int) -> float:
    """Decisions that one instance's heuristic CPU time costs beyond its free allowance."""
    return max(0.0, thinking_ms - CALL_MS * calls - FREE_MS) / MS_PER_DECISION


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
    total = charged = thinking = 0.0
    calls = 0
    satisfiable = capped = 0
    try:
        for formula in instances:
            timed.thinking, timed.calls = 0.0, 0
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
            calls += timed.calls
            charged += charge(1000 * timed.thinking, timed.calls)
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
            "calls": calls / len(instances),
            "instances": len(instances),
            "satisfiable": satisfiable,
            "capped": capped,
        }
    )


if __name__ == "__main__":
    main()
