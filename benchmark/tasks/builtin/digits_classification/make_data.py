"""Regenerate the splits from scikit-learn's bundled digits (run once; the outputs are committed).

Writes workspace/data/{train,dev,test}.csv (dev/test without labels) and evaluator/labels_{dev,test}.csv.
Row ids are shuffled random integers so that row order reveals nothing.
"""

import csv
import random
from pathlib import Path

from sklearn.datasets import load_digits

HERE = Path(__file__).resolve().parent
SEED = 4242


def main() -> None:
    digits = load_digits()
    rng = random.Random(SEED)
    order = list(range(len(digits.target)))
    rng.shuffle(order)
    ids = rng.sample(range(100_000, 1_000_000), len(order))
    splits = {"train": order[:1197], "dev": order[1197:1497], "test": order[1497:]}
    columns = [f"pixel_{i}" for i in range(64)]
    for split, rows in splits.items():
        with open(HERE / "workspace" / "data" / f"{split}.csv", "w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["id", *columns, *(["label"] if split == "train" else [])])
            for row in rows:
                features = [int(x) for x in digits.data[row]]
                writer.writerow([ids[row], *features, *([int(digits.target[row])] if split == "train" else [])])
        if split != "train":
            with open(HERE / "evaluator" / f"labels_{split}.csv", "w", newline="") as handle:
                writer = csv.writer(handle)
                writer.writerow(["id", "label"])
                for row in rows:
                    writer.writerow([ids[row], int(digits.target[row])])


if __name__ == "__main__":
    main()
