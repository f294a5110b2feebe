from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from benchmark.tasks.loader import BUILTIN_DIR, tasks_sync


class Command(BaseCommand):
    help = (
        "Load task folders (task.yaml + files) or MLGym task configs; a changed folder becomes a new "
        "version. Without arguments: the built-in tasks and MLGYM_DIR when set. Bad files are reported "
        "(file and field) and skipped; the valid ones load."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("paths", nargs="*", help="task folder, folder of task folders, MLGym checkout or config")

    def handle(self, *args, paths: list[str], **options) -> None:
        roots = [Path(p) for p in paths] or [BUILTIN_DIR] + (
            [Path(settings.MLGYM_DIR)] if getattr(settings, "MLGYM_DIR", "") else []
        )
        failed = 0
        for root in roots:
            if not root.exists():
                self.stderr.write(f"{root}: no such file or folder")
                failed += 1
                continue
            tasks, errors = tasks_sync(root)
            for task in tasks:
                note = f" (data missing: {task.data_detail.splitlines()[0]})" if task.data_status == "missing" else ""
                if not note and not task.config.get("runnable"):
                    note = f" (not runnable: {task.config.get('not_runnable_reason', '')})"
                self.stdout.write(f"{task.slug}@{task.version_hash[:8]} {task.metric} ({task.direction}){note}")
            for error in errors:
                self.stderr.write(str(error))
            failed += len(errors)
        if failed:
            raise CommandError(f"{failed} task file(s) could not be loaded (the others were)")
