"""`manage.py import_mlgym_traj PATH... [--create-task]`: import MLGym .traj files (or folders holding
them) as runs. A bad file is one line (file, line, field) and writes nothing; the others import."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from benchmark.models import RunGroup
from benchmark.runs.trajectories import TrajImportError, traj_import


def traj_files(paths: list[str]) -> list[Path]:
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files += sorted(path.rglob("*.traj"))
        elif path.exists():
            files.append(path)
        else:
            raise CommandError(f"{path}: no such file or folder")
    return files


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
        summary = traj_import_paths(paths=paths, owner=user, stdout=self.stdout, create_task=create_task)
        if summary["failed"]:
            self.stderr.write(f"{summary['failed']} file(s) could not be imported (see above)")


def traj_import_paths(*, paths: list[str], owner: Any = None, stdout: Any, create_task: bool = False) -> dict[str, int]:
    """Import every file; a bad file is reported by name, line and field, the others still import."""
    files = traj_files(paths)
    group = None
    counts = {"imported": 0, "existing": 0, "failed": 0}
    for file in files:
        try:
            with transaction.atomic():  # a file that fails leaves nothing, not even the group
                if group is None:
                    group, _ = RunGroup.objects.get_or_create(name="MLGym released trajectories", owner=owner)
                run, created = traj_import(file, owner=owner, group=group, create_task=create_task)
        except TrajImportError as exc:
            if group is not None and not RunGroup.objects.filter(pk=group.pk).exists():
                group = None  # rolled back with the file
            counts["failed"] += 1
            stdout.write(f"  ! {exc}")
            continue
        counts["imported" if created else "existing"] += 1
        if created:
            for issue in run.params.get("import_issues") or []:
                stdout.write(f"  ~ {issue}")
    stdout.write(
        f"  MLGym trajectories: {counts['imported']} imported, {counts['existing']} already present,"
        f" {counts['failed']} failed, of {len(files)}"
    )
    return counts
