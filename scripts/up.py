"""`make up`: migrate, seed, and supervise Redis, RQ workers, housekeeping, gunicorn and daphne until
Ctrl-C (and the Docker engine, when no service manager could start it and make up started dockerd).

Every child runs in its own process group; a child that dies is restarted with backoff and the
log says so (config/supervisor.py). Only Ctrl-C or SIGTERM stops everything. A second `make up`
while one is running says so and exits. Both listening sockets belong to this process: the web
port (REFEREE_PORT) is handed to gunicorn (`--bind fd://N`, HTTP), the websocket port
(REFEREE_WS_PORT, default the next one) to the WS_PROCESSES daphne processes (`--fd`); a port stays
open while the server behind it restarts.
"""

from __future__ import annotations

import http.client
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

BASE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE))

from django.core.exceptions import ImproperlyConfigured  # noqa: E402

from config.env import env_int  # noqa: E402
from config.redis_server import free_port, port_open, start_redis  # noqa: E402
from config.servers import http_command, websocket_command  # noqa: E402
from config.supervisor import Supervisor, pid_alive, state_file  # noqa: E402

PY = sys.executable
VAR = Path(os.environ.get("REFEREE_VAR_DIR", BASE / "var"))
PIDFILE = VAR / "up.pid"
REDIS_URL_FILE = VAR / "redis_url"  # read by config/settings.py when REDIS_URL is unset
HOST = os.environ.get("REFEREE_HOST", "127.0.0.1")
try:
    PORT = env_int("REFEREE_PORT", 8000, minimum=1, maximum=65535)
    WS_PORT = env_int("REFEREE_WS_PORT", PORT + 1, minimum=1, maximum=65535)  # daphne's: the websockets
except ImproperlyConfigured as exc:
    sys.exit(f"[up] {exc}")


def log(message: str) -> None:
    print(f"[up] {message}", flush=True)


def already_running() -> int | None:
    try:
        pid = int(PIDFILE.read_text().strip())
    except (FileNotFoundError, ValueError):
        return None
    return pid if pid_alive(pid) else None


def manage(*args: str, env: dict[str, str]) -> None:
    subprocess.run([PY, "manage.py", *args], cwd=BASE, env=env, check=True)


def build_image(env: dict[str, str], method: str | None) -> bool:
    log("building the sandbox image (first start only: a few minutes; reused while its inputs are unchanged) ...")
    args = [PY, "manage.py", "build_sandbox_image", *(["--method", method] if method else [])]
    return subprocess.run(args, cwd=BASE, env=env).returncode == 0


def sandbox_setup(env: dict[str, str], supervisor: Supervisor) -> bool:
    """Choose the sandbox backend for this machine (sandbox/choice.py), make what it needs, say
    which and why, and remember it in var/; False when no sandbox can run here (make up stops). A
    dockerd that make up started itself is supervised with the rest and stopped on Ctrl-C."""
    from sandbox import provision
    from sandbox.choice import BWRAP, DOCKER, Choice

    given = env.get("SANDBOX_BACKEND", "").strip()
    if given:
        log(f"sandbox backend: {given} (SANDBOX_BACKEND is set, so nothing is chosen or installed)")
        provision.remember(Choice(given, "SANDBOX_BACKEND is set"), VAR)
        if given == DOCKER and provision.engine()[0] and not build_image(env, None):
            log("the sandbox image could not be built; runs will fail with that reason until it is (see above)")
        return True
    settled = provision.settle(environ=env, log=log, var_dir=VAR, build_image=lambda method: build_image(env, method))
    choice, started = settled.choice, settled.engine
    if started is not None and started.proc is not None:
        if choice.backend == DOCKER:
            supervisor.adopt("docker engine", "docker", started.proc, started.restart, stop_last=True, stop_timeout=30)
        else:
            log(f"the sandbox does not use the Docker engine make up started ({choice.reason})")
            provision.stop_engine(started, log)
    provision.remember(choice, VAR)
    if choice.backend is None:
        log(f"no sandbox can run on this machine: {choice.reason}.")
        log(f"To give it one, run:  {choice.command}")
        log("(or SANDBOX_BACKEND=local SANDBOX_ALLOW_LOCAL=true make up, unisolated, for development only)")
        return False
    log(f"sandbox backend: {choice.backend}, because {choice.reason} (kept in {VAR / provision.CHOICE_FILE})")
    if choice.backend == BWRAP:
        from sandbox import backend_info

        log(f"bubblewrap's limits, weaker than Docker's: {backend_info(BWRAP)['isolation']}")
    env["SANDBOX_BACKEND"] = choice.backend
    return True


def spawner(args: list[str], env: dict[str, str], pass_fds: tuple[int, ...] = ()):
    def start() -> subprocess.Popen:
        return subprocess.Popen(args, cwd=BASE, env=env, start_new_session=True, pass_fds=pass_fds)

    return start


def listen(host: str, port: int) -> socket.socket:
    """A port bound here once and inherited by the server processes behind it."""
    sock = socket.create_server((host, port), backlog=1024, reuse_port=False)
    sock.set_inheritable(True)
    return sock


def wait_http(host: str, port: int, timeout: float) -> bool:
    """True once a web process answers on the port (the socket accepts before daphne serves)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            conn = http.client.HTTPConnection(host, port, timeout=5)
            conn.request("GET", "/healthz")
            conn.getresponse().read()
            conn.close()
            return True
        except (OSError, http.client.HTTPException):
            time.sleep(0.2)
    return False


class Startup:
    """What main() has set up so far: the lines of the ready banner, and what its clean-up must undo
    (the listening sockets it bound, the Redis URL file it wrote) even when a later step fails."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.sockets: list[socket.socket] = []
        self.wrote_redis_url = False


def refusal() -> int | None:
    """The exit status when this start must not go ahead (one is running already, or a port is
    taken by another program), checked before anything is written; None when it may start."""
    pid = already_running()
    if pid:
        log(f"Referee is already running (pid {pid}) at http://{HOST}:{PORT}/ - nothing to do.")
        return 0
    for port, variable in ((PORT, "REFEREE_PORT"), (WS_PORT, "REFEREE_WS_PORT")):
        if port_open(port, HOST):
            log(f"port {port} on {HOST} is taken by another program; set {variable} to use another one.")
            return 1
    return None


def stop_on_signals() -> None:
    """SIGTERM and SIGINT both end main() through its KeyboardInterrupt path, so one clean-up runs."""

    def on_signal(signum, frame) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)  # also when started with SIGINT ignored (e.g. in the background)


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    env["PYTHONUNBUFFERED"] = "1"
    return env


def add_redis(env: dict[str, str], supervisor: Supervisor, startup: Startup) -> None:
    """Use the REDIS_URL given, or supervise a local redis-server and write its URL to var/ so that
    manage.py commands run beside make up find it (config/settings.py reads that file)."""
    if env.get("REDIS_URL"):
        startup.started.append(f"Redis: using {env['REDIS_URL']} (from REDIS_URL)")
        return
    redis_port = env_int("REFEREE_REDIS_PORT", 6390, minimum=1, maximum=65535)
    if port_open(redis_port):
        redis_port = free_port()
    data_dir = VAR / "redis"
    supervisor.add("redis", "redis", lambda: start_redis(data_dir=data_dir, port=redis_port))
    env["REDIS_URL"] = f"redis://127.0.0.1:{redis_port}/0"
    REDIS_URL_FILE.write_text(env["REDIS_URL"] + "\n")
    REDIS_URL_FILE.chmod(0o600)
    startup.wrote_redis_url = True
    startup.started.append(f"Redis: started on 127.0.0.1:{redis_port}, data in {data_dir} (URL in {REDIS_URL_FILE})")


def prepare_database(env: dict[str, str]) -> None:
    log("migrating the database ...")
    manage("migrate", "--noinput", env=env)
    manage("vendor_static", env=env)
    manage("collectstatic", "--noinput", "-v", "0", env=env)
    manage("ensure_admin", env=env)
    log("loading demo data (built-in tasks, released MLGym / MLR-Bench data when present) ...")
    manage("seed_demo", env=env)


def add_workers(env: dict[str, str], supervisor: Supervisor, startup: Startup, referee_settings: ModuleType) -> None:
    # Workers and housekeeping skip the system checks (Django's own --skip-checks): `migrate` ran
    # them before, and they import every view through the URL conf, which a worker never serves.
    rqworker = [PY, "manage.py", "rqworker", "--skip-checks"]
    for i in range(referee_settings.RUN_WORKERS):
        supervisor.add(f"worker runs #{i + 1}", "workers", spawner([*rqworker, "runs"], env))
    supervisor.add("worker judge", "workers", spawner([*rqworker, "judge"], env))
    supervisor.add("worker default", "workers", spawner([*rqworker, "default"], env))
    from sandbox.gpu import host_gpus

    gpu_count = len(host_gpus()) if referee_settings.SANDBOX_BACKEND == "docker" else 0
    for i in range(gpu_count):  # one run per GPU at a time; each run leases its own (benchmark.runs.gpus)
        supervisor.add(f"worker gpu #{i + 1}", "workers", spawner([*rqworker, "gpu"], env))
    gpu_note = f", gpu x{gpu_count}" if gpu_count else " (no GPU here: GPU tasks wait for a GPU host's worker)"
    startup.started.append(f"RQ workers: runs x{referee_settings.RUN_WORKERS}, judge x1, default x1{gpu_note}")
    housekeeping = [PY, "manage.py", "housekeeping", "--skip-checks"]
    supervisor.add("housekeeping", "housekeeping", spawner(housekeeping, env))
    startup.started.append("housekeeping: reap_runs every 30 s, reap_judgments and sandbox_reaper every 60 s")


def add_web(env: dict[str, str], supervisor: Supervisor, startup: Startup, referee_settings: ModuleType) -> None:
    """HTTP: gunicorn (config/gunicorn.py) on the port this process binds and keeps, so the port
    stays open while gunicorn restarts; gunicorn's master restarts its own workers.
    Websockets: WS_PROCESSES daphnes (config/asgi.py) accepting on a second socket; the pages open
    their websockets there (WEBSOCKET_PORT). deploy/'s nginx routes both by path instead."""
    web_socket = listen(HOST, PORT)
    startup.sockets.append(web_socket)
    ws_socket = listen(HOST, WS_PORT)
    startup.sockets.append(ws_socket)
    env["WEBSOCKET_PORT"] = str(WS_PORT)
    fd, ws_fd = web_socket.fileno(), ws_socket.fileno()
    supervisor.add("web", "web", spawner(http_command(fd=fd), env, pass_fds=(fd,)))
    startup.started.append(
        f"gunicorn (HTTP): {referee_settings.WEB_PROCESSES} worker(s) x {env.get('WEB_THREADS', '4')} threads"
        f" on {HOST}:{PORT}"
    )
    for i in range(referee_settings.WS_PROCESSES):
        supervisor.add(f"websockets #{i + 1}", "web", spawner(websocket_command(fd=ws_fd), env, pass_fds=(ws_fd,)))
    startup.started.append(f"daphne (websockets) x{referee_settings.WS_PROCESSES} on {HOST}:{WS_PORT}")


def announce(startup: Startup) -> None:
    if not wait_http(HOST, PORT, timeout=60):
        log("the web process did not answer within 60 s; still supervising (see its output above)")
    print(f"\n  Referee is running at http://{HOST}:{PORT}/\n", flush=True)
    for line in startup.started:
        print(f"  - {line}")
    print(
        "\n  A process that dies is restarted (with backoff) and the log says so."
        f"\n  Health: http://{HOST}:{PORT}/healthz (each part when signed in as admin)    Stop: Ctrl-C\n",
        flush=True,
    )


def clean_up(supervisor: Supervisor, startup: Startup) -> None:
    supervisor.stop()
    if any(child.part == "docker" for child in supervisor.children):  # the dockerd it started is gone
        (VAR / "dockerd.pid").unlink(missing_ok=True)
    for sock in startup.sockets:
        sock.close()
    if startup.wrote_redis_url:
        REDIS_URL_FILE.unlink(missing_ok=True)
    PIDFILE.unlink(missing_ok=True)


def main() -> int:
    VAR.mkdir(parents=True, exist_ok=True)
    refused = refusal()
    if refused is not None:
        return refused
    PIDFILE.write_text(str(os.getpid()))
    supervisor = Supervisor(state_path=state_file(VAR), log=log)
    stop_on_signals()
    env = child_env()
    startup = Startup()
    try:
        # Every setting, strictly parsed, before anything starts: a typo stops here with its name.
        from config import settings as referee_settings

        add_redis(env, supervisor, startup)
        if not sandbox_setup(env, supervisor):
            return 1
        prepare_database(env)
        add_workers(env, supervisor, startup, referee_settings)
        add_web(env, supervisor, startup, referee_settings)
        announce(startup)
        supervisor.run_forever()
    except KeyboardInterrupt:
        return 0
    except subprocess.CalledProcessError as exc:
        log(f"a set-up step failed: {' '.join(map(str, exc.cmd))} (exit {exc.returncode})")
        return 1
    except (ImproperlyConfigured, OSError, RuntimeError) as exc:  # a bad setting, a port taken, no redis-server
        log(f"could not start: {type(exc).__name__}: {exc}")
        return 1
    finally:
        clean_up(supervisor, startup)
    return 0


if __name__ == "__main__":
    sys.exit(main())
