"""`manage.py score_attempts [--run CODE ...] [--pending]`: score runs' validated attempts on the
test split (benchmark.runs.attempts), as the job after each run does; for a run whose job never
ran (the queue was down), was lost, or failed."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from benchmark.models import Run
from benchmark.runs.attempts import attempts_pending, attempts_score


class Command(BaseCommand):
    help = "Score runs' validated attempts on the test split (the job after a run does it)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--run", action="append", default=[], help="a run's code (repeatable)")
        parser.add_argument("--pending", action="store_true", help="every run whose scoring is not done")

    def handle(self, *args: Any, run: list[str], pending: bool, **options: Any) -> None:
        if not run and not pending:
            raise CommandError("name runs with --run CODE, or pass --pending")
        ids = []
        for code in run:
            found = Run.objects.filter(code=code).values_list("pk", flat=True).first() if _is_uuid(code) else None
            if found is None:
                raise CommandError(f"--run {code}: no such run")
            ids.append(found)
        if pending:
            ids += [pk for pk in attempts_pending() if pk not in ids]
        for pk in ids:
            scoring = attempts_score(run_id=pk)
            code = Run.objects.values_list("code", flat=True).get(pk=pk)
            best = scoring["best_attempt"]
            self.stdout.write(
                f"run {code}: {scoring['status']}, {len(scoring['attempts'])} attempt(s), "
                f"best attempt (test split) {'none' if best is None else f'{best:.6g}'}"
                + (f" ({scoring['error'][:200]})" if scoring.get("error") else "")
            )
        self.stdout.write(f"{len(ids)} run(s) scored")


def _is_uuid(value: str) -> bool:
    import uuid

    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True
