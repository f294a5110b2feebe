"""Two worker pools as two hosts: each its own var dir and host id (sandbox labels, disks, claims),
the same database, Redis and artifact storage. Pool A's worker is killed -9 mid-run; pool B's reaper
marks A's run interrupted by its lapsed heartbeat, pool B's worker takes the next run (a research
experiment in a real Docker sandbox), and A's web stack serves the files B wrote.

The model replies of pool B's experiment agent are faked at the transport, inside B's own process
(a burst RQ worker started from `manage.py shell`, whose work horse forks with the handler)."""

from __future__ import annotations

import os
import signal
import subprocess

import pytest

from benchmark.runs.heartbeat import heartbeat_key
from tests.benchmark.runs.test_worker_kill import SEED, wait_for
from tests.processes import MANAGE, SHELL, mounts_under, process_database, sweep_disks

pytestmark = [pytest.mark.slow, pytest.mark.docker, pytest.mark.django_db(transaction=True)]

FAST = {"RUN_HEARTBEAT_EVERY": "0.5", "RUN_HEARTBEAT_TTL": "3"}

LAUNCH_RESEARCH = """
from django.db import transaction
from django.contrib.auth import get_user_model
from benchmark.models import Task
from benchmark.research.services import research_launch
task = Task.objects.create(slug="iclr2025_twohosts", version_hash="t" * 64, kind=Task.Kind.MLR, title="Two hosts",
                           description="# Two hosts")
with transaction.atomic():
    run = research_launch(owner=get_user_model().objects.get(username="rita"), task=task,
                          backbone="anthropic:claude-sonnet-4-5", stages=["experiment"],
                          given={"idea": "# Idea", "literature": "Lit", "proposal": "# Proposal"})
print(run.pk, run.code)
"""

# Pool B's worker: one burst over the `runs` queue, the model answered by queued fake replies.
POOL_B_WORKER = """
import django_rq
from benchmark.llm.transport import override_transport
from tests.llm_fakes import FakeLLM
from tests.benchmark.research.test_experiment import MAKE_FIGURE, WRITE_RESULTS, reply
fake = FakeLLM()
fake.anthropic(reply("Figure.", MAKE_FIGURE), 1000, 50).anthropic(reply("Results.", WRITE_RESULTS), 1000, 50)
fake.anthropic(reply("Done.", "submit"), 1000, 20)
with override_transport(fake):
    django_rq.get_worker("runs", name="pool-b-burst").work(burst=True)
"""

# Pool A's web stack (Django's request handling in a process of host A) asks for B's figure.
WEB_A = """
from django.contrib.auth import get_user_model
from django.test import Client
from benchmark.models import Artifact
experiment = Artifact.objects.get(research_run__code="{code}", stage="experiment")
client = Client()
client.force_login(get_user_model().objects.get(username="rita"))
page = client.get(f"/research/files/{{experiment.code}}/figures/acc.png")
print(page.status_code, b"".join(page.streaming_content)[:4].hex(), sorted(experiment.files))
"""


def test_it_keeps_pool_b_working_and_interrupts_pool_a_runs_when_pool_a_dies(
    tmp_path, redis_client, default_endpoints
) -> None:
    from rq import Worker

    from sandbox import docker as docker_backend

    shared = tmp_path / "shared-artifacts"  # the NFS mount or object store of a real deployment
    db = process_database(tmp_path / "host-a")
    host_b = tmp_path / "host-b"
    host_b.mkdir()
    if db.sqlite_path is not None:  # one database file for both "hosts" (PostgreSQL: the same URL)
        os.symlink(db.sqlite_path, host_b / "referee.sqlite3")
    host_a_env = {"REFEREE_HOST_ID": "pool-a", "ARTIFACT_STORAGE_LOCATION": str(shared), **FAST}
    host_b_env = {**host_a_env, "REFEREE_HOST_ID": "pool-b", "REFEREE_VAR_DIR": str(host_b)}
    pk, code = db.shell(SEED).split()
    worker_a = db.popen([*MANAGE, "rqworker", "runs", "--name", f"pool-a-{code[:8]}"], **host_a_env)
    reaper_b = None
    try:
        wait_for(
            lambda: db.rows("select step_count from benchmark_run where id = ?", (int(pk),)) == [(1,)],
            timeout=180,
            what="pool A's run to commit its first step",
        )
        beat = redis_client.get(heartbeat_key(code)).decode()
        assert beat.startswith("pool-a:")  # the claim names the host id, not the machine's hostname
        os.kill(int(beat.rpartition(":")[2]), signal.SIGKILL)
        os.killpg(worker_a.pid, signal.SIGKILL)
        worker_a.wait(timeout=10)

        reaper_b = db.popen([*MANAGE, "reap_runs", "--loop", "--interval", "0.5"], **host_b_env)
        research_pk, research_code = db.shell(LAUNCH_RESEARCH, **host_b_env).split()
        pool_b = subprocess.run(
            [*SHELL, POOL_B_WORKER], env={**db.env, **host_b_env}, capture_output=True, text=True, timeout=300
        )
        assert pool_b.returncode == 0, pool_b.stderr[-3000:]
        assert db.rows("select status, error from benchmark_researchrun where id = ?", (int(research_pk),)) == [
            ("finished", "")
        ]
        assert (shared / "artifacts").is_dir() and not (tmp_path / "host-a" / "media" / "artifacts").exists()
        assert not (host_b / "media" / "artifacts").exists()  # B wrote to the shared storage only

        status, head, listed = db.shell(WEB_A.format(code=research_code), **host_a_env).split(maxsplit=2)
        assert (status, head) == ("200", "89504e47") and "figures/acc.png" in listed

        row = wait_for(
            lambda: [r for r in db.rows("select status, error from benchmark_run where id = ?", (int(pk),)) if r[0] != "running"],
            timeout=60,
            what="pool B's reaper to mark pool A's run",
        )  # fmt: skip
        assert row[0][0] == "interrupted" and "Every committed step is kept" in row[0][1]
        assert db.rows('select "index" from benchmark_step where run_id = ?', (int(pk),)) == [(1,)]
    finally:
        for proc in (worker_a, reaper_b):
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                proc.communicate(timeout=30)
        for container in docker_backend.sandbox_containers():
            if container["labels"].get("referee.run") == code:
                docker_backend.remove_container(container["id"])
        for name in (f"pool-a-{code[:8]}", "pool-b-burst"):
            dead = Worker.find_by_key(f"rq:worker:{name}", connection=redis_client)
            if dead is not None:
                dead.register_death()
        killed_disks = sweep_disks(tmp_path / "host-a")  # host A's housekeeping, back after the crash
    assert mounts_under(tmp_path) == []
    assert killed_disks == [] or all("host-a" in path for path, _ in killed_disks)
