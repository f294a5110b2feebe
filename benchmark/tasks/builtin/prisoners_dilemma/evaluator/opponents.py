"""Opponent strategies (column player). `rng` is a random.Random owned by the evaluator."""

import hashlib

PAYOFF = {(0, 0): (3, 3), (0, 1): (0, 5), (1, 0): (5, 0), (1, 1): (1, 1)}


def always_cooperate(history, rng):
    return 0


def always_defect(history, rng):
    return 1


def tit_for_tat(history, rng):
    return history[-1][0] if history else 0


def suspicious_tit_for_tat(history, rng):
    return history[-1][0] if history else 1


def grim_trigger(history, rng):
    return 1 if any(mine == 1 for mine, _ in history) else 0


def random_70(history, rng):
    return 0 if rng.random() < 0.7 else 1


def random_half(history, rng):
    return rng.randrange(2)


def pavlov(history, rng):
    if not history:
        return 0
    row, col = history[-1]
    return col if row == col else 1 - col


def tit_for_two_tats(history, rng):
    return 1 if len(history) >= 2 and history[-1][0] == 1 and history[-2][0] == 1 else 0


def generous_tit_for_tat(history, rng):
    if history and history[-1][0] == 1 and rng.random() > 0.3:
        return 1
    return 0


def alternator(history, rng):
    return len(history) % 2


def prober(history, rng):
    # Opens D, C, C; keeps defecting if the row player never retaliated, else plays tit for tat.
    opening = [1, 0, 0]
    if len(history) < 3:
        return opening[len(history)]
    if history[1][0] == 0 and history[2][0] == 0:
        return 1
    return history[-1][0]


def majority(history, rng):
    defections = sum(mine for mine, _ in history)
    return 1 if defections * 2 > len(history) else 0


def noisy_grim(history, rng):
    if any(mine == 1 for mine, _ in history):
        return 1
    return 1 if rng.random() < 0.1 else 0


# dev and test share no opponent seed and only part of their pools.
POOLS = {
    "dev": [always_cooperate, always_defect, tit_for_tat, random_70, pavlov, grim_trigger, alternator],
    "test": [
        always_cooperate,
        always_defect,
        suspicious_tit_for_tat,
        random_half,
        tit_for_two_tats,
        generous_tit_for_tat,
        prober,
        majority,
        noisy_grim,
        pavlov,
    ],
}
# Evaluator-side secrets (128-bit; this folder never reaches the agent's workspace or the
# submission's sandbox). Everything hidden (match lengths, the opponents' generators) derives from
# SECRETS, the seeds handed to the player from PLAYER_SECRETS, each through SHA-256 of the secret
# and the match's place: the two share no stream, so no number of handed seeds (nor a Mersenne
# Twister state rebuilt from them) tells anything about the opponents' draws.
SECRETS = {"dev": 0xD48268BD337E84179C2B542EFB289DC9, "test": 0xF443EDE0E81EDB9CDD5B15B1285B4C41}
PLAYER_SECRETS = {"dev": 0xC3E0E6D902CEE2A0DDF8F690826C4918, "test": 0x4883B91A095532D6D0FD7CE5DB462E76}
MATCHES_PER_OPPONENT = 12


def derived(secret: int, *place: object) -> int:
    """A 128-bit number from a secret and a place in the schedule (reproducible per split)."""
    digest = hashlib.sha256(repr((secret, *place)).encode()).digest()
    return int.from_bytes(digest[:16], "big")
