"""Give the test session a real Redis server (and the Docker sandbox backend by default).

Loaded with `-p tests.redis_plugin` so that it runs before pytest-django reads the
settings: REDIS_URL must be set before config.settings is imported.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

_server = None
_port: int | None = None
_data_dir: Path | None = None


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args) -> None:
    global _server, _port, _data_dir
    # Tests use the Docker backend unless told otherwise, whatever `make up` remembered in var/.
    os.environ.setdefault("SANDBOX_BACKEND", "docker")
    if os.environ.get("REDIS_URL"):
        return
    from config.redis_server import free_port, start_redis

    port = free_port()
    data_dir = Path(tempfile.mkdtemp(prefix="referee-test-redis-"))
    _server = start_redis(data_dir=data_dir, port=port, persist=False)
    _port, _data_dir = port, data_dir
    os.environ["REDIS_URL"] = f"redis://127.0.0.1:{port}/0"
    # Keep test channel groups and queues apart from a running `make up`.
    os.environ.setdefault("CHANNEL_PREFIX", "referee-test")


def pytest_unconfigure(config) -> None:
    if _server is not None and _server.poll() is None:
        _server.terminate()
        try:
            _server.wait(timeout=5)
        except Exception:
            _server.kill()


# -- fault injection: the session's own server, killed and started again on the same port ---------


def session_redis_owned() -> bool:
    return _server is not None


def session_redis_kill() -> None:
    """kill -9 the session's redis-server (it loses everything: it runs without persistence)."""
    assert _server is not None, "REDIS_URL was given: this session does not own its Redis"
    if _server.poll() is None:
        _server.kill()
        _server.wait(timeout=10)


def session_redis_start() -> None:
    """Start the session's redis-server again, empty, on the same port (a no-op while it runs)."""
    global _server
    from config.redis_server import start_redis

    assert _server is not None and _port is not None and _data_dir is not None
    if _server.poll() is None:
        return
    _server = start_redis(data_dir=_data_dir, port=_port, persist=False)
