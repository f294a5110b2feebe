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
    master = random.Random(opponents.SEEDS[args.split])
    try:
        player = Player("row_strategy")
    except SubmissionError as exc:
        fail(str(exc))
    total = rounds_played = 0
    try:
        for partner in pool:
            for _ in range(opponents.MATCHES_PER_OPPONENT):
                rng = random.Random(master.getrandbits(32))
                player_seed = master.getrandbits(32)
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
