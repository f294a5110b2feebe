"""A small DPLL solver for CNF formulas that asks a heuristic for every decision.

The evaluator runs this same algorithm, with your heuristic in a separate process, and counts
decisions (calls to your heuristic). `python3 solver.py` scores heuristic.py on practice
instances (different from the ones used by validate and submit).
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable

Clauses = list[list[int]]
Heuristic = Callable[[Clauses, list[int]], "tuple[int, bool] | list"]


class DecisionLimit(Exception):
    pass


class BadDecision(Exception):
    pass


def simplify(clauses: Clauses, literal: int) -> Clauses | None:
    """Make `literal` true: drop satisfied clauses, remove its negation; None on an empty clause."""
    result = []
    for clause in clauses:
        if literal in clause:
            continue
        if -literal in clause:
            clause = [x for x in clause if x != -literal]
            if not clause:
                return None
        result.append(clause)
    return result


def propagate(clauses: Clauses, assigned: list[int]) -> tuple[Clauses | None, list[int]]:
    """Unit propagation until no unit clause is left."""
    assigned = list(assigned)
    while True:
        unit = next((clause[0] for clause in clauses if len(clause) == 1), None)
        if unit is None:
            return clauses, assigned
        assigned.append(unit)
        simplified = simplify(clauses, unit)
        if simplified is None:
            return None, assigned
        clauses = simplified


def solve(clauses: Clauses, heuristic: Heuristic, *, max_decisions: int = 20_000) -> tuple[list[int] | None, int]:
    """(model as a list of true literals or None if unsatisfiable, decisions made)."""
    decisions = 0

    def search(clauses: Clauses, assigned: list[int]) -> list[int] | None:
        nonlocal decisions
        reduced, assigned = propagate(clauses, assigned)
        if reduced is None:
            return None
        if not reduced:
            return assigned
        if decisions >= max_decisions:
            raise DecisionLimit
        decisions += 1
        choice = heuristic(reduced, assigned)
        try:
            variable, value = choice
        except (TypeError, ValueError):
            raise BadDecision(f"the heuristic returned {choice!r}, not (variable, value)") from None
        free = {abs(x) for clause in reduced for x in clause}
        if isinstance(variable, bool) or not isinstance(variable, int) or variable not in free:
            raise BadDecision(f"the heuristic chose {variable!r}, which is not a free variable of the formula")
        if not isinstance(value, bool):
            raise BadDecision(f"the heuristic chose value {value!r}, not True or False")
        literal = variable if value else -variable
        for branch in (literal, -literal):
            simplified = simplify(reduced, branch)
            if simplified is not None:
                model = search(simplified, assigned + [branch])
                if model is not None:
                    return model
        return None

    return search(clauses, []), decisions


def satisfies(clauses: Clauses, model: list[int]) -> bool:
    true = set(model)
    return all(any(x in true for x in clause) for clause in clauses)


def random_3sat(rng: random.Random, variables: int, clauses: int) -> Clauses:
    formula = []
    for _ in range(clauses):
        chosen = rng.sample(range(1, variables + 1), 3)
        formula.append([v if rng.random() < 0.5 else -v for v in chosen])
    return formula


def main() -> None:
    from heuristic import heuristic_fn

    rng = random.Random(int(sys.argv[1]) if len(sys.argv) > 1 else 7)
    total = 0
    for index in range(10):
        n = rng.randint(45, 55)
        formula = random_3sat(rng, n, round(4.26 * n))
        model, decisions = solve(formula, heuristic_fn)
        if model is not None:
            assert satisfies(formula, model)
        total += decisions
        print(f"instance {index}: {n} variables, {'SAT' if model else 'UNSAT'}, {decisions} decisions")
    print(f"mean decisions: {total / 10:.1f}")


if __name__ == "__main__":
    main()
