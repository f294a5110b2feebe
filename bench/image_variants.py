"""Sandbox start on a task's image variant, warm, beside the plain sandbox image (the obvious
alternative: installing the packages into the base image for every task).

    python bench/image_variants.py [--runs 10] [--requirement tabulate==0.9.0]

Builds the variant once if it is missing (its build time is printed, not counted), then alternates
starts on the two images: open a sandbox, run `true` in its shell, close it. Target: a variant's
warm start <= 1 s (DESIGN.md, MLGym's own tasks). Prints medians and p90 in seconds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from sandbox import SandboxSpec, conf, open_session  # noqa: E402
from sandbox.variants import variant_build  # noqa: E402

TARGET = 1.0


def start(image: str) -> float:
    started = time.perf_counter()
    with open_session(SandboxSpec(image=image)) as session:
        session.run("true", timeout=30)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--requirement", action="append", default=None)
    args = parser.parse_args()
    requirements = args.requirement or ["tabulate==0.9.0"]
    started = time.perf_counter()
    variant = variant_build(requirements, log=lambda line: None)
    print(f"variant {variant} ({', '.join(requirements)}) ready in {time.perf_counter() - started:.1f} s")
    base = conf.image()
    start(variant), start(base)  # warm: the first start of each pays for the page cache
    times: dict[str, list[float]] = {variant: [], base: []}
    for _ in range(args.runs):
        for image in (variant, base):
            times[image].append(start(image))
    for label, image in (("variant", variant), ("base image", base)):
        values = sorted(times[image])
        p90 = values[min(len(values) - 1, int(0.9 * len(values)))]
        print(f"{label:10} {image:40} median {statistics.median(values):.3f} s  p90 {p90:.3f} s  (n={len(values)})")
    ratio = statistics.median(times[variant]) / statistics.median(times[base])
    verdict = "meets" if statistics.median(times[variant]) <= TARGET else "misses"
    print(f"variant / base: {ratio:.2f}x; the variant's warm start {verdict} the {TARGET:.0f} s target")


if __name__ == "__main__":
    main()
