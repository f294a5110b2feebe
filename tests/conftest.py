"""Shared fixtures: named personas, logged-in clients, Redis, Docker and the sandbox image."""

from __future__ import annotations

import pytest
import redis as redis_lib
from django.conf import settings
from django.test import Client

from accounts.roles import ADMIN, RESEARCHER, REVIEWER


def _make_user(username: str, role: str):
    from accounts.services import user_create

    return user_create(username=username, email=f"{username}@example.org", role=role, password="pw-" + username)


@pytest.fixture
def admin_user(db):
    return _make_user("ada_admin", ADMIN)


@pytest.fixture
def researcher(db):
    return _make_user("rita_researcher", RESEARCHER)


@pytest.fixture
def other_researcher(db):
    return _make_user("oscar_researcher", RESEARCHER)


@pytest.fixture
def reviewer(db):
    return _make_user("remy_reviewer", REVIEWER)


@pytest.fixture
def other_reviewer(db):
    return _make_user("vera_reviewer", REVIEWER)


@pytest.fixture
def people(admin_user, researcher, other_researcher, reviewer):
    """The permission checklist's personas by role: `owner` is the researcher who owns the object."""
    return {
        "admin": admin_user,
        "owner": researcher,
        "other": other_researcher,
        "reviewer": reviewer,
        "anonymous": None,
    }


@pytest.fixture
def client_for(db):
    """client_for(user) -> a Client logged in as user; client_for(None) -> anonymous."""

    def make(user) -> Client:
        client = Client()
        if user is not None:
            client.force_login(user)
        return client

    return make


@pytest.fixture
def redis_client():
    """The real Redis server of this test session, flushed before each test that asks for it."""
    client = redis_lib.Redis.from_url(settings.REDIS_URL)
    client.flushdb()
    yield client
    client.close()


def _docker_reachable() -> tuple[bool, str]:
    try:
        from sandbox import docker as sandbox_docker  # the only importer of the docker SDK
    except Exception as exc:  # the sandbox layer itself is missing or broken
        return False, f"sandbox docker backend not importable: {exc}"
    probe = getattr(sandbox_docker, "engine_available", None)
    if probe is None:
        return False, "sandbox.docker has no engine_available()"
    ok, detail = probe()
    return ok, detail


@pytest.fixture(scope="session")
def docker_available() -> None:
    ok, detail = _docker_reachable()
    if not ok:
        pytest.skip(f"no Docker engine reachable: {detail}")


@pytest.fixture(scope="session")
def sandbox_image(docker_available: None) -> str:
    """The hash-tagged sandbox image, found by its tag or built here once for the whole session.

    Every test marked `docker` gets it (see `_docker_tests_get_the_image`), wherever it lives, so a
    machine that has never built the image passes too: the first such test waits for the build."""
    from sandbox.image import build_image

    return build_image(log=lambda line: None)


@pytest.fixture
def public_dir():
    """A world-readable temp dir: bwrap under a root worker runs as an unprivileged uid, and
    pytest's tmp_path (under a 0700 directory) is not readable by it."""
    import shutil
    import tempfile
    from pathlib import Path

    path = Path(tempfile.mkdtemp(prefix="referee-test-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(autouse=True)
def _docker_tests_get_the_image(request: pytest.FixtureRequest) -> None:
    if request.node.get_closest_marker("docker"):
        request.getfixturevalue("sandbox_image")


def pytest_collection_modifyitems(config, items) -> None:
    """Tests marked `docker` skip, with the reason, where no engine is reachable."""
    docker_items = [item for item in items if item.get_closest_marker("docker")]
    if not docker_items:
        return
    ok, detail = _docker_reachable()
    if ok:
        return
    skip = pytest.mark.skip(reason=f"no Docker engine reachable: {detail}")
    for item in docker_items:
        item.add_marker(skip)


@pytest.fixture(scope="session")
def live_url():
    """Daphne serving the real ASGI app (HTTP and websockets) from a thread of the test process, so it
    shares the test database. One per session: Twisted's reactor cannot be started again once stopped,
    so a second server in the same process would bind its port and never answer."""
    import threading
    import time

    from daphne.server import Server
    from twisted.internet import reactor

    from config.asgi import application
    from config.redis_server import free_port

    port = free_port()
    server = Server(application, endpoints=[f"tcp:port={port}:interface=127.0.0.1"], signal_handlers=False, verbosity=0)
    thread = threading.Thread(target=server.run, name="daphne", daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.listening_addresses and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.listening_addresses, "daphne did not start"
    yield f"http://127.0.0.1:{port}"
    reactor.callFromThread(reactor.stop)
    thread.join(timeout=5)


@pytest.fixture
def default_endpoints(db, settings, monkeypatch):
    """The default endpoints as `make up` seeds them, with the server's keys in the environment."""
    from benchmark.llm.seed import endpoints_seed_from_settings
    from benchmark.models import ModelEndpoint

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    settings.ANTHROPIC_BASE_URL = None
    settings.OPENAI_BASE_URL = None
    endpoints_seed_from_settings()
    return {e.seed: e for e in ModelEndpoint.objects.exclude(seed="")}


@pytest.fixture
def fake_llm(default_endpoints):
    """The default endpoints and every SDK request answered by queued fake replies (see tests/llm_fakes.py)."""
    from benchmark.llm.transport import override_transport
    from tests.llm_fakes import FakeLLM

    fake = FakeLLM()
    fake.endpoints = default_endpoints
    with override_transport(fake):
        yield fake


def pytest_configure(config) -> None:
    """A fast password hasher: tests create many users and log them in; PBKDF2 would cost seconds."""
    from django.conf import settings as django_settings

    django_settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    # On PostgreSQL a statement of this session that runs for minutes is a fault to see, not to wait
    # for: without a limit, a runaway query in a live server's thread holds its locks and every later
    # test waits for them until its own timeout.
    default = django_settings.DATABASES["default"]
    if "postgresql" in default["ENGINE"]:
        options = default.setdefault("OPTIONS", {})
        options["options"] = (
            options.get("options", "") + " -c statement_timeout=180000 -c lock_timeout=120000"
        ).strip()
