"""GPU tasks: the `gpu` queue, the launch refusal when no GPU worker is live, one run per GPU, the
Docker device request (this machine has no NVIDIA runtime, so Docker's own refusal is what a run
on such a host must show), and what a run records of what it ran on."""

from __future__ import annotations

import time

import pytest
from rq import Queue, Worker

from benchmark.models import Run
from benchmark.runs import gpus
from benchmark.runs.provenance import gpu_hours_record
from benchmark.runs.services import LaunchError, Limits, run_execute, run_launch
from benchmark.tasks.resources import task_gpus
from benchmark.tasks.spec import TaskFormatError
from sandbox import SandboxSpec, SandboxUnavailable, open_session
from tests.benchmark.runs_support import agent, builtin_task, gpu_task, make_run

pytestmark = pytest.mark.django_db(transaction=True)

FORM = {
    "agent_kind": "baseline",
    "temperature": 0,
    "top_p": 0.95,
    "history_window": 5,
    "n_runs": 1,
    "max_steps": 5,
    "cost_limit": 1,
    "command_timeout": 60,
}


@pytest.fixture
def gpu_worker(redis_client):
    """A live RQ worker on the `gpu` queue, as RQ registers one (it takes no job here)."""
    worker = Worker([Queue("gpu", connection=redis_client)], connection=redis_client, name=f"gpu-test-{time.time_ns()}")
    worker.register_birth()
    yield worker
    worker.register_death()


def test_it_reads_gpus_from_the_task_and_refuses_a_bad_count(tmp_path, redis_client):
    assert task_gpus(gpu_task(tmp_path)) == 1
    assert task_gpus(builtin_task("prisoners_dilemma")) == 0
    with pytest.raises(TaskFormatError, match="sandbox.gpus"):
        gpu_task(tmp_path / "bad", "  gpus: two\n")


def test_it_routes_a_gpu_task_to_the_gpu_queue_and_a_cpu_task_to_runs(tmp_path, researcher, gpu_worker, redis_client):
    gpu_run, cpu_run = run_launch(
        owner=researcher, tasks=[gpu_task(tmp_path), builtin_task("prisoners_dilemma")], agent=agent(), limits=Limits()
    )
    gpu_queue, runs_queue = Queue("gpu", connection=redis_client), Queue("runs", connection=redis_client)
    assert [job.args for job in gpu_queue.jobs] == [(gpu_run.pk,)]
    assert [job.args for job in runs_queue.jobs] == [(cpu_run.pk,)]


def test_it_refuses_a_gpu_launch_when_no_gpu_worker_is_live_and_creates_nothing(tmp_path, researcher, redis_client):
    with pytest.raises(LaunchError, match="no GPU worker is live"):
        run_launch(owner=researcher, tasks=[gpu_task(tmp_path)], agent=agent())
    assert not Run.objects.exists()
    assert Queue("gpu", connection=redis_client).count == 0


def test_the_launch_page_says_where_a_gpu_task_can_run_and_why_it_refused(
    tmp_path, researcher, client_for, redis_client
):
    task = gpu_task(tmp_path)
    client = client_for(researcher)
    page = client.get("/runs/launch/").content.decode()
    assert "needs 1 GPU; no GPU worker is live, so it cannot be launched now" in page
    response = client.post("/runs/launch/", {**FORM, "tasks": [task.pk]})
    assert response.status_code == 503
    assert "needs a GPU, and no GPU worker is live, so nothing was launched" in response.content.decode()
    assert not Run.objects.exists()


def test_the_launch_page_names_the_gpu_pool_when_a_worker_is_live(tmp_path, researcher, client_for, gpu_worker):
    gpu_task(tmp_path)
    page = client_for(researcher).get("/runs/launch/").content.decode()
    assert "needs 1 GPU; the GPU pool: 1 GPU worker(s) live" in page


def test_it_never_leases_one_gpu_to_two_runs(settings, redis_client):
    settings.GPU_DEVICES, settings.GPU_NAME = "0", "Test GPU"
    with gpus.gpus_leased(1) as first:
        assert [gpu.id for gpu in first] == ["0"]
        with pytest.raises(gpus.GpuUnavailable, match="held by other runs"):
            with gpus.gpus_leased(1, wait=0.5):
                pass
    with gpus.gpus_leased(1, wait=0) as again:  # given back when the first run ended
        assert [gpu.id for gpu in again] == ["0"]


def test_it_leases_distinct_devices_to_concurrent_runs_and_refuses_more_than_the_host_has(settings, redis_client):
    settings.GPU_DEVICES = "0,1"
    with gpus.gpus_leased(1) as one, gpus.gpus_leased(1) as other:
        assert {one[0].id, other[0].id} == {"0", "1"}
    with pytest.raises(gpus.GpuUnavailable, match="offers 2"):
        with gpus.gpus_leased(3):
            pass


def test_a_dead_workers_lease_expires_within_the_ttl(settings, redis_client):
    settings.GPU_DEVICES, settings.RUN_HEARTBEAT_TTL, settings.RUN_HEARTBEAT_EVERY = "0", 1.0, 0.2
    lock = gpus._lock(redis_client, gpus.host_gpus()[0])
    assert lock.acquire(blocking=False)  # a worker took it, then died: nobody extends it
    with pytest.raises(gpus.GpuUnavailable):
        with gpus.gpus_leased(1, wait=0):
            pass
    time.sleep(1.2)
    with gpus.gpus_leased(1, wait=0) as devices:
        assert devices[0].id == "0"


def test_the_bwrap_and_local_backends_refuse_a_gpu_sandbox():
    for backend in ("bwrap", "local"):
        with pytest.raises(SandboxUnavailable, match="cannot give a sandbox a GPU"):
            open_session(SandboxSpec(gpus=["0"]), backend=backend)


def test_the_docker_backend_asks_for_exactly_the_leased_devices():
    from sandbox.docker import DockerSession

    options = DockerSession(SandboxSpec(gpus=["1"])).container_options()
    [request] = options["device_requests"]
    assert (request["DeviceIDs"], request["Capabilities"]) == (["1"], [["gpu"]])
    assert "device_requests" not in DockerSession(SandboxSpec()).container_options()


@pytest.mark.docker
def test_a_gpu_run_on_a_host_without_the_nvidia_runtime_fails_in_seconds_with_dockers_words(
    tmp_path, settings, researcher, redis_client
):
    settings.GPU_DEVICES, settings.GPU_NAME = "0", "Test GPU"
    run = make_run(owner=researcher, task=gpu_task(tmp_path), agent_config=agent())
    started = time.monotonic()
    run_execute(run_id=run.pk)
    elapsed = time.monotonic() - started
    run.refresh_from_db()
    assert run.status == Run.Status.FAILED
    assert "could not select device driver" in run.error, run.error
    assert elapsed < 60
    with gpus.gpus_leased(1, wait=0):  # the lease went back with the failed run
        pass


@pytest.mark.docker
def test_a_run_records_what_it_ran_on_and_its_page_shows_it(researcher, client_for, redis_client):
    task = builtin_task("prisoners_dilemma")
    run = make_run(owner=researcher, task=task, agent_config=agent())
    run_execute(run_id=run.pk)
    run.refresh_from_db()
    environment = run.environment
    assert run.status == Run.Status.FINISHED, run.error
    assert environment["image"].startswith("referee-sandbox:") and environment["image_digest"].startswith("sha256:")
    assert environment["task_hash"] == task.version_hash and environment["network"] == "none"
    assert len(environment["evaluator_hash"]) == 64 and "gpus" not in environment
    page = client_for(researcher).get(f"/runs/{run.code}/").content.decode()
    assert environment["image_digest"] in page and "network none" in page


def test_gpu_hours_are_gpus_times_wall_time(researcher):
    run = make_run(owner=researcher, environment={"gpus": {"count": 2, "type": "H100", "devices": ["0", "1"]}})
    gpu_hours_record(run=run, wall_seconds=5400)
    run.refresh_from_db()
    assert run.environment["gpu_hours"] == 3.0
    cpu = make_run(owner=researcher)
    gpu_hours_record(run=cpu, wall_seconds=5400)
    cpu.refresh_from_db()
    assert cpu.environment == {}
