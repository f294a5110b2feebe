"""Your branching heuristic for the DPLL solver in solver.py."""


def heuristic_fn(clauses: list[list[int]], assigned: list[int]) -> tuple[int, bool]:
    """Choose the next decision: (variable, value).

    clauses: the clauses not yet satisfied, each a list of non-zero ints (v means variable v is
        true, -v means it is false), already reduced by the current assignment; never empty.
    assigned: the literals made true so far (by decisions and unit propagation).
    Return a variable (a positive int) that occurs in `clauses`, and the value to try first.
    """
    # Baseline: the first variable of the first clause, tried as true first.
    return abs(clauses[0][0]), True
