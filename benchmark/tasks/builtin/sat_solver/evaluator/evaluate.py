"""Count the DPLL decisions heuristic.py needs on the hidden instances of a split."""

import argparse
import random

from arena import Player, SubmissionError, emit, fail
from solver import BadDecision, DecisionLimit, random_3sat, satisfies, solve

SPLITS = {"dev": (40_404, 12), "test": (64_208, 16)}  # seed, instances
MAX_DECISIONS = 20_000


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
    total = satisfiable = capped = 0
    try:
        for formula in instances:
            try:
                model, decisions = solve(formula, player, max_decisions=MAX_DECISIONS)
            except DecisionLimit:
                model, decisions = None, MAX_DECISIONS
                capped += 1
            if model is not None:
                if not satisfies(formula, model):
                    fail("the solver returned a model that does not satisfy the formula")
                satisfiable += 1
            total += decisions
    except (SubmissionError, BadDecision) as exc:
        fail(str(exc))
    finally:
        player.close()
    emit(
        {
            "Decisions": total / len(instances),
            "instances": len(instances),
            "satisfiable": satisfiable,
            "capped": capped,
        }
    )


if __name__ == "__main__":
    main()
