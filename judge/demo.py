"""Demo data of the judge app: the version-1 rubrics, and the released MLR-Bench reviews when the data is there."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TextIO

from django.conf import settings

from judge.rubrics import rubric_load_defaults


def seed(stdout: TextIO) -> None:
    rubric_load_defaults(stdout=stdout)
    root = Path(settings.MLRBENCH_DIR) if getattr(settings, "MLRBENCH_DIR", "") else None
    if root is None or not (root / "agent_reviews").is_dir():
        stdout.write("MLR-Bench reviews: MLRBENCH_DIR is not set or has no agent_reviews/; skipped\n")
        return
    from importlib import import_module

    from benchmark.models import ResearchRun
    from judge.mlr_reviews import import_mlr_reviews

    # The reviews attach to the released runs' papers: import those first if benchmark's demo has not.
    if not ResearchRun.objects.filter(source=ResearchRun.Source.MLRBENCH).exists():
        try:
            import_module("benchmark.research.imports").import_mlr_runs(root, stdout=stdout)
        except (ModuleNotFoundError, AttributeError) as exc:
            stdout.write(f"MLR-Bench runs: importer unavailable ({exc}); reviews need them\n")
    import_mlr_reviews(root, stdout=_Summary(stdout))  # every fault: manage.py import_mlr_results DIR
    from judge.mlr_aiscientist import import_ai_scientist_reviews

    import_ai_scientist_reviews(root, stdout=_Summary(stdout))
    stepwise_seed(root, stdout)
    from judge.findings import findings_compute

    # The findings page audits 40 experiments and papers against their stored traces (seconds, cached):
    # done here so that its first visitor does not wait for it.
    started = time.perf_counter()
    findings_compute()
    stdout.write(f"MLR-Bench findings: computed in {time.perf_counter() - started:.1f} s (/judge/findings/)\n")


def stepwise_seed(root: Path, stdout: TextIO) -> None:
    """The stepwise ideas and proposals with both judges' reviews, once (about ten seconds)."""
    if not (root / "agent_results" / "ideas_and_proposals").is_dir():
        stdout.write("MLR-Bench stepwise results: no agent_results/ideas_and_proposals/; skipped\n")
        return
    from benchmark.models import ResearchRun

    if ResearchRun.objects.filter(source=ResearchRun.Source.STEPWISE).exists():
        stdout.write("MLR-Bench stepwise results: already imported (re-import: manage.py import_mlr_stepwise DIR)\n")
        return
    from importlib import import_module

    from judge.mlr_stepwise import import_stepwise_reviews

    results = import_module("benchmark.research.stepwise").import_stepwise_results(root, stdout=_Summary(stdout))
    reviews = import_stepwise_reviews(root)
    stdout.write(f"MLR-Bench stepwise results: {results.imported} ideas and proposals, {reviews.total} reviews\n")


class _Summary:
    """Only the first line of an import report (its faults are on the pages and in the command's output)."""

    def __init__(self, out: TextIO) -> None:
        self.out, self.done = out, False

    def write(self, text: str) -> None:
        if not self.done:
            self.out.write(text)
            self.done = True
