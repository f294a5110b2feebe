"""manage.py audit_fabrication [RUN_CODE ...] [--released]: check every results number of a paper against its run's files."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from benchmark.models import Artifact, ResearchRun
from benchmark.research.fabrication import audit_paper


class Command(BaseCommand):
    help = (
        "Fabrication audit (deterministic, no model call): every number in a paper's results sections and tables "
        "is looked for in its run's execution outputs, logs and result files; numbers found nowhere are flagged "
        "with their sentence. Results are stored on the paper and shown on its page and in the judge lab."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("runs", nargs="*", help="research run codes")
        parser.add_argument("--released", action="store_true", help="every imported MLR-Bench end-to-end run")

    def handle(self, *args: Any, runs: list[str], released: bool, **options: Any) -> None:
        papers = Artifact.objects.filter(stage=Artifact.Stage.PAPER, status=Artifact.Status.DONE)
        if released:
            papers = papers.filter(research_run__source=ResearchRun.Source.MLRBENCH)
        elif runs:
            papers = papers.filter(research_run__code__in=runs)
        else:
            raise CommandError("give research run codes or --released")
        if not papers.exists():
            raise CommandError("no finished paper to audit")
        for paper in papers.select_related("research_run__task").order_by("research_run__task__slug"):
            result = audit_paper(paper)
            run = paper.research_run
            self.stdout.write(
                f"{run.task.slug}/{run.backbone}: {result['claims']} numbers, {result['found']} found, "
                f"{result['flagged']} flagged{' (' + result['note'] + ')' if result['note'] else ''}"
            )
