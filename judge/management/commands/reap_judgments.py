"""`manage.py reap_judgments [--loop]`: fail judgments whose worker died, so none stays "running" forever."""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand
from django.utils import timezone

from judge.models import Judgment

JOB = "judge.jobs.run_judgment"
DIED = "the judge worker stopped before finishing this judgment (no score recorded); request it again"


class Command(BaseCommand):
    help = "Mark judgments as failed when no live judge worker is running them. No score is invented."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--loop", action="store_true", help="keep checking every --interval seconds")
        parser.add_argument("--interval", type=float, default=60.0)

    def handle(self, *args: Any, loop: bool = False, interval: float = 60.0, **options: Any) -> None:
        while True:
            try:
                reaped = self.reap_once()
            except Exception as exc:  # Redis or the database briefly away: a sweeper keeps sweeping
                if not loop:
                    raise
                self.stderr.write(f"reap_judgments: this pass failed, next in {interval:g} s: {exc}")
                reaped = []
            if reaped:
                self.stdout.write(
                    f"failed {len(reaped)} abandoned judgment(s): {', '.join(str(j.code) for j in reaped)}"
                )
            if not loop:
                return
            time.sleep(interval)

    def reap_once(self) -> list[Judgment]:
        # Running judgments first, then the jobs in progress: a worker sets its current job before the
        # judgment is claimed, so a judgment seen running here is held by a worker listed below if it lives.
        running = list(Judgment.objects.filter(status=Judgment.Status.RUNNING))
        if not running:
            return []
        held = self.judgments_in_progress()
        return [judgment for judgment in running if judgment.pk not in held and self.mark_failed(judgment)]

    def judgments_in_progress(self) -> set[int]:
        import django_rq
        from rq import Worker

        queue = django_rq.get_queue("judge")
        held: set[int] = set()
        for worker in Worker.all(queue=queue):
            job = worker.get_current_job()
            if job is not None and job.func_name == JOB and job.args:
                held.add(int(job.args[0]))
        return held

    def mark_failed(self, judgment: Judgment) -> bool:
        # Conditional: a judgment that finished meanwhile keeps its result.
        return bool(
            Judgment.objects.filter(pk=judgment.pk, status=Judgment.Status.RUNNING).update(
                status=Judgment.Status.FAILED, error=DIED, finished_at=timezone.now()
            )
        )
