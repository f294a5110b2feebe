"""Your strategy for the iterated Prisoner's Dilemma (0 = cooperate, 1 = defect)."""

import random  # noqa: F401  (random strategies are allowed; the evaluator seeds each match)


def row_strategy(history: list[list[int]]) -> int:
    """Tit for tat: cooperate first, then copy the opponent's previous move."""
    if not history:
        return 0
    return history[-1][1]
