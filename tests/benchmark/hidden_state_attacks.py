"""Submissions that reach for the evaluator's hidden state through the protocol (issue #28 item 8),
shared by tests/benchmark/tasks/test_hidden_state.py and bench/sat_thinking.py.

Seed tabulation: the old game evaluators drew every match's opponent generator, match length and
the seed handed to the player from one `random.Random(small master seed)`. The attack tabulates
master seeds 0..120,000 at import, recognises the master from the first seed it is handed (the
driver seeds `random` with it before the call: one peeked output names it), and replays the
schedule: every opponent's private stream (Blotto: beat each allocation) or every match length
(Prisoner's Dilemma: defect in the last round). When it recognises nothing it plays the starter
strategy with `random` untouched, so an evaluator that leaks nothing gives it exactly the starter's
score. The attacker is granted the opponents' code (worst case: the seeds alone must not help).

Solve inside the call: a SAT "heuristic" that runs a whole DPLL search with the same branching
rule inside every call and leads the counted solver to the model it found; CACHED keeps that
model (and formulas found unsatisfiable) between calls, so it searches about once per instance.
"""

from __future__ import annotations

from benchmark.tasks.loader import BUILTIN_DIR

TABULATED = 120_000  # the old master seeds were five-digit integers

_PEEK = """
import random


def _peek():
    # The first output of `random` as the driver just seeded it, the generator left as it was.
    state = random.getstate()
    value = random.random()
    random.setstate(state)
    return value
"""

BLOTTO = (
    _PEEK
    + """
_POOL = {{}}
exec({source!r}, _POOL)
_OPPONENTS = _POOL["POOLS"]["test"]
_TABLE = {{}}
for _seed in range({tabulated} + 1):
    _master = random.Random(_seed)
    _master.getrandbits(32)  # the first match's opponent seed, then the player's seed
    _TABLE[random.Random(_master.getrandbits(32)).random()] = _seed
_PLAN = {{}}  # peeked output -> (opponent, its generator's seed)


def _learn(master_seed):
    master = random.Random(master_seed)
    for opponent in _OPPONENTS:
        for _ in range(_POOL["MATCHES_PER_OPPONENT"]):
            opponent_seed, player_seed = master.getrandbits(32), master.getrandbits(32)
            for round_ in range(_POOL["ROUNDS"]):
                _PLAN[random.Random(player_seed + round_).random()] = (opponent, opponent_seed)


def _beat(theirs):
    # One more soldier than the opponent on its four weakest fields: four fields of six won.
    cheapest = sorted(range(6), key=lambda i: theirs[i])[:4]
    allocation = [0] * 6
    for i in cheapest:
        allocation[i] = theirs[i] + 1
    allocation[cheapest[0]] += 120 - sum(allocation)
    return allocation


def row_strategy(history):
    peeked = _peek()
    if not history and not _PLAN and peeked in _TABLE:
        _learn(_TABLE[peeked])
    if peeked in _PLAN:
        opponent, opponent_seed = _PLAN[peeked]
        rng = random.Random(opponent_seed)
        view = [[theirs, mine] for mine, theirs in history]
        for earlier in range(len(history)):
            opponent(view[:earlier], rng)
        return _beat(opponent(view, rng))
    allocation = [0] * 6  # the starter strategy
    for _ in range(120):
        allocation[random.randrange(6)] += 1
    return allocation
"""
)

DILEMMA = (
    _PEEK
    + """
_POOL = {{}}
exec({source!r}, _POOL)
_MATCHES = len(_POOL["POOLS"]["test"]) * _POOL["MATCHES_PER_OPPONENT"]
_TABLE = {{}}
for _seed in range({tabulated} + 1):
    _master = random.Random(_seed)
    _master.randint(8, 12)  # the first match's length, its opponent's seed, then the player's seed
    _master.getrandbits(32)
    _TABLE[random.Random(_master.getrandbits(32)).random()] = _seed
_LENGTHS = {{}}  # peeked output -> the match's hidden length


def _learn(master_seed):
    master = random.Random(master_seed)
    for _ in range(_MATCHES):
        length = master.randint(8, 12)
        master.getrandbits(32)
        player_seed = master.getrandbits(32)
        for round_ in range(length):
            _LENGTHS[random.Random(player_seed + round_).random()] = length


def row_strategy(history):
    peeked = _peek()
    if not history and not _LENGTHS and peeked in _TABLE:
        _learn(_TABLE[peeked])
    if _LENGTHS.get(peeked) == len(history) + 1:
        return 1  # the last round of the match: defect, nobody can answer it
    return history[-1][1] if history else 0  # the starter: tit for tat
"""
)


def seed_tabulation(slug: str) -> bytes:
    template = {"colonel_blotto": BLOTTO, "prisoners_dilemma": DILEMMA}[slug]
    source = (BUILTIN_DIR / slug / "evaluator" / "opponents.py").read_text()
    return template.format(source=source, tabulated=TABULATED).encode()


# The "same branching rule": Jeroslow-Wang (literals of short clauses weigh more).
JW = """
def heuristic_fn(clauses, assigned):
    score = {}
    for clause in clauses:
        weight = 2.0 ** -len(clause)
        for literal in clause:
            score[literal] = score.get(literal, 0.0) + weight
    best = max({abs(x) for x in score}, key=lambda v: (score.get(v, 0.0) + score.get(-v, 0.0), v))
    return best, score.get(best, 0.0) >= score.get(-best, 0.0)
"""

_SEARCH = (
    JW.replace("def heuristic_fn", "def rule")
    + """

def simplify(clauses, literal):
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


def search(clauses, assigned):
    # The solver's own DPLL, uncounted: unit propagation, then the rule's branch, then the other.
    while True:
        unit = next((clause[0] for clause in clauses if len(clause) == 1), None)
        if unit is None:
            break
        assigned = assigned + [unit]
        clauses = simplify(clauses, unit)
        if clauses is None:
            return None
    if not clauses:
        return assigned
    variable, value = rule(clauses, assigned)
    literal = variable if value else -variable
    for branch in (literal, -literal):
        reduced = simplify(clauses, branch)
        if reduced is not None:
            model = search(reduced, assigned + [branch])
            if model is not None:
                return model
    return None


def lead(model, clauses, assigned):
    free = {abs(x) for clause in clauses for x in clause}
    literal = next((x for x in model if abs(x) in free), None) if model else None
    return (abs(literal), literal > 0) if literal is not None else rule(clauses, assigned)
"""
)

SOLVE_INSIDE = (
    _SEARCH
    + """

def heuristic_fn(clauses, assigned):
    return lead(search(clauses, []), clauses, assigned)
"""
)

CACHED = (
    _SEARCH
    + """

_MODEL = []
_UNSATISFIABLE = []  # formulas proven unsatisfiable, as {literal: clauses holding it}


def _inside(clauses, root):
    return all(any(set(clause) <= other for other in root.get(clause[0], ())) for clause in clauses)


def heuristic_fn(clauses, assigned):
    if any(_inside(clauses, root) for root in _UNSATISFIABLE):
        return rule(clauses, assigned)
    if _MODEL:
        true = set(_MODEL[0])
        if not any(-x in true for x in assigned) and all(any(x in true for x in c) for c in clauses):
            return lead(_MODEL[0], clauses, assigned)
    model = search(clauses, [])
    if model is None:
        root = {}
        for clause in clauses:
            for literal in clause:
                root.setdefault(literal, []).append(set(clause))
        _UNSATISFIABLE.append(root)
        return rule(clauses, assigned)
    _MODEL[:] = [list(assigned) + model]
    return lead(model, clauses, assigned)
"""
)
