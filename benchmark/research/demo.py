"""Demo step of the research pipeline: the released MLR-Bench tasks and runs when MLRBENCH_DIR is set.

Append `mlrbench_import` to benchmark.demo.STEPS (`manage.py seed_demo`, run by `make up`).
Idempotent: re-running refreshes fault notes and keeps artifact codes.
"""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from django.conf import settings

from benchmark.research.imports import import_mlr_runs
from benchmark.research.tasks import import_mlr_tasks


def mlrbench_import(stdout: TextIO) -> None:
    root = getattr(settings, "MLRBENCH_DIR", "")
    if not root or not Path(root).is_dir():
        stdout.write("  MLR-Bench: skipped (MLRBENCH_DIR not set)\n")
        return
    tasks = import_mlr_tasks(root)
    stdout.write(f"  {tasks.lines()[0]} (from {root})\n")
    for line in tasks.errors:
        stdout.write(f"  ! {line}\n")
    stdout.write(f"  MLR-Bench task data faults: {len(tasks.faults)} (listed on each task's page)\n")
    runs = import_mlr_runs(root, stdout=_FirstLines(stdout))
    for line in runs.errors:
        stdout.write(f"  ! {line}\n")


class _FirstLines:
    """Keeps the demo log short: the summary line of a report, not its every fault."""

    def __init__(self, out: TextIO) -> None:
        self.out, self.written = out, False

    def write(self, text: str) -> None:
        if not self.written:
            self.out.write(f"  {text}")
            self.written = True
