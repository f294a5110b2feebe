"""Opponent strategies: `history` rows are [opponent's allocation, your allocation]."""

import hashlib

SOLDIERS = 120
FIELDS = 6
ROUNDS = 5


def _normalise(weights, rng):
    """Integer allocation proportional to weights, summing to SOLDIERS."""
    total = sum(weights)
    alloc = [int(SOLDIERS * w / total) for w in weights]
    while sum(alloc) < SOLDIERS:
        alloc[rng.randrange(FIELDS)] += 1
    return alloc


def uniform(history, rng):
    return [20] * FIELDS


def random_dirichlet(history, rng):
    return _normalise([rng.gammavariate(1.0, 1.0) + 1e-9 for _ in range(FIELDS)], rng)


def concentrate_four(history, rng):
    fields = rng.sample(range(FIELDS), 4)
    return [30 if i in fields else 0 for i in range(FIELDS)]


def concentrate_three(history, rng):
    fields = rng.sample(range(FIELDS), 3)
    return [40 if i in fields else 0 for i in range(FIELDS)]


def counter_last(history, rng):
    # Beats the row player's last allocation on its four weakest fields, where it can.
    if not history:
        return random_dirichlet(history, rng)
    last = history[-1][1]
    order = sorted(range(FIELDS), key=lambda i: last[i])[:4]
    alloc = [0] * FIELDS
    for i in order:
        alloc[i] = last[i] + 1
    left = SOLDIERS - sum(alloc)
    if left < 0:
        return random_dirichlet(history, rng)
    for _ in range(left):
        alloc[rng.choice(order)] += 1
    return alloc


def skewed(history, rng):
    return _normalise([rng.uniform(0.5, 1.5) * (i + 1) for i in range(FIELDS)], rng)


def jittered_uniform(history, rng):
    alloc = [20] * FIELDS
    for _ in range(10):
        a, b = rng.sample(range(FIELDS), 2)
        if alloc[a] > 0:
            alloc[a] -= 1
            alloc[b] += 1
    return alloc


def two_fronts(history, rng):
    fields = rng.sample(range(FIELDS), 2)
    rest = [i for i in range(FIELDS) if i not in fields]
    alloc = [0] * FIELDS
    for i in fields:
        alloc[i] = 35
    for i in rest:
        alloc[i] = 12
    alloc[rest[0]] += SOLDIERS - sum(alloc)
    return alloc


POOLS = {
    "dev": [uniform, random_dirichlet, concentrate_four, counter_last, skewed],
    "test": [random_dirichlet, concentrate_three, counter_last, jittered_uniform, two_fronts],
}
# Evaluator-side secrets (128-bit; this folder never reaches the agent's workspace or the
# submission's sandbox). Everything hidden (match lengths, the opponents' generators) derives from
# SECRETS, the seeds handed to the player from PLAYER_SECRETS, each through SHA-256 of the secret
# and the match's place: the two share no stream, so no number of handed seeds (nor a Mersenne
# Twister state rebuilt from them) tells anything about the opponents' draws.
SECRETS = {"dev": 0xE52B97F1DA433396B6909C6080762823, "test": 0xAA42C3001D9EC4835AB121FB65593993}
PLAYER_SECRETS = {"dev": 0x7CF8709439CFB79E18D8864FEFDBEED3, "test": 0xE1361E6ADAB0A3DCEDBB8C7F0C39FA31}
MATCHES_PER_OPPONENT = 30


def derived(secret: int, *place: object) -> int:
    """A 128-bit number from a secret and a place in the schedule (reproducible per split)."""
    digest = hashlib.sha256(repr((secret, *place)).encode()).digest()
    return int.from_bytes(digest[:16], "big")
