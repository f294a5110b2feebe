"""The database connection of a real worker is cut mid-run (PostgreSQL's pg_terminate_backend, what a
server restart, a failover or a pooler's timeout does to it): the worker opens a new connection,
commits the step it was making, and the run goes on; no committed step is lost or doubled.

PostgreSQL only: SQLite has no server connection to cut (its nearest fault, a lock held past
busy_timeout, raises the same OperationalError and goes through the same retry). CI runs on
PostgreSQL, where the ci_plugin counts this test as a `postgres` and a `docker` one."""

from __future__ import annotations

import signal

import pytest
from django.db import connection

from tests.benchmark.runs.test_worker_kill import wait_for
from tests.processes import MANAGE, on_postgres, process_database, sweep_disks

pytestmark = [pytest.mark.slow, pytest.mark.docker, pytest.mark.django_db(transaction=True)]

# A replay: step 1 at once, step 2 sleeps while its connection is cut, step 3 after.
SEED = """
from accounts.roles import RESEARCHER
from accounts.services import user_create
from benchmark.models import AgentConfig, Run
from benchmark.runs import progress
from benchmark.runs.services import run_launch
from tests.benchmark.runs_support import builtin_task
owner = user_create(username="rita", email="rita@example.org", role=RESEARCHER, password="pw-rita-1")
task = builtin_task("prisoners_dilemma")
original = Run.objects.create(task=task, agent=AgentConfig.objects.create(name="x"), owner=owner, status="finished")
for action in ("echo first", "sleep 3 && echo second", "echo third"):
    progress.step_append(run=original, thought="t", action=action, observation="", publish=False)
replayer = AgentConfig.objects.create(name="replay", kind=AgentConfig.Kind.REPLAY, max_steps=3)
(run,) = run_launch(owner=owner, tasks=[task], agent=replayer, replay_of=original)
print(run.pk, run.code)
"""

# Only the worker's connections (libpq's PGAPPNAME names them): cutting every other backend of the
# test database would also cut the connections of the session's live server, and fail later tests.
CUT = """
select pg_terminate_backend(pid) from pg_stat_activity
where datname = current_database() and application_name = %s
"""


def test_it_reconnects_a_worker_whose_database_connection_was_cut_mid_step(tmp_path, redis_client, client_for):
    if not on_postgres():
        pytest.skip("needs PostgreSQL (DATABASE_URL): SQLite has no server connection to cut")
    from django.contrib.auth import get_user_model
    from rq import Worker

    from sandbox import docker as docker_backend

    db = process_database(tmp_path)
    pk, code = db.shell(SEED).split()
    name = f"dbcut-{code[:8]}"
    worker = db.popen([*MANAGE, "rqworker", "runs", "--name", name], PGAPPNAME=name)
    try:
        wait_for(
            lambda: db.rows("select step_count from benchmark_run where id = ?", (int(pk),)) == [(1,)],
            timeout=180,
            what="the run's first step",
        )
        with connection.cursor() as cursor:  # while step 2 sleeps in its sandbox
            cursor.execute(CUT, [name])
            cut = len(cursor.fetchall())
        assert cut >= 1  # the worker's connection
        row = wait_for(
            lambda: [r for r in db.rows("select status, error from benchmark_run where id = ?", (int(pk),)) if r[0] != "running"],
            timeout=120,
            what="the run to end",
        )  # fmt: skip
        assert row == [("finished", "")]
        steps = db.rows('select "index", action from benchmark_step where run_id = ? order by "index"', (int(pk),))
        # Each step once, in order: step 2, whose commit met the cut, was written on the new connection.
        assert [i for i, _ in steps] == list(range(1, len(steps) + 1))
        assert [a.strip() for _, a in steps][:3] == ["echo first", "sleep 3 && echo second", "echo third"]
        page = client_for(get_user_model().objects.get(username="rita")).get(f"/runs/{code}/").content.decode()
        assert "finished" in page and "echo third" in page and "OperationalError" not in page
    finally:
        if worker.poll() is None:
            worker.send_signal(signal.SIGTERM)
        output = worker.communicate(timeout=30)[0]
        for container in docker_backend.sandbox_containers():
            if container["labels"].get("referee.run") == code:
                docker_backend.remove_container(container["id"])
        dead = Worker.find_by_key(f"rq:worker:dbcut-{code[:8]}", connection=redis_client)
        if dead is not None:
            dead.register_death()
        sweep_disks(tmp_path)
    assert "database connection lost during" in output  # the worker saw the cut, and said so
