"""Run policy.act in MountainCarContinuous-v0 from the hidden start states of a split."""

import argparse
import math

import gymnasium as gym
import numpy as np
from arena import Player, SubmissionError, emit, fail

SPLITS = {"dev": range(1_000, 1_010), "test": range(7_000, 7_020)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--split", choices=["dev", "test"], required=True)
    args = parser.parse_args()
    env = gym.make("MountainCarContinuous-v0")
    try:
        player = Player("act")
    except SubmissionError as exc:
        fail(str(exc))
    totals = []
    try:
        for seed in SPLITS[args.split]:
            observation, _ = env.reset(seed=seed)
            total, done = 0.0, False
            while not done:
                action = player([float(x) for x in observation])
                if isinstance(action, bool) or not isinstance(action, (int, float)) or not math.isfinite(action):
                    fail(f"act returned {action!r}; it must return a finite number")
                action = float(np.clip(action, -1.0, 1.0))
                observation, reward, terminated, truncated, _ = env.step(np.array([action], dtype=np.float32))
                total += float(reward)
                done = terminated or truncated
            totals.append(total)
    except SubmissionError as exc:
        fail(str(exc))
    finally:
        player.close()
    emit({"Reward Mean": float(np.mean(totals)), "Reward Std": float(np.std(totals)), "episodes": len(totals)})


if __name__ == "__main__":
    main()
