"""`manage.py aup --results DIR [--models a,b] [--format table|json]`: MLGym AUP from files.

Reads every results.json under DIR and prints, per method (baseline included), the AUP for
best attempt and best submission, with tau_max and the method set they depend on. The
leaderboard page uses the same functions (benchmark.leaderboards.mlgym_results / benchmark.leaderboards.scoring).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from benchmark.leaderboards.mlgym_results import aup_report, read_results_dir, results_leaderboard
from benchmark.leaderboards.scoring import Scoring


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


class Command(BaseCommand):
    help = "Print MLGym AUP (best attempt, best submission) per method from a results directory."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--results", required=True, help="directory holding run folders")
        parser.add_argument("--models", default="", help="comma-separated methods (default: all found)")
        parser.add_argument("--format", choices=["table", "json"], default="table")

    def handle(self, *args: Any, **options: Any) -> None:
        directory = Path(options["results"])
        if not directory.is_dir():
            raise CommandError(f"--results {directory}: not a directory")
        models = [m.strip() for m in options["models"].split(",") if m.strip()] or None
        results = read_results_dir(directory, models=models)
        if not results.runs:
            why = "; ".join(str(i) for i in results.issues[:5])  # a truncated file is named, not only counted
            raise CommandError(f"--results {directory}: no readable results.json found" + (f" ({why})" if why else ""))
        board = results_leaderboard(results, models=models)
        report = aup_report(board, results_dir=str(directory))
        if options["format"] == "json":
            self.stdout.write(json.dumps(report, indent=2))
            return
        width = max(len(m) for m in board.methods)
        self.stdout.write(f"{'method':<{width}}  best attempt  best submission")
        ranked = sorted(
            board.methods,
            key=lambda m: -(board.results[Scoring.BEST_ATTEMPT].aup[m] or 0.0),
        )
        for m in ranked:
            row = report["aup"][m]
            self.stdout.write(f"{m:<{width}}  {_fmt(row['best_attempt']):>12}  {_fmt(row['best_submission']):>15}")
        self.stdout.write(
            f"tau_max = {_fmt(board.tau_max)} over {len(board.tasks)} tasks and "
            f"{len(board.methods)} methods (AUP depends on both)"
        )
        if board.issues:
            # Group by kind (numbers blanked) so 188 "no scores" runs read as one line.
            kinds = Counter(f"{i.field}: {re.sub(r'-?[0-9][0-9.e+-]*', '#', i.message)}" for i in board.issues)
            self.stderr.write(f"{len(board.issues)} data issues (each listed by --format json):")
            for kind, count in kinds.most_common():
                self.stderr.write(f"  {count:4d} x {kind}")
