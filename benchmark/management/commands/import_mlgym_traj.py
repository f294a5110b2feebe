"""`manage.py import_mlgym_traj PATH...`: import MLGym .traj files (or folders holding them) as runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from benchmark.models import RunGroup
from benchmark.trajectories import TrajImportError, traj_import


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

    def handle(self, *args: Any, paths: list[str], owner: str | None = None, **options: Any) -> None:
        user = None
        if owner:
            user = get_user_model().objects.filter(username=owner).first()
            if user is None:
                raise CommandError(f"--owner: no user named {owner!r}")
        summary = traj_import_paths(paths=paths, owner=user, stdout=self.stdout)
        if summary["failed"]:
            self.stderr.write(f"{summary['failed']} file(s) could not be imported (see above)")


def traj_import_paths(*, paths: list[str], owner: Any = None, stdout: Any) -> dict[str, int]:
    """Import every file; a bad file is reported by name and field, the others still import."""
    files = traj_files(paths)
    group = None
    counts = {"imported": 0, "existing": 0, "failed": 0}
    for file in files:
        try:
            if group is None:
                group, _ = RunGroup.objects.get_or_create(name="MLGym released trajectories", owner=owner)
            run, created = traj_import(file, owner=owner, group=group)
        except TrajImportError as exc:
            counts["failed"] += 1
            stdout.write(f"  ! {exc}")
            continue
        counts["imported" if created else "existing"] += 1
    stdout.write(
        f"  MLGym trajectories: {counts['imported']} imported, {counts['existing']} already present,"
        f" {counts['failed']} failed, of {len(files)}"
    )
    return counts
