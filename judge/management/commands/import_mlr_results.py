from importlib import import_module
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from judge.mlr_reviews import import_mlr_reviews
from judge.rubrics import rubric_load_defaults


class Command(BaseCommand):
    help = (
        "Import MLR-Bench's released end-to-end runs (agent_results/) with their artifacts, and the two judges' "
        "reviews (agent_reviews/) as judgments. DIR is ../shared/mlrbench or a clone of the MLR-Bench repository. "
        "Idempotent. Exits non-zero when DIR holds nothing to import (the stepwise ideas and proposals are "
        "imported by import_mlr_stepwise)."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("dir", type=Path)

    def handle(self, *args, dir: Path, **options) -> None:
        if not dir.is_dir():
            raise CommandError(f"{dir}: no such folder")
        rubric_load_defaults()
        runs = None
        try:
            # The runs importer belongs to the benchmark app (judge depends on benchmark, not the reverse).
            runs_import = import_module("benchmark.research.imports").import_mlr_runs
        except (ModuleNotFoundError, AttributeError) as exc:
            self.stderr.write(f"runs not imported: benchmark.research.imports.import_mlr_runs is unavailable ({exc})")
        else:
            runs = runs_import(dir, stdout=self.stdout)
        report = import_mlr_reviews(dir, stdout=self.stdout)
        if (runs is None or not runs.runs) and report.total == 0:
            reasons = (runs.errors if runs is not None else []) or report.problems[:1] or ["no runs, no reviews"]
            raise CommandError(f"nothing imported from {dir}: {'; '.join(reasons)}")
        self.stdout.write(self.style.SUCCESS(f"{report.total} judgment(s) in place from {dir}"))
