"""A GPU task's baseline takes its GPUs as a run does: leased for the whole baseline (one Redis lock
per device, shared with runs), handed to the agent's sandbox as a Docker device request, given back
at the end; without them it is stored as an error in plain words and no sandbox starts. This
machine has no NVIDIA runtime, so Docker's own refusal is what a baseline here must store."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from benchmark.runs import gpus
from benchmark.tasks.baselines import baseline_compute
from tests.benchmark.runs_support import builtin_task, gpu_task
from tests.redis_plugin import session_redis_kill, session_redis_owned, session_redis_start

pytestmark = pytest.mark.django_db(transaction=True)


def sandboxes_created(task, since: datetime) -> list[dict]:
    """Docker's own record of the containers created for this task's baseline since `since`."""
    from sandbox.docker import client

    events = client().events(
        since=since,
        until=int(time.time()) + 2,  # whole seconds: the second just begun must be in it
        filters={"type": "container", "event": "create", "label": f"referee.run=baseline-{task.code}"},
        decode=True,
    )
    return list(events)


@pytest.mark.docker
def test_it_stores_a_plain_error_and_starts_no_sandbox_on_a_host_without_gpus(
    tmp_path, settings, researcher, client_for, redis_client
):
    settings.GPU_DEVICES = "none"
    task = gpu_task(tmp_path)
    since = datetime.now(UTC)
    scores = baseline_compute(task=task)
    assert "the task needs 1 GPU(s)" in scores["error"] and "offers 0" in scores["error"], scores
    assert "so the baseline cannot start here" in scores["error"]
    assert "dev" not in scores and "test" not in scores and "environment" not in scores
    task.refresh_from_db()
    assert task.baseline_scores["error"] == scores["error"]
    assert sandboxes_created(task, since) == []
    page = client_for(researcher).get(reverse("benchmark:task_detail", args=[task.code])).content.decode()
    assert "Baseline failed: the task needs 1 GPU(s)" in page


@pytest.mark.docker
def test_it_sends_the_leased_device_to_docker_and_stores_dockers_refusal(tmp_path, settings, redis_client):
    settings.GPU_DEVICES, settings.GPU_NAME = "0", "Test GPU"
    task = gpu_task(tmp_path)
    since = datetime.now(UTC)
    started = time.monotonic()
    scores = baseline_compute(task=task)
    elapsed = time.monotonic() - started
    assert "could not select device driver" in scores["error"], scores
    assert "dev" not in scores and "test" not in scores
    assert elapsed < 60
    assert len(sandboxes_created(task, since)) == 1  # the sandbox was asked for, with the device
    with gpus.gpus_leased(1, wait=0) as devices:  # the failed baseline gave its GPU back
        assert [gpu.id for gpu in devices] == ["0"]


@pytest.mark.docker
def test_a_baseline_does_not_get_a_gpu_another_holds_and_says_so(tmp_path, settings, redis_client):
    settings.GPU_DEVICES, settings.GPU_NAME = "0", "Test GPU"
    task = gpu_task(tmp_path)
    since = datetime.now(UTC)
    with gpus.gpus_leased(1):  # a run (or another baseline) holds the only device
        started = time.monotonic()
        scores = baseline_compute(task=task, gpu_wait=1.0)
        waited = time.monotonic() - started
    assert "was held by other runs or baselines for the whole wait (1 s)" in scores["error"], scores
    assert "so the baseline did not start" in scores["error"]
    assert waited >= 1.0
    assert sandboxes_created(task, since) == []
    with gpus.gpus_leased(1, wait=0):  # free again once the holder let go
        pass


@pytest.fixture
def redis_control():
    if not session_redis_owned():
        pytest.skip("REDIS_URL was given: this session does not own a Redis it may kill")
    yield
    session_redis_start()  # whatever the test did, the next one finds Redis up


def test_it_stores_an_error_when_redis_cannot_lease_the_gpus(tmp_path, settings, redis_control):
    settings.GPU_DEVICES = "0"
    task = gpu_task(tmp_path)
    session_redis_kill()
    scores = baseline_compute(task=task, gpu_wait=0)
    assert scores["error"].startswith("the task's GPUs are leased through Redis, which did not answer"), scores
    task.refresh_from_db()
    assert task.baseline_scores["error"] == scores["error"] and "test" not in task.baseline_scores


def test_compute_baselines_reports_a_gpu_task_on_a_host_without_gpus(tmp_path, settings, capsys, redis_client):
    settings.GPU_DEVICES = "none"
    task = gpu_task(tmp_path)
    with pytest.raises(CommandError, match="1 baseline\\(s\\) failed"):
        call_command("compute_baselines", "--task", task.slug, "--wait", "0")
    assert f"{task.slug}: FAILED: the task needs 1 GPU(s); host" in capsys.readouterr().err
    with pytest.raises(CommandError, match="--wait must be 0 or more seconds"):
        call_command("compute_baselines", "--task", task.slug, "--wait", "-1")


@pytest.mark.docker
def test_a_cpu_baseline_records_what_it_ran_on_without_gpus_and_the_page_shows_it(
    settings, researcher, client_for, redis_client
):
    settings.GPU_DEVICES = "none"  # a CPU task never asks for one
    task = builtin_task("prisoners_dilemma")
    scores = baseline_compute(task=task)
    assert scores["error"] == "", scores
    environment = scores["environment"]
    assert environment["image_digest"].startswith("sha256:") and environment["task_hash"] == task.version_hash
    assert "gpus" not in environment and "gpu_hours" not in environment
    page = client_for(researcher).get(reverse("benchmark:task_detail", args=[task.code])).content.decode()
    assert f"The baseline ran on {environment['image']}</p>" in page
