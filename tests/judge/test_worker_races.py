"""Judgments under real concurrency: two RQ worker processes racing for one judgment, and the
judgment reaper sweeping in its own process while a worker finishes judgments.

The model's HTTP reply is faked inside each worker process at the transport (the real SDK runs);
every call a worker makes is appended to a file, so the test counts model calls across processes.
"""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest
import redis as redis_lib
from django.conf import settings
from rq import Queue

from tests.processes import SHELL, ProcessDatabase, process_database

# The endpoints are seeded by each test (default_endpoints): a transaction test empties every table
# after itself, the data migration's rows included.
pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

SEED = """
from judge.models import Judgment
from tests.judge.factories import make_artifact, make_research_run, make_task, rubric
paper = make_artifact(make_research_run(task=make_task("iclr2025_{status}")), "paper", "# Paper\\n\\nResults: 0.91.")
status = Judgment.Status.{status}
ids = [Judgment.objects.create(artifact=paper, rubric=rubric("end2end"), judge_model="anthropic:claude-test",
                               status=status).pk for _ in range({n})]
print(" ".join(map(str, ids)))
"""

# A real forking RQ worker on the judge queue; its work horses inherit the fake transport.
WORKER = """
import os, random, time
import django_rq
from benchmark.llm.transport import Response, override_transport
from judge.models import Rubric
from tests.judge.factories import rubric, valid_reply
from tests.llm_fakes import anthropic_body

reply = anthropic_body(valid_reply(rubric("end2end")), tokens_in=1000, tokens_out=100)
delay = float(os.environ["REPLY_DELAY"])

def answer(request):
    with open(os.environ["CALLS_FILE"], "a") as fh:
        fh.write(f"{os.getpid()}\\n")
    time.sleep(random.uniform(0, delay) if os.environ.get("RANDOM_DELAY") else delay)
    return Response(200, json=reply)

import benchmark.llm.providers  # what the worker preloads (config/workers.py), before the start line
time.sleep(max(0.0, float(os.environ["START_AT"]) - time.time()))  # so that both dequeue at once
with override_transport(answer):  # the worker class of `manage.py rqworker judge` (settings.RQ)
    django_rq.get_worker("judge").work(burst=True)
"""

# The reaper's own pass, in a loop in its own process, until told to stop, slowed between its two
# reads (running judgments, then the jobs in progress) as a loaded database would: judgments then
# finish while it looks at them. It reports how many passes found a running judgment.
REAPER = """
import json, os, signal, time
from judge.management.commands.reap_judgments import Command
from judge.models import Judgment

class SlowReaper(Command):
    def judgments_in_progress(self):
        time.sleep(0.03)
        return super().judgments_in_progress()

stop = []
signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
passes = looked = 0
reaped = []
while not stop:
    looked += Judgment.objects.filter(status=Judgment.Status.RUNNING).exists()
    reaped += [j.pk for j in SlowReaper().reap_once()]
    passes += 1
    time.sleep(0.002)
print(json.dumps({"passes": passes, "looked": looked, "reaped": reaped}))
"""


def _private_redis(db: ProcessDatabase, redis_client) -> Queue:
    """The judge queue on a Redis database of its own (index 7 of the session's server), used by the
    test and by every process it starts: no worker left by another test can take these jobs."""
    url = settings.REDIS_URL.rsplit("/", 1)[0] + "/7"
    db.env["REDIS_URL"] = url
    connection = redis_lib.Redis.from_url(url)
    connection.flushdb()
    return Queue("judge", connection=connection)


def _judgments(db: ProcessDatabase, ids: list[int]) -> dict[int, tuple[str, str, int]]:
    marks = ",".join("?" * len(ids))
    rows = db.rows(f"select id, status, error, tokens_sent from judge_judgment where id in ({marks})", tuple(ids))
    return {row[0]: (row[1], row[2], int(row[3])) for row in rows}


def _seed(db: ProcessDatabase, *, n: int, status: str = "QUEUED") -> list[int]:
    return [int(pk) for pk in db.shell(SEED.format(n=n, status=status)).split()]


def _worker(db: ProcessDatabase, tmp_path: Path, *, start_at: float, delay: float, random_delay: bool = False):
    env = {"CALLS_FILE": str(tmp_path / "calls"), "START_AT": str(start_at), "REPLY_DELAY": str(delay)}
    env["ANTHROPIC_API_KEY"] = "sk-ant-test"
    if random_delay:
        env["RANDOM_DELAY"] = "1"
    return db.popen([*SHELL, WORKER], **env)


def test_it_calls_the_judge_once_when_two_worker_processes_race_for_one_judgment(
    tmp_path, redis_client, default_endpoints
):
    db = process_database(tmp_path)
    (judgment_id,) = _seed(db, n=1)
    queue = _private_redis(db, redis_client)
    for _ in range(2):  # the same judgment queued twice (a retry, a double click): both workers get one
        queue.enqueue("judge.jobs.run_judgment", judgment_id)
    start_at = time.time() + 3
    workers = [_worker(db, tmp_path, start_at=start_at, delay=0.5) for _ in range(2)]
    outputs = [w.communicate(timeout=120)[0] for w in workers]
    assert [w.returncode for w in workers] == [0, 0], outputs
    calls_file = tmp_path / "calls"
    calls = calls_file.read_text().split() if calls_file.exists() else []
    state = _judgments(db, [judgment_id])[judgment_id]
    assert len(calls) == 1, f"the model was asked {len(calls)} times for one judgment; {state}; {outputs}"
    assert _judgments(db, [judgment_id])[judgment_id] == ("succeeded", "", 1000)  # one call's tokens, once


def test_it_keeps_the_result_of_judgments_that_finish_while_the_reaper_sweeps(
    tmp_path, redis_client, default_endpoints
):
    db = process_database(tmp_path)
    ids = _seed(db, n=15)
    (abandoned,) = _seed(db, n=1, status="RUNNING")  # no worker holds it: the reaper must fail it
    queue = _private_redis(db, redis_client)
    for pk in ids:
        queue.enqueue("judge.jobs.run_judgment", pk)
    reaper = db.popen([*SHELL, REAPER])
    # Replies take up to 0.3 s, several reaper passes (about 0.035 s each), so it finds judgments running.
    worker = _worker(db, tmp_path, start_at=time.time(), delay=0.3, random_delay=True)
    worker_out = worker.communicate(timeout=300)[0]
    reaper.send_signal(signal.SIGTERM)
    reaper_out = reaper.communicate(timeout=60)[0]
    assert worker.returncode == 0, worker_out
    report = json.loads(reaper_out.strip().splitlines()[-1])
    # The race was exercised: several passes found judgments running (how many depends on the machine).
    assert report["looked"] >= 3, report
    assert report["reaped"] == [abandoned]
    results = _judgments(db, ids)
    assert {status for status, _, _ in results.values()} == {"succeeded"}, results
    assert _judgments(db, [abandoned])[abandoned][0] == "failed"
