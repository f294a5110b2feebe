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


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args) -> None:
    global _server
    # Tests use the Docker backend unless told otherwise, whatever `make up` remembered in var/.
    os.environ.setdefault("SANDBOX_BACKEND", "docker")
    if os.environ.get("REDIS_URL"):
        return
    from config.redis_server import free_port, start_redis

    port = free_port()
    data_dir = Path(tempfile.mkdtemp(prefix="referee-test-redis-"))
    _server = start_redis(data_dir=data_dir, port=port, persist=False)
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
