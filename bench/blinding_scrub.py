"""Benchmark: scrubbing system names from what a reviewer opens, on every released MLR-Bench text.

Run: python bench/blinding_scrub.py [--data ../shared/mlrbench] [--repeat R]

The texts are every text file of the 30 released end-to-end runs (stage texts, papers, the coding
agent's trace, results, logs, code: what a reviewer reads as the item or its supplementary
material), scrubbed with the names of a campaign over all three backbones. Compared in the same run:
- `word`: the scrubber before identifiers were covered (a name only as a whole word);
- `identifiers, no prefilter`: names also at CamelCase humps and snake_case parts;
- `identifiers` (what Referee uses): the same, with a first-letter test before the boundary tests.
Printed: MB/s per variant, the largest file's time, and how many names each variant finds (the
identifier-aware ones find more: AnthropicClient, OpenAILLM...).
"""

from __future__ import annotations

import argparse
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

from review.blinding import scrubbing  # noqa: E402

LABELS = ("claude", "gemini", "o4-mini", "claude-3-7-sonnet-20250219", "google/gemini-2.5-pro-preview",
          "o4-mini-2025-04-16", "Claude Code (released run)")  # fmt: skip


def texts(root: Path) -> list[tuple[str, str]]:
    out = []
    for run in sorted((root / "agent_results").glob("end2end_*/*")):
        for path in sorted(run.rglob("*")):
            if path.is_file() and path.suffix.lower() in scrubbing.TEXT_EXTENSIONS:
                out.append((str(path.relative_to(root)), path.read_text(encoding="utf-8", errors="replace")))
    return out


def variants(names: tuple[str, ...]) -> dict[str, re.Pattern[str]]:
    alternatives = "|".join(re.escape(n) for n in names)
    word = re.compile(
        rf"(?:(?<![A-Za-z0-9])|(?<=\\[ntr]))(?:{alternatives})(?:[-_.][A-Za-z0-9]+)*(?![A-Za-z0-9])", re.IGNORECASE
    )
    no_prefilter = re.compile(rf"{scrubbing._START}(?i:{alternatives}){scrubbing._TAIL}")
    return {"word": word, "identifiers, no prefilter": no_prefilter, "identifiers": scrubbing.name_pattern(names)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = Path(__file__).resolve().parents[2] / "shared" / "mlrbench"
    parser.add_argument("--data", type=Path, default=Path(os.environ.get("MLRBENCH_DIR") or default))
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    corpus = texts(args.data)
    if not corpus:
        sys.exit(f"no released runs under {args.data}/agent_results (set --data or MLRBENCH_DIR)")
    names = tuple(scrubbing.system_names(*LABELS))
    total = sum(len(t) for _, t in corpus)
    largest = max(corpus, key=lambda item: len(item[1]))
    print(f"{len(corpus)} files, {total / 1e6:.1f} MB; largest {largest[0]} ({len(largest[1]) / 1e6:.2f} MB)")
    print(f"names: {', '.join(names)}")
    print(f"{'variant':28} {'MB/s (median)':>14} {'largest file ms':>16} {'names found':>12}")
    for label, pattern in variants(names).items():
        rates, largest_ms = [], []
        found = sum(len(pattern.findall(text)) for _, text in corpus)
        for _ in range(args.repeat):
            start = time.perf_counter()
            for _, text in corpus:
                pattern.sub(scrubbing.SCRUBBED, text)
            rates.append(total / 1e6 / (time.perf_counter() - start))
            start = time.perf_counter()
            pattern.sub(scrubbing.SCRUBBED, largest[1])
            largest_ms.append((time.perf_counter() - start) * 1000)
        print(f"{label:28} {statistics.median(rates):14.1f} {statistics.median(largest_ms):16.1f} {found:12d}")


if __name__ == "__main__":
    main()
