"""HTTP through gunicorn (WSGI, as shipped) beside one ASGI server for everything (daphne with
Django's stock ASGI handler): server CPU per request, the same requests, in one run.

    python bench/web_servers.py [--requests 2000] [--path /accounts/login/]

Each server runs one process (gunicorn: one worker, one thread, config/gunicorn.py otherwise) on a
throw-away SQLite database; the client sends the requests one after another on fresh connections,
and the server processes' CPU time (user + system, from /proc) is divided by the number of
requests, so a busy shared machine changes the wall time, not the figure. The two servers take
turns for --rounds rounds; medians are printed.
"""

from __future__ import annotations

import argparse
import http.client
import os
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from config.redis_server import free_port  # noqa: E402
from config.servers import http_command  # noqa: E402


def _cpu(pids: list[int]) -> float:
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / tick
    return total


def _tree(pid: int) -> list[int]:
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [pid] + [int(c) for c in children]


def _get(port: int, path: str) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", path, headers={"Host": "127.0.0.1"})
    response = conn.getresponse()
    response.read()
    conn.close()
    return response.status


def _serve(kind: str, env: dict[str, str]) -> tuple[subprocess.Popen, int]:
    port = free_port()
    if kind == "gunicorn":
        command = http_command(bind=f"127.0.0.1:{port}")
        env = {**env, "WEB_PROCESSES": "1", "WEB_THREADS": "1", "WEB_MAX_REQUESTS": "0"}
    else:
        command = [
            sys.executable,
            "-m",
            "daphne",
            "-b",
            "127.0.0.1",
            "-p",
            str(port),
            "bench.support.stock_asgi:application",
        ]
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while True:
        try:
            _get(port, "/healthz")
            return proc, port
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                raise SystemExit(f"{kind} did not start") from None
            time.sleep(0.2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--path", default="/accounts/login/", help="an anonymous page (default: the sign-in form)")
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="web-servers-bench-")
    env = {**os.environ, "REFEREE_VAR_DIR": tmp, "SECRET_KEY": secrets.token_urlsafe(50), "DEBUG": "0"}
    env.pop("DATABASE_URL", None)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    results: dict[str, list[float]] = {"gunicorn (WSGI)": [], "daphne (stock ASGI)": []}
    try:
        for _ in range(args.rounds):
            for label, kind in (("gunicorn (WSGI)", "gunicorn"), ("daphne (stock ASGI)", "daphne")):
                proc, port = _serve(kind, env)
                try:
                    for _ in range(50):  # warm-up: imports, templates, the first queries
                        _get(port, args.path)
                    pids = _tree(proc.pid)
                    before = _cpu(pids)
                    statuses = {_get(port, args.path) for _ in range(args.requests)}
                    results[label].append((_cpu(pids) - before) / args.requests * 1000)
                    assert statuses == {200}, statuses
                finally:
                    proc.terminate()
                    proc.wait(timeout=30)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"web_servers: GET {args.path}, {args.requests} requests x {args.rounds} rounds, one server process each, "
          f"load average {'/'.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")  # fmt: skip
    for label, values in results.items():
        print(f"  {label:<22} server CPU per request: median {statistics.median(values):.2f} ms "
              f"(rounds: {', '.join(f'{v:.2f}' for v in values)})")  # fmt: skip
    wsgi, asgi = (statistics.median(v) for v in results.values())
    print(f"  one ASGI server for HTTP costs {asgi / wsgi:.2f}x the CPU of gunicorn per request")


if __name__ == "__main__":
    main()
