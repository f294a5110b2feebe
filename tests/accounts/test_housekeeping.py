"""`manage.py housekeeping`: the sweeps in one process, on their schedules; each still a command."""

from __future__ import annotations

import io
import os
import re
import signal
import sqlite3
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from accounts.management.commands.housekeeping import SWEEPS, Command
from benchmark.models import Run
from judge.models import Judgment
from sandbox.local import PREFIX
from tests.benchmark.runs_support import make_run
from tests.judge.factories import make_artifact, make_research_run, rubric
from tests.processes import MANAGE, ROOT, process_database


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_it_runs_each_sweep_on_its_own_schedule(monkeypatch):
    clock = FakeClock()
    command = Command(stdout=io.StringIO(), stderr=io.StringIO())
    command.clock, command.sleep = clock, clock.sleep
    ran: list[tuple[float, str]] = []
    monkeypatch.setattr(command, "run_sweep", lambda sweep: ran.append((clock.now - 1000.0, sweep.command)))
    command.loop(command.schedule([]), passes=36)
    assert dict(SWEEPS) == {"reap_runs": 30.0, "reap_judgments": 60.0, "sandbox_reaper": 60.0, "checkpoint_db": 5.0}
    by_sweep = {name: [t for t, n in ran if n == name] for name in dict(SWEEPS)}
    assert by_sweep == {
        "reap_runs": [0, 30, 60, 90, 120],
        "reap_judgments": [0, 60, 120],
        "sandbox_reaper": [0, 60, 120],
        "checkpoint_db": list(range(0, 121, 5)),
    }


def test_it_runs_only_the_sweeps_named(monkeypatch):
    ran: list[str] = []
    monkeypatch.setattr(Command, "run_sweep", lambda self, sweep: ran.append(sweep.command))
    call_command("housekeeping", "--once", "--only", "checkpoint_db", "--only", "reap_runs")
    assert sorted(ran) == ["checkpoint_db", "reap_runs"]
    with pytest.raises(CommandError, match="--only 'reap_all': no such sweep"):
        call_command("housekeeping", "--once", "--only", "reap_all")


def test_it_checks_interval_overrides():
    command = Command()
    assert {s.command: s.interval for s in command.schedule(["reap_runs=5"])}["reap_runs"] == 5.0
    for bad, message in (
        ("reap_everything=5", "no sweep 'reap_everything'"),
        ("reap_runs=soon", "'soon' is not a number of seconds"),
        ("reap_runs=0", "must be positive"),
    ):
        with pytest.raises(CommandError, match=message):
            command.schedule([bad])


@pytest.mark.django_db
def test_it_does_every_sweep_in_one_pass_and_says_what_it_did(researcher, redis_client, settings):
    # The run reaper trusts a missing heartbeat only once Redis has been up a whole TTL (a restarted
    # server lost its keys): this test may run in the session's first seconds, so a short TTL, waited for.
    settings.RUN_HEARTBEAT_TTL = 1
    while float(redis_client.info("server")["uptime_in_seconds"]) < settings.RUN_HEARTBEAT_TTL:
        time.sleep(0.2)
    dead_run = make_run(owner=researcher, status=Run.Status.RUNNING, worker_name="gone-worker")
    judgment = Judgment.objects.create(
        artifact=make_artifact(make_research_run(), "paper", "# P"),
        rubric=rubric("end2end"),
        judge_model="anthropic:claude-test",
        status=Judgment.Status.RUNNING,
    )
    orphan = Path(tempfile.mkdtemp(prefix=PREFIX))
    (orphan / ".owner").write_text(str(2**22 + 7))  # a local sandbox whose worker is gone
    out, err = io.StringIO(), io.StringIO()
    call_command("housekeeping", "--once", stdout=out, stderr=err)
    dead_run.refresh_from_db()
    judgment.refresh_from_db()
    assert dead_run.status == Run.Status.INTERRUPTED
    assert judgment.status == Judgment.Status.FAILED
    assert not orphan.exists()
    lines = out.getvalue().splitlines()
    assert f"reap_runs: interrupted 1 run(s): {dead_run.code}" in lines
    assert f"reap_judgments: failed 1 abandoned judgment(s): {judgment.code}" in lines
    assert any(line.startswith("sandbox_reaper: removing ") and "worker died" in line for line in lines), lines
    assert err.getvalue() == ""
    quiet = io.StringIO()
    call_command("housekeeping", "--once", stdout=quiet)
    assert quiet.getvalue() == ""  # nothing to do, nothing said


@pytest.mark.django_db
def test_it_logs_a_failed_pass_and_keeps_sweeping(researcher, settings):
    make_run(owner=researcher, status=Run.Status.RUNNING, worker_name="gone-worker")
    # Redis away: nothing listens on port 1.
    settings.RQ_QUEUES = {name: {**queue, "URL": "redis://127.0.0.1:1/0"} for name, queue in settings.RQ_QUEUES.items()}
    clock = FakeClock()
    out, err = io.StringIO(), io.StringIO()
    command = Command(stdout=out, stderr=err)
    command.clock, command.sleep = clock, clock.sleep
    sweeps = [s for s in command.schedule([]) if s.command == "reap_runs"]
    command.loop(sweeps, passes=3)
    assert sweeps[0].passes == 3 and sweeps[0].failures == 3
    assert err.getvalue().count("reap_runs: this pass failed, next in 30 s:") == 3


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_it_sweeps_in_its_own_process_until_stopped(tmp_path, redis_client):
    db = process_database(tmp_path)
    seed = (
        "from accounts.roles import RESEARCHER; from accounts.services import user_create\n"
        "from tests.benchmark.runs_support import make_run\n"
        "owner = user_create(username='h', email='h@example.org', role=RESEARCHER, password='pw-h-12345')\n"
        "print(make_run(owner=owner, status='running', worker_name='gone-worker').code)\n"
    )
    code = db.shell(seed).split()[-1]
    proc = db.popen([*MANAGE, "housekeeping", "--every", "reap_runs=0.5"])
    deadline = time.monotonic() + 60
    status = ""
    while status != "interrupted" and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
        status = db.rows("select status from benchmark_run where code = ?", (code.replace("-", ""),))[0][0]
    os.kill(proc.pid, signal.SIGTERM)  # it finishes the pass it is in, then exits
    out = proc.communicate(timeout=30)[0]
    assert status == "interrupted", out
    assert proc.returncode == 0, out
    assert (
        "housekeeping: reap_runs every 0.5 s, reap_judgments every 60 s, sandbox_reaper every 60 s,"
        " checkpoint_db every 5 s" in out
    )
    assert f"reap_runs: interrupted 1 run(s): {code}" in out


@pytest.mark.django_db(transaction=True)
def test_the_checkpoint_sweep_moves_sqlites_log_into_the_database_off_the_commits(tmp_path):
    db = process_database(tmp_path)
    if db.sqlite_path is None:  # PostgreSQL: nothing to do, nothing said
        assert db.shell("from django.core.management import call_command; call_command('checkpoint_db')") == ""
        return
    # The platform's connections leave checkpoints to this sweep up to a high backstop.
    probe = "from django.db import connection; c = connection.cursor(); c.execute('PRAGMA wal_autocheckpoint'); print(c.fetchone()[0])"
    assert db.shell(probe).split()[-1] == "10000"
    writer = sqlite3.connect(db.sqlite_path)
    writer.execute("PRAGMA wal_autocheckpoint=0")
    writer.execute("CREATE TABLE filler (body TEXT)")
    for _ in range(50):
        writer.execute("INSERT INTO filler VALUES (?)", ("x" * 8000,))
        writer.commit()
    # The writer stays open: closing the last connection would checkpoint by itself.
    out = subprocess.run(
        [*MANAGE, "checkpoint_db"], cwd=ROOT, env=db.env, capture_output=True, text=True, timeout=60, check=True
    ).stdout
    done, logged = (int(n) for n in re.fullmatch(r"checkpointed (\d+) of (\d+) frames\n", out).groups())
    assert logged >= 100 and done == logged  # two pages per row at least, all of them copied
    (size,) = writer.execute("SELECT count(*) FROM filler").fetchone()
    assert size == 50
    writer.close()
