"""The checks behind /healthz: database, Redis, live RQ workers per queue, sandbox backend."""

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
    counts = {name: 0 for name in QUEUES}
    for worker in workers:
        for name in worker.queue_names():
            if name in counts:
                counts[name] += 1
    missing = [name for name, count in counts.items() if count == 0]
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
    return info


def health_report() -> dict[str, Any]:
    parts = {
        "database": check_database(),
        "redis": check_redis(),
        "workers": check_workers(),
        "sandbox": check_sandbox(),
    }
    return {"ok": all(part["ok"] for part in parts.values()), **parts}
