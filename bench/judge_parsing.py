"""Benchmark: validating judge replies, on the 60 released MLR-Bench reviews and messy variants of them.

Run: python bench/judge_parsing.py [--data ../shared/mlrbench] [--repeat R]

Each released review is used as is (clean) and rewritten the ways judge models break JSON: wrapped
in a code fence with prose around it, trailing commas, LaTeX in a justification (`\\alpha`,
`\\frac`), smart quotes as delimiters. Compared in the same run with the obvious alternative,
`json.loads` followed by the same schema: how many replies each accepts, and the time per reply.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from judge.models import Rubric  # noqa: E402
from judge.parsing import ReplyError, reply_parse, reply_schema  # noqa: E402
from judge.rubric_data import RUBRICS  # noqa: E402


def messy_variants(text: str) -> dict[str, str]:
    data = json.loads(text)
    first = next(k for k, v in data.items() if isinstance(v, dict) and "justification" in v)
    latex = json.loads(text)
    latex[first]["justification"] += " The bound uses LATEX_ALPHA and LATEX_FRAC."
    latex_text = (
        json.dumps(latex, indent=2).replace("LATEX_ALPHA", "$\\alpha$").replace("LATEX_FRAC", "$\\frac{1}{2}$")
    )  # raw single backslashes: "\a" is invalid JSON, "\f" silently becomes a form feed
    commas = json.dumps(data, indent=2).replace("\n  }", ",\n  }").replace("\n}", ",\n}")
    smart = _smart_quotes(json.dumps(data, ensure_ascii=False))
    return {
        "clean": text,
        "fenced + prose": f"Here is my review of the paper.\n\n```json\n{text}\n```\n\nI hope this helps.",
        "trailing commas": commas,
        "LaTeX in a string": latex_text,
        "smart quotes": smart,
    }


def _smart_quotes(text: str) -> str:
    """Every JSON delimiter quote as a typographic pair, as some models (and word processors) write them."""
    out, opening = [], True
    for part in re.split(r'((?<!\\)")', text):
        if part == '"':
            out.append("\u201c" if opening else "\u201d")
            opening = not opening
        else:
            out.append(part)
    return "".join(out)


def plain(text: str, rubric: Rubric) -> None:
    """The obvious alternative: strict json.loads, then the same schema (names mapped the same way)."""
    data = json.loads(text)
    aligned = {k.lower(): v for k, v in data.items()}
    if isinstance(aligned.get("confidence"), int):
        aligned["confidence"] = {"score": aligned["confidence"], "justification": ""}
    reply_schema(rubric).model_validate(aligned)


def main() -> None:
    parser = argparse.ArgumentParser()
    default = Path(__file__).resolve().parents[2] / "shared" / "mlrbench"
    parser.add_argument("--data", type=Path, default=default if default.is_dir() else Path("/work/shared/mlrbench"))
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    files = sorted((args.data / "agent_reviews").glob("subset_reviews_*/*/review_*.json"))
    if not files:
        sys.exit(f"no reviews under {args.data}/agent_reviews")
    entry = next(r for r in RUBRICS if r["stage"] == "end2end")
    rubric = Rubric(stage="end2end", version=1, name=entry["name"], dimensions=entry["dimensions"])
    variants: dict[str, list[str]] = {}
    for path in files:
        for name, text in messy_variants(path.read_text()).items():
            variants.setdefault(name, []).append(text)
    print(f"{len(files)} released reviews x {len(variants)} forms, {args.repeat} timed passes each\n")
    print(
        f"{'form':<20} {'Referee accepts':>16} {'json.loads accepts':>19} {'Referee us/reply':>17} {'json.loads us/reply':>20}"
    )
    for name, texts in variants.items():
        accepted = {"referee": 0, "plain": 0}
        timings: dict[str, list[float]] = {"referee": [], "plain": []}
        for label, fn in (("referee", reply_parse), ("plain", plain)):
            for attempt in range(args.repeat):
                start = time.perf_counter()
                ok = 0
                for text in texts:
                    try:
                        fn(text, rubric)
                        ok += 1
                    except (ReplyError, ValueError):
                        pass
                timings[label].append((time.perf_counter() - start) / len(texts) * 1e6)
                if attempt == 0:
                    accepted[label] = ok
        print(
            f"{name:<20} {accepted['referee']:>11}/{len(texts):<4} {accepted['plain']:>14}/{len(texts):<4}"
            f" {statistics.median(timings['referee']):>17.0f} {statistics.median(timings['plain']):>20.0f}"
        )


if __name__ == "__main__":
    main()
