"""manage.py import_mlr_results DIR: everything MLR-Bench released that benchmark and judge hold, in one command."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from benchmark.research.aiscientist import import_ai_scientist
from benchmark.research.imports import import_mlr_runs
from benchmark.research.release import unread_folders
from benchmark.research.stepwise import import_stepwise_results
from benchmark.research.writeups import import_writeups
from judge.mlr_aiscientist import import_ai_scientist_reviews
from judge.mlr_reviews import import_mlr_reviews
from judge.mlr_stepwise import import_stepwise_reviews
from judge.rubrics import rubric_load_defaults


class Command(BaseCommand):
    help = (
        "Import what MLR-Bench released (DIR: ../shared/mlrbench or a clone of the repository): the end-to-end "
        "runs, the stepwise ideas and proposals, the stepwise experiments and write-ups of any coding agent, the "
        "AI Scientist v2 papers, and every judge review of them (end-to-end with and without code, stage "
        "rubrics, hallucination) as judgments. Idempotent; names every folder it does not read; exits non-zero "
        "when DIR holds nothing to import. The human study (human_eval/) is imported by import_human_reviews and "
        "import_hallucination_labels (the review app)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("dir", type=Path)
        parser.add_argument(
            "--skip-stepwise", action="store_true", help="leave out the 2,412 stepwise ideas and proposals"
        )

    def handle(self, *args: Any, dir: Path, skip_stepwise: bool = False, **options: Any) -> None:
        if not dir.is_dir():
            raise CommandError(f"{dir}: no such folder")
        rubric_load_defaults()
        out = self.stdout
        runs = import_mlr_runs(dir, stdout=out)
        writeups = import_writeups(dir, stdout=out)
        scientist = import_ai_scientist(dir, stdout=out)
        imported = len(runs.runs) + len(writeups.experiments) + len(scientist.runs)
        if not skip_stepwise and (dir / "agent_results" / "ideas_and_proposals").is_dir():
            imported += import_stepwise_results(dir, stdout=out).imported
            judgments = import_stepwise_reviews(dir, stdout=out).total
        else:
            judgments = 0
        judgments += import_mlr_reviews(dir, stdout=out).total
        judgments += import_ai_scientist_reviews(dir, stdout=out).total
        for folder in unread_folders(dir):
            out.write(f"NOT READ {dir / folder}: no importer reads this folder\n")
        if not imported and not judgments:
            reasons = runs.errors[:1] + writeups.errors[:1] + scientist.errors[:1] or ["no runs, no reviews"]
            raise CommandError(f"nothing imported from {dir}: {'; '.join(reasons)}")
        self.stdout.write(
            self.style.SUCCESS(f"{imported} runs or artifacts, {judgments} judgment(s) in place from {dir}")
        )
