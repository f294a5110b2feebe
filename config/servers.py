"""The two server commands, one place for every caller: `make up` (scripts/up.py), the served stack
of the tests (`live_url`, tests/conftest.py) and the benchmarks that serve the platform
(bench/review_load.py). deploy/'s units run the same with a port instead of a socket.

HTTP: gunicorn with config/gunicorn.py serving config.wsgi. Websockets: daphne serving
config.asgi. Each takes a listening socket its caller bound (`fd`), or an address.
"""

from __future__ import annotations

import sys


def http_command(*, fd: int | None = None, bind: str | None = None, app: str | None = None) -> list[str]:
    address = f"fd://{fd}" if fd is not None else bind
    if not address:
        raise ValueError("http_command needs fd or bind")
    return [
        sys.executable,
        "-m",
        "gunicorn",
        "-c",
        "python:config.gunicorn",
        "--bind",
        address,
        *([app] if app else []),
    ]


def websocket_command(
    *, fd: int | None = None, port: int | None = None, app: str = "config.asgi:application"
) -> list[str]:
    where = ["--fd", str(fd)] if fd is not None else ["-b", "127.0.0.1", "-p", str(port)]
    return [sys.executable, "-m", "daphne", *where, "--proxy-headers", app]
