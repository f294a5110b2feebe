"""`make up`: migrate, seed, and supervise Redis, RQ workers and daphne until Ctrl-C.

Every child runs in its own process group so that Ctrl-C (or SIGTERM) stops all of
them and their children; a second `make up` while one is running says so and exits.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

BASE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE))

from config.redis_server import free_port, port_open, start_redis  # noqa: E402

PY = sys.executable
VAR = Path(os.environ.get("REFEREE_VAR_DIR", BASE / "var"))
PIDFILE = VAR / "up.pid"
HOST = os.environ.get("REFEREE_HOST", "127.0.0.1")
PORT = int(os.environ.get("REFEREE_PORT", "8000"))


def log(message: str) -> None:
    print(f"[up] {message}", flush=True)


def already_running() -> int | None:
    try:
        pid = int(PIDFILE.read_text().strip())
    except (FileNotFoundError, ValueError):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        return pid
    return pid


def manage(*args: str, env: dict[str, str]) -> None:
    subprocess.run([PY, "manage.py", *args], cwd=BASE, env=env, check=True)


def docker_engine_up() -> bool:
    """An engine socket to talk to (the Docker SDK needs no CLI)."""
    return bool(os.environ.get("DOCKER_HOST")) or Path("/var/run/docker.sock").exists()


class Supervisor:
    def __init__(self) -> None:
        self.children: list[tuple[str, subprocess.Popen]] = []
        self.stopping = False

    def add(self, name: str, proc: subprocess.Popen) -> None:
        self.children.append((name, proc))

    def spawn(self, name: str, args: list[str], env: dict[str, str]) -> subprocess.Popen:
        proc = subprocess.Popen(args, cwd=BASE, env=env, start_new_session=True)
        self.add(name, proc)
        return proc

    def stop(self) -> None:
        if self.stopping:
            return
        self.stopping = True
        # A second Ctrl-C must not interrupt the clean-up and leave children behind.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        log("stopping everything it started ...")
        for _, proc in reversed(self.children):
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + 10
        for name, proc in reversed(self.children):
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                log(f"{name} did not stop in time; killing it")
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait()
        log("all stopped")


def main() -> int:
    VAR.mkdir(parents=True, exist_ok=True)
    pid = already_running()
    if pid:
        log(f"Referee is already running (pid {pid}) at http://{HOST}:{PORT}/ - nothing to do.")
        return 0
    if port_open(PORT, HOST):
        log(f"port {PORT} on {HOST} is taken by another program; set REFEREE_PORT to use another one.")
        return 1
    PIDFILE.write_text(str(os.getpid()))
    supervisor = Supervisor()

    def on_signal(signum, frame) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)  # also when started with SIGINT ignored (e.g. in the background)
    env = dict(os.environ)
    env.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    env["PYTHONUNBUFFERED"] = "1"
    started: list[str] = []
    try:
        if env.get("REDIS_URL"):
            started.append(f"Redis: using {env['REDIS_URL']} (from REDIS_URL)")
        else:
            redis_port = int(env.get("REFEREE_REDIS_PORT", "6390"))
            if port_open(redis_port):
                redis_port = free_port()
            supervisor.add("redis", start_redis(data_dir=VAR / "redis", port=redis_port))
            env["REDIS_URL"] = f"redis://127.0.0.1:{redis_port}/0"
            started.append(f"Redis: started on 127.0.0.1:{redis_port}, data in {VAR / 'redis'}")

        log("migrating the database ...")
        manage("migrate", "--noinput", env=env)
        manage("vendor_static", env=env)
        manage("collectstatic", "--noinput", "-v", "0", env=env)
        manage("ensure_admin", env=env)
        if env.get("SANDBOX_BACKEND", "docker") == "docker" and docker_engine_up():
            log(
                "building the sandbox image (first start only: about 2 minutes; reused while its inputs are unchanged) ..."
            )
            built = subprocess.run([PY, "manage.py", "build_sandbox_image"], cwd=BASE, env=env)
            if built.returncode != 0:
                log("the sandbox image could not be built; runs will fail with that reason until it is (see above)")
        elif env.get("SANDBOX_BACKEND", "docker") == "docker":
            log("no Docker engine is reachable: agent runs and baselines will report the sandbox as unavailable")
        log("loading demo data (built-in tasks, released MLGym / MLR-Bench data when present) ...")
        manage("seed_demo", env=env)

        run_workers = int(env.get("RUN_WORKERS", "2"))
        for i in range(run_workers):
            supervisor.spawn(f"worker runs #{i + 1}", [PY, "manage.py", "rqworker", "runs"], env)
        supervisor.spawn("worker judge", [PY, "manage.py", "rqworker", "judge"], env)
        supervisor.spawn("worker default", [PY, "manage.py", "rqworker", "default"], env)
        started.append(f"RQ workers: runs x{run_workers}, judge x1, default x1")
        supervisor.spawn("run reaper", [PY, "manage.py", "reap_runs", "--loop", "--interval", "30"], env)
        started.append("run reaper (marks runs whose worker died as interrupted, every 30 s)")
        supervisor.spawn("judgment reaper", [PY, "manage.py", "reap_judgments", "--loop"], env)
        started.append("judgment reaper (fails judgments whose worker died, every 60 s)")
        supervisor.spawn("sandbox reaper", [PY, "manage.py", "sandbox_reaper", "--loop"], env)
        started.append("sandbox reaper (every 60 s)")
        supervisor.spawn(
            "daphne",
            [PY, "-m", "daphne", "-b", HOST, "-p", str(PORT), "--proxy-headers", "config.asgi:application"],
            env,
        )
        started.append(f"daphne (HTTP + websockets) on {HOST}:{PORT}")
        deadline = time.monotonic() + 30
        while not port_open(PORT, HOST) and time.monotonic() < deadline:
            time.sleep(0.1)
        print(f"\n  Referee is running at http://{HOST}:{PORT}/\n", flush=True)
        for line in started:
            print(f"  - {line}")
        print(
            f"\n  Health: http://{HOST}:{PORT}/healthz (each part when signed in as admin)    Stop: Ctrl-C\n",
            flush=True,
        )
        while True:
            for name, proc in supervisor.children:
                code = proc.poll()
                if code is not None:
                    log(f"{name} exited with code {code}; stopping the platform")
                    return 1
            time.sleep(0.5)
    except KeyboardInterrupt:
        return 0
    except subprocess.CalledProcessError as exc:
        log(f"a set-up step failed: {' '.join(map(str, exc.cmd))} (exit {exc.returncode})")
        return 1
    finally:
        supervisor.stop()
        PIDFILE.unlink(missing_ok=True)


if __name__ == "__main__":
    sys.exit(main())
