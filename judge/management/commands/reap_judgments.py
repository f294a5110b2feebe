"""`manage.py reap_judgments [--loop]`: fail judgments whose worker died, so none stays "running" forever."""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand
from django.utils import timezone

from judge.experiments import experiment_refresh
from judge.models import Judgment, PairwiseJudgment

JOB = "judge.jobs.run_judgment"
PAIRWISE_JOB = "judge.jobs.run_pairwise"
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
        pairs = list(PairwiseJudgment.objects.filter(status=Judgment.Status.RUNNING))
        if not running and not pairs:
            return []
        held = self.judgments_in_progress()
        reaped = [j for j in running if j.pk not in held.get(JOB, set()) and self.mark_failed(Judgment, j)]
        reaped_pairs = [
            p for p in pairs if p.pk not in held.get(PAIRWISE_JOB, set()) and self.mark_failed(PairwiseJudgment, p)
        ]
        # An experiment whose last judgment was reaped is finished now: say so instead of "running".
        for experiment_id in {j.experiment_id for j in [*reaped, *reaped_pairs] if j.experiment_id}:
            experiment_refresh(experiment_id=experiment_id)
        return [*reaped, *reaped_pairs]

    def judgments_in_progress(self) -> dict[str, set[int]]:
        import django_rq
        from rq import Worker

        queue = django_rq.get_queue("judge")
        held: dict[str, set[int]] = {}
        for worker in Worker.all(queue=queue):
            job = worker.get_current_job()
            if job is not None and job.func_name in (JOB, PAIRWISE_JOB) and job.args:
                held.setdefault(job.func_name, set()).add(int(job.args[0]))
        return held

    def mark_failed(self, model: Any, row: Any) -> bool:
        # Conditional: a judgment that finished meanwhile keeps its result.
        return bool(
            model.objects.filter(pk=row.pk, status=Judgment.Status.RUNNING).update(
                status=Judgment.Status.FAILED, error=DIED, finished_at=timezone.now()
            )
        )
