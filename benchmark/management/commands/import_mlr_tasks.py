"""`manage.py import_mlr_tasks DIR`: the MLR-Bench research tasks, with the data faults found in them."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from benchmark.research.tasks import import_mlr_tasks


class Command(BaseCommand):
    help = "Import the MLR-Bench tasks from DIR (a clone of the MLR-Bench repository, its data, or its tasks/ folder)."

    def add_arguments(self, parser) -> None:  # type: ignore[no-untyped-def]
        parser.add_argument("dir", help="MLR-Bench repository root or its tasks/ folder")

    def handle(self, *args, **options) -> None:  # type: ignore[no-untyped-def]
        report = import_mlr_tasks(options["dir"])
        for line in report.lines():
            style = (
                self.style.ERROR
                if line.startswith("ERROR")
                else self.style.WARNING
                if line.startswith("FAULT")
                else str
            )
            self.stdout.write(style(line))
        if not report.tasks:
            raise CommandError(f"no MLR-Bench task imported from {options['dir']}")
