"""A Slurm job's run on a node without Docker: the sandbox is Podman or bubblewrap, chosen by the
launching process's settings (SANDBOX_BACKEND, SANDBOX_PODMAN_USER travel with the job), and the
run streams its steps and records the backend it ran on. Real cluster, real podman and bwrap."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from tests.benchmark.runs.test_slurm import _collect, partition, run_row, seed
from tests.processes import process_database
from tests.sandbox.conftest import _bwrap_problem, podman_ready, podman_user  # noqa: F401 - fixtures

pytestmark = [pytest.mark.slow, pytest.mark.slurm, pytest.mark.django_db(transaction=True)]


def stream_a_slurm_run(db, cluster, **env: str) -> tuple[tuple, list[dict], dict]:  # type: ignore[no-untyped-def]
    partition("DOWN", cluster)  # held in the queue until the test listens to the run's stream
    try:
        ((pk, code, executor, job_id),) = seed(db, ["echo one", "cat /etc/hostname; echo two"], **env)
        assert executor == "slurm" and job_id.isdigit()
        messages = asyncio.run(_collect(code, lambda: partition("UP", cluster), time.monotonic() + 240))
    finally:
        partition("UP", cluster)
    environment = json.loads(db.rows("select environment from benchmark_run where id = ?", (pk,))[0][0])
    return run_row(db, pk), messages, environment


@pytest.mark.podman
@pytest.mark.docker  # the image comes into podman's storage from this node's Docker engine, once
def test_it_runs_a_slurm_job_whose_sandbox_is_podman(slurm_node, podman_ready, podman_user, tmp_path):  # noqa: F811
    db = process_database(tmp_path)
    row, messages, environment = stream_a_slurm_run(
        db, slurm_node, SANDBOX_BACKEND="podman", SANDBOX_PODMAN_USER=podman_user
    )
    status, exit_status, error, steps = row
    assert status == "finished", (status, exit_status, error)
    assert [m["index"] for m in messages if m["type"] == "run.step"][:2] == [1, 2]
    assert environment["backend"] == "podman"
    assert environment["image"].endswith(podman_ready)


@pytest.mark.bwrap
def test_it_runs_a_slurm_job_whose_sandbox_is_bubblewrap(slurm_node, public_dir):
    if problem := _bwrap_problem():
        pytest.skip(f"bubblewrap unusable here: {problem}")
    db = process_database(public_dir)  # bwrap under a root job runs as an unprivileged uid: readable files
    row, messages, environment = stream_a_slurm_run(db, slurm_node, SANDBOX_BACKEND="bwrap")
    status, exit_status, error, steps = row
    assert status == "finished", (status, exit_status, error)
    streamed = [m for m in messages if m["type"] == "run.step"]
    assert [m["index"] for m in streamed][:2] == [1, 2]
    assert environment["backend"] == "bwrap"
    assert environment["image"].startswith("bwrap: ")  # no container image: a read-only root of the node
