"""Regenerate the splits from scikit-learn's bundled diabetes data (run once; outputs are committed).

Writes workspace/data/{train,dev,test}.csv (dev/test without targets) and evaluator/labels_{dev,test}.csv.
Row ids are shuffled random integers so that row order reveals nothing.
"""

import csv
import random
from pathlib import Path

from sklearn.datasets import load_diabetes

HERE = Path(__file__).resolve().parent
SEED = 1717


def main() -> None:
    data = load_diabetes()
    rng = random.Random(SEED)
    order = list(range(len(data.target)))
    rng.shuffle(order)
    ids = rng.sample(range(10_000, 100_000), len(order))
    splits = {"train": order[:302], "dev": order[302:372], "test": order[372:]}
    columns = list(data.feature_names)
    for split, rows in splits.items():
        with open(HERE / "workspace" / "data" / f"{split}.csv", "w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["id", *columns, *(["target"] if split == "train" else [])])
            for row in rows:
                features = [f"{x:.6f}" for x in data.data[row]]
                writer.writerow([ids[row], *features, *([f"{data.target[row]:g}"] if split == "train" else [])])
        if split != "train":
            with open(HERE / "evaluator" / f"labels_{split}.csv", "w", newline="") as handle:
                writer = csv.writer(handle)
                writer.writerow(["id", "target"])
                for row in rows:
                    writer.writerow([ids[row], f"{data.target[row]:g}"])


if __name__ == "__main__":
    main()
