"""`manage.py import_mlgym_results DIR`: MLGym's released runs as Referee runs of methods
(benchmark.leaderboards.imports)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from benchmark.leaderboards.imports import mlgym_results_import


class Command(BaseCommand):
    help = (
        "Import MLGym's released results.json files (and the .traj beside them) as runs of methods; "
        "runs a .traj import created first are completed, never duplicated."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("directory", help="e.g. ../shared/mlgym/trajectories/mlgym_bench_v0")

    def handle(self, *args: Any, **options: Any) -> None:
        directory = Path(options["directory"])
        if not directory.is_dir():
            raise CommandError(f"{directory}: not a directory")
        report = mlgym_results_import(directory=directory)
        if report.imported + report.completed + report.skipped_existing == 0:
            why = "; ".join(str(i) for i in report.issues[:5])  # a truncated file is named, not only counted
            raise CommandError(f"{directory}: no readable results.json found" + (f" ({why})" if why else ""))
        self.stdout.write(
            f"imported {report.imported} runs ({report.scores} scores), "
            + (
                f"completed {report.completed} runs imported before without their results.json part, "
                if report.completed
                else ""
            )
            + f"attached {report.trajectories} trajectories ({report.steps} steps), "
            f"skipped {report.skipped_existing} already imported"
            + (f"; created tasks: {', '.join(sorted(report.tasks_created))}" if report.tasks_created else "")
        )
        if report.issues:
            self.stderr.write(f"{len(report.issues)} data issues (kept what was valid):")
            for issue in report.issues[:20]:
                self.stderr.write(f"  {issue}")
            if len(report.issues) > 20:
                self.stderr.write(f"  ... and {len(report.issues) - 20} more")
