"""Score strategy.py's row_strategy against the hidden opponent pool of a split."""

import argparse
import random

import opponents
from arena import Player, SubmissionError, emit, fail


def check(allocation) -> list[int]:
    if (
        not isinstance(allocation, list)
        or len(allocation) != opponents.FIELDS
        or not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in allocation)
        or sum(allocation) != opponents.SOLDIERS
    ):
        fail(
            f"row_strategy returned {allocation!r}; it must return {opponents.FIELDS} non-negative "
            f"integers summing to {opponents.SOLDIERS}"
        )
    return allocation


def payoff(row: list[int], col: list[int]) -> int:
    wins = sum(1 for a, b in zip(row, col, strict=True) if a > b)
    losses = sum(1 for a, b in zip(row, col, strict=True) if a < b)
    return (wins > losses) - (wins < losses)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--split", choices=["dev", "test"], required=True)
    args = parser.parse_args()
    pool = opponents.POOLS[args.split]
    secret, player_secret = opponents.SECRETS[args.split], opponents.PLAYER_SECRETS[args.split]
    try:
        player = Player("row_strategy")
    except SubmissionError as exc:
        fail(str(exc))
    total = rounds_played = 0
    try:
        for index, opponent in enumerate(pool):
            for match in range(opponents.MATCHES_PER_OPPONENT):
                rng = random.Random(opponents.derived(secret, "opponent", index, match))
                # The player's seed comes from its own secret: it reveals nothing of the above.
                player_seed = opponents.derived(player_secret, index, match) >> 64
                history: list[list[list[int]]] = []
                for _ in range(opponents.ROUNDS):
                    mine = check(player(history, seed=player_seed + len(history)))
                    theirs = opponent([[col, row] for row, col in history], rng)
                    total += payoff(mine, theirs)
                    rounds_played += 1
                    history.append([mine, theirs])
    except SubmissionError as exc:
        fail(str(exc))
    finally:
        player.close()
    emit({"Score": total / rounds_played, "rounds": rounds_played, "opponents": len(pool)})


if __name__ == "__main__":
    main()
