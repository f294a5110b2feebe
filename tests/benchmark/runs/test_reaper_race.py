"""Runs that finish while the run reaper sweeps keep their result. First the window itself, held
open: the reaper has read a run as running and judged it dead when the run's own end commits, before
the reaper writes. Then the same at random, with real processes: a real `rqworker runs` runs model-free
baseline runs in real sandboxes while the reaper's pass loops in another process."""

from __future__ import annotations

import json
import signal
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from benchmark.management.commands.reap_runs import Command
from benchmark.models import Run
from tests.benchmark.runs_support import make_run
from tests.processes import MANAGE, SHELL, process_database

pytestmark = pytest.mark.django_db(transaction=True)


def test_it_leaves_a_run_that_finishes_between_the_reapers_look_and_its_write(researcher, redis_client, settings):
    settings.RUN_HEARTBEAT_TTL = 1  # a missing heartbeat proves death once Redis is up a whole TTL
    while float(redis_client.info("server")["uptime_in_seconds"]) < settings.RUN_HEARTBEAT_TTL:
        time.sleep(0.1)
    lapsed = timezone.now() - timedelta(minutes=5)
    run = make_run(owner=researcher, status=Run.Status.RUNNING, worker_name="0123456789abcdef", heartbeat_at=lapsed)
    verdicts = []

    class Reaper(Command):
        def run_is_dead(self, run, live, **kwargs):
            dead = super().run_is_dead(run, live, **kwargs)
            verdicts.append(dead)
            # The run's end commits now, as the worker's finish() does, after the reaper's read.
            Run.objects.filter(pk=run.pk, status=Run.Status.RUNNING).update(
                status=Run.Status.FINISHED, exit_status="submitted", finished_at=timezone.now()
            )
            return dead

    reaped = Reaper().reap_once()
    assert verdicts == [True]  # the reaper did judge it dead: the window was really open
    assert reaped == []
    run.refresh_from_db()
    assert (run.status, run.exit_status, run.error) == (Run.Status.FINISHED, "submitted", "")


SEED = """
from accounts.roles import RESEARCHER
from accounts.services import user_create
from benchmark.runs.services import run_launch
from tests.benchmark.runs_support import agent, builtin_task
owner = user_create(username="rita", email="rita@example.org", role=RESEARCHER, password="pw-rita-1")
runs = run_launch(owner=owner, tasks=[builtin_task("prisoners_dilemma")], agent=agent(), n_runs=4)
print(" ".join(str(run.pk) for run in runs))
"""

# The reaper's own pass in a loop, slowed between its two reads (runs, then workers) as a loaded
# database would: runs then finish while it looks at them. It reports how often it saw a running run.
REAPER = """
import json, signal, time
from benchmark.management.commands.reap_runs import Command
from benchmark.models import Run

class SlowReaper(Command):
    def live_workers(self):
        time.sleep(0.05)
        return super().live_workers()

stop = []
signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
looked = 0
reaped = []
while not stop:
    looked += Run.objects.filter(status=Run.Status.RUNNING).exists()
    reaped += [run.pk for run in SlowReaper().reap_once()]
    time.sleep(0.002)
print(json.dumps({"looked": looked, "reaped": reaped}))
"""


@pytest.mark.slow
@pytest.mark.docker
def test_it_keeps_the_result_of_runs_that_finish_while_the_reaper_sweeps(tmp_path, redis_client):
    db = process_database(tmp_path)
    reaper = db.popen([*SHELL, REAPER])
    ids = [int(pk) for pk in db.shell(SEED).split()]  # enqueued on commit, on this session's Redis
    worker = db.popen([*MANAGE, "rqworker", "runs", "--burst"])
    worker_out = worker.communicate(timeout=500)[0]
    reaper.send_signal(signal.SIGTERM)
    report = json.loads(reaper.communicate(timeout=60)[0].strip().splitlines()[-1])
    assert worker.returncode == 0, worker_out[-3000:]
    assert report["looked"] > 10, report  # it swept many times while runs were running
    assert report["reaped"] == [], report
    marks = ",".join("?" * len(ids))
    rows = db.rows(f"select status, exit_status, error from benchmark_run where id in ({marks})", tuple(ids))
    assert rows == [("finished", "submitted", "")] * len(ids), rows
