"""Accuracy of submission.csv (id,label) on the hidden labels of a split."""

import argparse
import csv
from pathlib import Path

from arena import emit, fail


def read_submission(path: str) -> dict[str, str]:
    try:
        with open(path, newline="") as handle:
            reader = csv.DictReader(handle)
            if not reader.fieldnames or not {"id", "label"} <= set(reader.fieldnames):
                fail(f"{path} must have the columns id,label (found {reader.fieldnames})")
            predictions: dict[str, str] = {}
            for line, row in enumerate(reader, start=2):
                key = (row["id"] or "").strip()
                if key in predictions:
                    fail(f"{path} line {line}: id {key} appears twice")
                predictions[key] = (row["label"] or "").strip()
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
        labels = {row["id"]: row["label"] for row in csv.DictReader(handle)}
    missing = [key for key in labels if key not in predictions]
    if missing:
        fail(
            f"{args.submission} has no prediction for {len(missing)} of the {len(labels)} {args.split} ids (e.g. {missing[0]})"
        )
    correct = 0
    for key, label in labels.items():
        try:
            correct += int(float(predictions[key])) == int(label)
        except (ValueError, OverflowError):  # OverflowError: inf, which int() cannot take
            fail(f"{args.submission}: id {key} has the label {predictions[key]!r}, not an integer")
    emit({"accuracy": correct / len(labels), "rows": len(labels)})


if __name__ == "__main__":
    main()
