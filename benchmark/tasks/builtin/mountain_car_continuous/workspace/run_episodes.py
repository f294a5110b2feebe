"""Run policy.act on a few practice episodes and print the rewards."""

import gymnasium as gym
import numpy as np
from policy import act


def main() -> None:
    env = gym.make("MountainCarContinuous-v0")
    totals = []
    for seed in range(500, 505):
        observation, _ = env.reset(seed=seed)
        total, done = 0.0, False
        while not done:
            action = float(np.clip(act([float(x) for x in observation]), -1.0, 1.0))
            observation, reward, terminated, truncated, _ = env.step(np.array([action], dtype=np.float32))
            total += float(reward)
            done = terminated or truncated
        totals.append(total)
        print(f"episode seed {seed}: reward {total:.2f}")
    print(f"Reward Mean: {np.mean(totals):.2f}")


if __name__ == "__main__":
    main()
