"""The checks behind /healthz: database, Redis, live RQ workers per queue, sandbox backend, the Slurm
controller (where a run queue is executed by Slurm), and the
children of `make up`'s supervisor. `status` is ok, degraded (a part is down only because the
supervisor is restarting the process behind it, or a child is restarting) or down."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import connection

QUEUES = ("runs", "judge", "default")


def check_database() -> dict[str, Any]:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        return {"ok": True, "vendor": connection.vendor}
    except Exception as exc:  # any driver error means "down"
        return {"ok": False, "error": str(exc)}


def check_redis() -> dict[str, Any]:
    import redis

    try:
        client = redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=1, socket_timeout=1)
        client.ping()
        return {"ok": True}
    except Exception as exc:
        return {"ok": False, "error": str(exc)}


def check_workers() -> dict[str, Any]:
    import django_rq
    from rq import Worker

    try:
        connection_ = django_rq.get_connection("default")
        workers = Worker.all(connection=connection_)
    except Exception as exc:
        return {"ok": False, "error": str(exc), "queues": {}}
    from sandbox.gpu import host_gpus

    # The `gpu` queue is counted everywhere, and needed only on a host that offers GPUs.
    counts = {name: 0 for name in (*QUEUES, "gpu")}
    for worker in workers:
        for name in worker.queue_names():
            if name in counts:
                counts[name] += 1
    needed = (*QUEUES, "gpu") if host_gpus() else QUEUES
    # A run queue that Slurm executes needs no RQ worker (check_slurm reports its controller).
    needed = tuple(name for name in needed if settings.RUN_EXECUTORS.get(name, "rq") == "rq")
    missing = [name for name in needed if counts[name] == 0]
    result: dict[str, Any] = {"ok": not missing, "queues": counts}
    if missing:
        result["error"] = f"no live worker for queue(s): {', '.join(missing)}"
    return result


def check_sandbox() -> dict[str, Any]:
    try:
        from sandbox import backend_info
    except ImportError as exc:
        return {"ok": False, "error": f"sandbox layer not importable: {exc}"}
    try:
        info = dict(backend_info())
    except Exception as exc:
        return {"ok": False, "error": str(exc), "backend": settings.SANDBOX_BACKEND}
    info["ok"] = bool(info.get("available"))
    from sandbox.provision import remembered

    chosen = remembered(settings.VAR_DIR)  # what `make up` chose for this machine, and why
    if chosen and chosen.get("backend") == info.get("backend"):
        info["chosen"] = {key: chosen.get(key) for key in ("reason", "chosen_at")}
    return info


def check_slurm() -> dict[str, Any] | None:
    """The Slurm controller and the configured partitions, where a run queue is executed by Slurm."""
    from benchmark.runs import slurm

    if not slurm.configured():
        return None
    result = slurm.controller_health()
    result["executors"] = dict(settings.RUN_EXECUTORS)
    return result


def check_supervisor() -> dict[str, Any] | None:
    """What `make up` says of its children; None where the platform runs without it (systemd)."""
    from config.supervisor import RUNNING, pid_alive, read_state, state_file

    state = read_state(state_file(settings.VAR_DIR))
    if state is None:
        return None
    children = state["children"]
    for child in children.values():
        if child["state"] == RUNNING and not pid_alive(child.get("pid")):
            child["state"] = "restarting"  # died since the supervisor last looked (it looks 5 times a second)
    restarting = sorted(name for name, child in children.items() if child["state"] != RUNNING)
    result: dict[str, Any] = {"ok": not restarting, "children": children}
    if restarting:
        result["error"] = f"restarting: {', '.join(restarting)}"
    return result


# The parts of the report that a restarting child of each kind takes away for a moment.
RESTART_AFFECTS = {"redis": ("redis", "workers"), "workers": ("workers",), "docker": ("sandbox",)}


def overall_status(parts: dict[str, dict[str, Any]]) -> str:
    supervisor = parts.get("supervisor")
    failing = {name for name, part in parts.items() if not part["ok"] and name != "supervisor"}
    if not failing:
        return "ok" if supervisor is None or supervisor["ok"] else "degraded"
    if supervisor is None:
        return "down"
    explained = {
        affected
        for child in supervisor["children"].values()
        if child["state"] != "running"
        for affected in RESTART_AFFECTS.get(child["part"], ())
    }
    return "degraded" if failing <= explained else "down"


def health_report() -> dict[str, Any]:
    parts = {
        "database": check_database(),
        "redis": check_redis(),
        "workers": check_workers(),
        "sandbox": check_sandbox(),
    }
    slurm = check_slurm()
    if slurm is not None:
        parts["slurm"] = slurm
    supervisor = check_supervisor()
    if supervisor is not None:
        parts["supervisor"] = supervisor
    return {"ok": all(part["ok"] for part in parts.values()), "status": overall_status(parts), **parts}
