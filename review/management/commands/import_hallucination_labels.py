"""manage.py import_hallucination_labels CSV [--backbone claude|gemini|o4-mini]"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from review.io.hallucination import BACKBONES, LabelFileError, import_hallucination_labels


class Command(BaseCommand):
    help = (
        "Import MLR-Bench's human hallucination check (human_eval/Hallucination Check.csv) as labels of four kinds, "
        "reporting missing and duplicated rows. The CSV names the agent, not the backbone: --backbone links the "
        "MLR Agent rows to that backbone's imported papers (without it they are kept unlinked)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("csv")
        parser.add_argument("--backbone", choices=BACKBONES, default=None)

    def handle(self, *args: Any, csv: str, backbone: str | None, **options: Any) -> None:
        try:
            report = import_hallucination_labels(csv, backbone=backbone, stdout=self.stdout)
        except LabelFileError as exc:
            raise CommandError(str(exc)) from exc
        if not report.rows:
            raise CommandError(f"{csv}: no rows")
