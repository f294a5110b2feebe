"""GPU runs: their queue, whether a GPU worker is live, and a lease on the host's devices.

A run of a task that needs GPUs (benchmark.tasks.resources) is queued on `gpu`, whose workers run
on hosts with NVIDIA GPUs and the NVIDIA container runtime (deploy/README.md, "GPU hosts"). The
worker that claims it leases devices of its host, one Redis lock per device
(`referee:gpu-lease:<host>:<id>`, redis-py's Lock), so two runs never share a GPU whichever
worker they landed on; the lease is extended while the run lives (every RUN_HEARTBEAT_EVERY, for
RUN_HEARTBEAT_TTL), so a worker killed with -9 frees its GPUs within the TTL. The devices go to the
agent's sandbox as a Docker device request by id (sandbox.docker.gpu_options).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.conf import settings

from benchmark.models import Task
from benchmark.tasks.resources import task_gpus
from sandbox.conf import host_id
from sandbox.gpu import Gpu, host_gpus

log = logging.getLogger(__name__)

GPU_QUEUE = "gpu"
CPU_QUEUE = "runs"
POLL = 1.0  # seconds between tries while every device is leased


class GpuUnavailable(Exception):
    """The run cannot have the GPUs it needs; the message says why, for its page."""


def queue_name(task: Task) -> str:
    return GPU_QUEUE if task_gpus(task) else CPU_QUEUE


def _connection() -> Any:
    import django_rq

    return django_rq.get_queue(GPU_QUEUE).connection


def live_gpu_workers(connection: Any = None) -> int:
    """RQ workers listening on the `gpu` queue now (RQ drops a worker whose key expired)."""
    from rq import Queue, Worker

    connection = connection or _connection()
    return Worker.count(queue=Queue(GPU_QUEUE, connection=connection))


def launch_refusal(tasks: list[Task]) -> str:
    """Why these tasks cannot be launched now ("" when they can): a GPU task with no GPU worker live."""
    needing = [task for task in tasks if task_gpus(task)]
    if not needing:
        return ""
    try:
        workers = live_gpu_workers()
    except Exception as exc:  # Redis away: the launch's own queue check says so
        log.warning("GPU workers not counted: %s", exc)
        return ""
    if workers:
        return ""
    names = ", ".join(f"{task.slug} ({task_gpus(task)} GPU)" for task in needing)
    return (
        f"{names} needs a GPU, and no GPU worker is live, so nothing was launched. A GPU worker runs "
        "`manage.py rqworker gpu` on a host with NVIDIA GPUs and the NVIDIA container runtime "
        '(deploy/README.md, "GPU hosts"); CPU tasks can still be launched.'
    )


def _lock(connection: Any, gpu: Gpu) -> Any:
    ttl = settings.RUN_HEARTBEAT_TTL
    return connection.lock(f"referee:gpu-lease:{host_id()}:{gpu.id}", timeout=ttl, thread_local=False)


def _take(connection: Any, offered: list[Gpu], count: int) -> list[tuple[Gpu, Any]]:
    held: list[tuple[Gpu, Any]] = []
    for gpu in offered:
        lock = _lock(connection, gpu)
        if lock.acquire(blocking=False):
            held.append((gpu, lock))
            if len(held) == count:
                return held
    _release(held)
    return []


def _release(held: list[tuple[Gpu, Any]]) -> None:
    for gpu, lock in held:
        try:
            lock.release()
        except Exception as exc:  # expired (the TTL passed) or Redis away: nothing left to free
            log.warning("GPU %s lease not released: %s", gpu.id, exc)


def _keep(held: list[tuple[Gpu, Any]], stopping: threading.Event) -> None:
    while not stopping.wait(settings.RUN_HEARTBEAT_EVERY):
        for gpu, lock in held:
            try:
                lock.reacquire()
            except Exception as exc:
                log.warning("GPU %s lease not extended: %s", gpu.id, exc)


@contextmanager
def gpus_leased(count: int, *, wait: float | None = None, holder: str = "run") -> Iterator[list[Gpu]]:
    """`count` devices of this host for the caller alone until the block ends; [] for count 0.

    Runs and baselines (benchmark.tasks.baselines) take the same locks; `holder` names the
    caller in the refusal's words ("the run cannot start here", "the baseline ...")."""
    if count <= 0:
        yield []
        return
    offered = host_gpus()
    if len(offered) < count:
        raise GpuUnavailable(
            f"the task needs {count} GPU(s); host {host_id()} offers {len(offered)} "
            f"(GPU_DEVICES={settings.GPU_DEVICES!r}), so the {holder} cannot start here"
        )
    connection = _connection()
    seconds = settings.GPU_LEASE_WAIT if wait is None else wait
    deadline = time.monotonic() + seconds
    while not (held := _take(connection, offered, count)):
        if time.monotonic() >= deadline:
            raise GpuUnavailable(
                f"the task needs {count} GPU(s); every one of host {host_id()}'s {len(offered)} was held by "
                f"other runs or baselines for the whole wait ({seconds:g} s"
                f"{', GPU_LEASE_WAIT' if wait is None else ''}), so the {holder} did not start"
            )
        time.sleep(POLL)
    stopping = threading.Event()
    keeper = threading.Thread(target=_keep, args=(held, stopping), name="gpu-lease", daemon=True)
    keeper.start()
    try:
        yield [gpu for gpu, _ in held]
    finally:
        stopping.set()
        keeper.join(timeout=5)
        _release(held)
