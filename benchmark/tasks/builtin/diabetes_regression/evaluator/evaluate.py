"""R^2 of submission.csv (id,target) on the hidden targets of a split."""

import argparse
import csv
import math
from pathlib import Path

from arena import emit, fail


def read_submission(path: str) -> dict[str, str]:
    try:
        with open(path, newline="") as handle:
            reader = csv.DictReader(handle)
            if not reader.fieldnames or not {"id", "target"} <= set(reader.fieldnames):
                fail(f"{path} must have the columns id,target (found {reader.fieldnames})")
            predictions: dict[str, str] = {}
            for line, row in enumerate(reader, start=2):
                key = (row["id"] or "").strip()
                if key in predictions:
                    fail(f"{path} line {line}: id {key} appears twice")
                predictions[key] = (row["target"] or "").strip()
            return predictions
    except FileNotFoundError:
        fail(f"{path} not found")
    except (csv.Error, UnicodeDecodeError) as exc:
        fail(f"{path} is not a readable CSV file: {exc}")
    return {}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--split", choices=["dev", "test"], required=True)
    parser.add_argument("--submission", default="submission.csv")
    args = parser.parse_args()
    predictions = read_submission(args.submission)
    with open(Path(__file__).resolve().parent / f"labels_{args.split}.csv", newline="") as handle:
        targets = {row["id"]: float(row["target"]) for row in csv.DictReader(handle)}
    missing = [key for key in targets if key not in predictions]
    if missing:
        fail(
            f"{args.submission} has no prediction for {len(missing)} of the {len(targets)} {args.split} ids (e.g. {missing[0]})"
        )
    predicted = {}
    for key in targets:
        try:
            value = float(predictions[key])
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            fail(f"{args.submission}: id {key} has the prediction {predictions[key]!r}, not a finite number")
        predicted[key] = value
    mean = sum(targets.values()) / len(targets)
    try:
        residual = sum((targets[key] - predicted[key]) ** 2 for key in targets)
    except OverflowError:  # a finite prediction such as 1e308 whose square is not
        fail(f"{args.submission}: the predictions are so large that their squared error is not a finite number")
    total = sum((value - mean) ** 2 for value in targets.values())
    rmse = math.sqrt(residual / len(targets))
    emit({"r2": 1 - residual / total, "rmse": rmse, "rows": len(targets)})


if __name__ == "__main__":
    main()
