"""`manage.py import_mlgym_traj PATH... [--create-task]`: import MLGym .traj files (or folders holding
them) as runs. A bad file is one line (file, line, field) and writes nothing; the others import."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from benchmark.runs.trajectories import TrajImportError, traj_import_paths


class Command(BaseCommand):
    help = "Import MLGym trajectories (.traj files, or folders searched for them). Idempotent per file content."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("paths", nargs="+")
        parser.add_argument("--owner", help="username that owns the imported runs (default: none, admins see them)")
        parser.add_argument(
            "--create-task",
            action="store_true",
            help="create a stub task for a task id that is not known (else such a file is an error)",
        )

    def handle(
        self, *args: Any, paths: list[str], owner: str | None = None, create_task: bool = False, **options: Any
    ) -> None:
        user = None
        if owner:
            user = get_user_model().objects.filter(username=owner).first()
            if user is None:
                raise CommandError(f"--owner: no user named {owner!r}")
        try:
            summary = traj_import_paths(paths=paths, owner=user, stdout=self.stdout, create_task=create_task)
        except TrajImportError as exc:  # a path that does not exist: nothing was imported
            raise CommandError(str(exc)) from None
        if summary["failed"]:
            self.stderr.write(f"{summary['failed']} file(s) could not be imported (see above)")
