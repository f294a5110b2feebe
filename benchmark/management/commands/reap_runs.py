"""`manage.py reap_runs [--loop]`: mark runs whose worker died as interrupted, keeping their steps,
and re-queue (once) queued runs whose job is gone.

A running run is alive while its heartbeat key lives (benchmark.runs.heartbeat). Its key gone for
longer than RUN_HEARTBEAT_TTL since the claim means its process is gone (kill -9, a lost host): the
run is interrupted within about TTL + the reaper's interval, not after RQ's worker key expires.
A run claimed more recently than that falls back to RQ's word (the worker and its current job).
Runs executed by Slurm are first asked of Slurm: a job it ended (time limit, node failure,
preemption) ends its run with Slurm's state and reason (benchmark.runs.slurm.slurm_reap).
"""

from __future__ import annotations

import os
import time
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand
from django.utils import timezone

from benchmark.models import Run
from benchmark.runs import heartbeat, progress, queueing, slurm
from sandbox.conf import host_id

# A run whose worker is unknown to RQ and that has shown no sign of life for this long is dead.
STALE_AFTER = timedelta(minutes=10)


class Command(BaseCommand):
    help = "Mark runs as interrupted when the worker running them is gone. Every committed step is kept."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--loop", action="store_true", help="keep checking every --interval seconds")
        parser.add_argument("--interval", type=float, default=30.0)

    def handle(self, *args: Any, loop: bool = False, interval: float = 30.0, **options: Any) -> None:
        while True:
            try:
                for run, done in slurm.slurm_reap():
                    self.stdout.write(f"run {run.code}'s Slurm job {run.slurm_job_id} ended: {done}")
            except Exception as exc:  # the controller briefly away: the heartbeat check below still runs
                if not loop:
                    raise
                self.stderr.write(f"reap_runs: the Slurm check failed, next in {interval:g} s: {exc}")
            try:
                reaped = self.reap_once()
            except Exception as exc:  # Redis or the database briefly away: a sweeper keeps sweeping
                if not loop:
                    raise
                self.stderr.write(f"reap_runs: this pass failed, next in {interval:g} s: {exc}")
                reaped = []
            if reaped:
                self.stdout.write(f"interrupted {len(reaped)} run(s): {', '.join(str(r.code) for r in reaped)}")
            try:
                orphans = queueing.orphans_sweep()
            except Exception as exc:
                if not loop:
                    raise
                self.stderr.write(f"reap_runs: the queued-run check failed, next in {interval:g} s: {exc}")
                orphans = []
            for run, done in orphans:
                self.stdout.write(f"queued run {run.code} had no job: {done}")
            if not loop:
                return
            time.sleep(interval)

    def reap_once(self) -> list[Run]:
        # Running runs first, then the live workers: a run seen running here was claimed by a worker
        # that registered before the claim, so it is in the list read after (a worker that started
        # between the two reads would otherwise look dead). A run that finishes meanwhile is not
        # touched: mark_interrupted only changes a run that is still running.
        running = self.running_runs()
        if not running:
            return []
        live = self.live_workers()
        connection = self.connection()
        beating = heartbeat.beating_codes([run.code for run in running], connection)
        trusted = heartbeat.missing_keys_prove_death(connection)
        reaped = []
        for run in running:
            if self.run_is_dead(run, live, beating=beating, missing_proves_death=trusted):
                if self.mark_interrupted(run):
                    reaped.append(run)
        return reaped

    def live_workers(self) -> dict[str, Any]:
        """The RQ workers registered on the `runs` queue's Redis, by name (a dead worker's key expires)."""
        import django_rq
        from rq import Worker

        queue = django_rq.get_queue("runs")
        return {worker.name: worker for worker in Worker.all(connection=queue.connection)}

    def connection(self) -> Any:
        import django_rq

        return django_rq.get_queue("runs").connection

    def run_is_dead(self, run: Run, live: dict[str, Any], *, beating: set[str], missing_proves_death: bool) -> bool:
        if str(run.code) in beating:
            return False  # its process beats: alive, whatever RQ's registry says
        if not missing_proves_death:
            return False  # Redis restarted moments ago without its keys: decide on a later pass
        # heartbeat_at: the claim (also of a resumed run) or the last committed step.
        last_sign = run.heartbeat_at or run.started_at or run.created_at
        if timezone.now() - last_sign > timedelta(seconds=settings.RUN_HEARTBEAT_TTL):
            return True  # the heartbeat lapsed
        return self.worker_is_dead(run, live)

    def running_runs(self) -> list[Run]:
        return list(Run.objects.filter(status__in=(Run.Status.RUNNING, Run.Status.CANCELLING)))

    def worker_is_dead(self, run: Run, live: dict[str, Any]) -> bool:
        worker = live.get(run.worker_name)
        if worker is not None:
            # The worker lives, but its work horse (the forked child running the job) may have died.
            job = worker.get_current_job()
            return job is None or tuple(job.args) != (run.pk,)
        host, _, pid = run.worker_name.rpartition(":")
        if host == host_id() and pid.isdigit():
            return not self.process_alive(int(pid))  # run inline on this machine
        if host and pid.isdigit():
            last_sign = run.heartbeat_at or run.started_at or run.created_at
            return timezone.now() - last_sign > STALE_AFTER  # inline on another machine: only time tells
        return True  # an RQ worker that is no longer registered

    def process_alive(self, pid: int) -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

    def mark_interrupted(self, run: Run) -> bool:
        # A worker that died while stopping a cancelled run: the run ends as its owner asked.
        updated = Run.objects.filter(pk=run.pk, status=Run.Status.CANCELLING).update(
            status=Run.Status.CANCELLED, exit_status="exit_cancelled", finished_at=timezone.now()
        )
        updated = updated or Run.objects.filter(pk=run.pk, status=Run.Status.RUNNING).update(
            status=Run.Status.INTERRUPTED,
            exit_status="interrupted",
            error=(
                f"The worker {self.worker_words(run)} stopped while running this run. "
                "Every committed step is kept; Resume continues it."
            ),
            finished_at=timezone.now(),
        )
        if updated:
            run.refresh_from_db()
            progress.run_status_send(run)
        return bool(updated)

    def worker_words(self, run: Run) -> str:
        worker = run.worker_name or "(unknown)"
        if run.executor == Run.Executor.SLURM and run.slurm_job_id:
            return f"{worker} (Slurm job {run.slurm_job_id})"
        return worker
