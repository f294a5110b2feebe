"""Runs that finish while the run reaper sweeps keep their result: a real `rqworker runs` process
runs model-free baseline runs in real sandboxes while the reaper's pass loops in another process."""

from __future__ import annotations

import json
import signal

import pytest

from tests.processes import MANAGE, SHELL, process_database

pytestmark = [pytest.mark.slow, pytest.mark.docker, pytest.mark.django_db(transaction=True)]

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
