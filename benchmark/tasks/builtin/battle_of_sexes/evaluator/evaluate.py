"""Score strategy.py's row_strategy against the hidden partner pool of a split."""

import argparse
import random

import opponents
from arena import Player, SubmissionError, emit, fail


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
        for index, partner in enumerate(pool):
            for match in range(opponents.MATCHES_PER_OPPONENT):
                rng = random.Random(opponents.derived(secret, "opponent", index, match))
                # The player's seed comes from its own secret: it reveals nothing of the above.
                player_seed = opponents.derived(player_secret, index, match) >> 64
                history: list[list[int]] = []
                for _ in range(opponents.ROUNDS):
                    move = player(history, seed=player_seed + len(history))
                    if move not in (0, 1) or isinstance(move, bool):
                        fail(f"row_strategy returned {move!r}; it must return 0 or 1")
                    theirs = partner([[col, row] for row, col in history], rng)
                    total += opponents.payoff(move, theirs)[0]
                    rounds_played += 1
                    history.append([move, theirs])
    except SubmissionError as exc:
        fail(str(exc))
    finally:
        player.close()
    emit({"Score": total / rounds_played, "rounds": rounds_played, "opponents": len(pool)})


if __name__ == "__main__":
    main()
