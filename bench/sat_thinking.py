"""Benchmark: what the 3-SAT task's thinking-time charge does to plain heuristics and to searches
hidden inside the heuristic, through the real evaluation (a sandbox for the evaluator, one for
the submission).

    python bench/sat_thinking.py [--runs 3] [--split test] [--backend docker]

Variants: the starter heuristic; Jeroslow-Wang (the "same branching rule"); SOLVE_INSIDE, a whole
DPLL search with that rule inside every call; CACHED, that search once per instance, its model
kept between calls (tests/benchmark/hidden_state_attacks.py). Per variant and run it prints the
score (Decisions), the count alone (solver_decisions), the charge, the heuristic's and the echo's
milliseconds per instance, and the machine's load average, which moves the timed part. Target:
the starter and Jeroslow-Wang charged ~0, both searches scoring worse than Jeroslow-Wang.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402

from benchmark.models import Task  # noqa: E402
from benchmark.tasks.evaluation import artifacts_evaluate  # noqa: E402
from benchmark.tasks.loader import BUILTIN_DIR, task_load  # noqa: E402
from tests.benchmark.hidden_state_attacks import CACHED, JW, SOLVE_INSIDE  # noqa: E402

COLUMNS = ("Decisions", "solver_decisions", "time_charge", "heuristic_ms", "calls")


def unsaved_task() -> Task:
    """The built-in task as a row never saved (the evaluation only reads its fields)."""
    spec = task_load(BUILTIN_DIR / "sat_solver")
    return Task(
        slug=spec.slug,
        version_hash=spec.content_hash,
        kind=spec.kind,
        title=spec.title,
        config=spec.config,
        metric=spec.metric,
        direction=spec.direction,
        path=spec.path,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--split", choices=["dev", "test"], default="test")
    parser.add_argument("--backend", default=None, help="docker or bwrap (default: the configured one)")
    args = parser.parse_args()
    if args.backend:
        settings.SANDBOX_BACKEND = args.backend
    task = unsaved_task()
    variants = {
        "starter": (BUILTIN_DIR / "sat_solver" / "workspace" / "heuristic.py").read_bytes(),
        "jeroslow-wang": JW.encode(),
        "solve-inside": SOLVE_INSIDE.encode(),
        "cached-solve": CACHED.encode(),
    }
    print(f"{'variant':<14} run " + " ".join(f"{c:>16}" for c in COLUMNS) + "   load")
    for run in range(args.runs):
        for name, source in variants.items():
            result = artifacts_evaluate(task=task, artifacts={"heuristic.py": source}, split=args.split)
            load = os.getloadavg()[0]
            if result.error:
                print(f"{name:<14} {run:>3} failed: {result.error}")
                continue
            values = " ".join(f"{result.metrics[c]:>16.2f}" for c in COLUMNS)
            print(f"{name:<14} {run:>3} {values} {load:6.1f}", flush=True)


if __name__ == "__main__":
    main()
