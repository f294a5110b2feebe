"""manage.py import_mlr_stepwise DIR: MLR-Bench's stepwise ideas and proposals and both judges' reviews of them."""

from __future__ import annotations

from importlib import import_module
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from judge.mlr_stepwise import import_stepwise_reviews


class Command(BaseCommand):
    help = (
        "Import MLR-Bench's stepwise results (agent_results/ideas_and_proposals/: the ideas and proposals of six "
        "models on 201 tasks) as research artifacts, and the judges' reviews of them "
        "(agent_reviews/idea_proposal_reviews_<judge>/) as judgments. DIR is ../shared/mlrbench or a clone of the "
        "MLR-Bench repository. Idempotent; exits non-zero when DIR holds nothing to import."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("dir", type=Path)

    def handle(self, *args: Any, dir: Path, **options: Any) -> None:
        if not dir.is_dir():
            raise CommandError(f"{dir}: no such folder")
        # The artifacts belong to the benchmark app (judge depends on benchmark, not the reverse).
        results = import_module("benchmark.research.stepwise").import_stepwise_results(dir, stdout=self.stdout)
        reviews = import_stepwise_reviews(dir, stdout=self.stdout)
        if not results.imported and not reviews.total:
            raise CommandError(f"nothing imported from {dir}: {'; '.join(results.errors + reviews.problems[:1])}")
        self.stdout.write(
            self.style.SUCCESS(f"{results.imported} stepwise artifacts, {reviews.total} judgments in place")
        )
