from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from benchmark.models import Task
from benchmark.tasks.baselines import baseline_compute


class Command(BaseCommand):
    help = (
        "Run each current runnable task's baseline through the isolated evaluator (dev and test) and store "
        "the scores on that task version. Failures are stored and reported, never replaced by a number."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--task", help="slug of one task")
        parser.add_argument(
            "--wait",
            type=float,
            metavar="SECONDS",
            help="how long a GPU task's baseline waits for this host's GPUs while runs or other baselines hold them "
            "(default GPU_LEASE_WAIT); a CPU task never waits",
        )

    def handle(self, *args, task: str | None = None, wait: float | None = None, **options) -> None:
        if wait is not None and wait < 0:
            raise CommandError(f"--wait must be 0 or more seconds, not {wait:g}")
        tasks = Task.objects.filter(is_current=True).order_by("slug")
        if task:
            tasks = tasks.filter(slug=task)
            if not tasks.exists():
                raise CommandError(f"no current task with slug {task!r}")
        else:
            tasks = [t for t in tasks if t.config.get("runnable")]
        failed = 0
        for current in tasks:
            scores = baseline_compute(task=current, gpu_wait=wait)
            if scores.get("error"):
                failed += 1
                self.stderr.write(f"{current.slug}: FAILED: {scores['error']}")
            else:
                self.stdout.write(
                    f"{current.slug}: {current.metric} dev {scores['dev']['primary']:.6g}, test {scores['test']['primary']:.6g}"
                )
        if failed:
            raise CommandError(f"{failed} baseline(s) failed")
