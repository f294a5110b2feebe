"""Your Colonel Blotto strategy: 120 soldiers over 6 battlefields."""

import random

SOLDIERS = 120
FIELDS = 6


def row_strategy(history: list[list[list[int]]]) -> list[int]:
    """A random allocation: 120 soldiers dropped one by one on random battlefields."""
    allocation = [0] * FIELDS
    for _ in range(SOLDIERS):
        allocation[random.randrange(FIELDS)] += 1
    return allocation
