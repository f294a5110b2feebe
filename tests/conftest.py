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


class LiveURL(str):
    """The served stack's address; `.procs` are its gunicorn master and its daphne."""

    def __new__(cls, url: str, procs: list, media_root: str = "") -> LiveURL:
        made = super().__new__(cls, url)
        made.procs = procs
        made.media_root = media_root  # where the stack reads stored files (figures) from
        return made


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix) -> None:
    """On SQLite the test database is a file (WAL, as deployed), not Django's shared in-memory one:
    the served stack of `live_url` runs in processes of its own and must open it too."""
    import tempfile
    from pathlib import Path

    default = settings.DATABASES["default"]
    if default["ENGINE"] == "django.db.backends.sqlite3":
        folder = Path(tempfile.mkdtemp(prefix="referee-test-db-"))
        default.setdefault("TEST", {})["NAME"] = str(folder / "test.sqlite3")


def _database_url() -> str:
    from django.db import connection

    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    from tests.processes import _postgres_url

    return _postgres_url()


@pytest.fixture(scope="session")
def live_url(django_db_setup, django_db_blocker):
    """The platform as `make up` serves it, on this session's test database: gunicorn with
    config/gunicorn.py for HTTP and daphne for websockets (config.servers, the commands `make up`
    runs), each a process of its own; the pages open their websockets on daphne's port
    (WEBSOCKET_PORT). Tests that use it commit what the servers must see (`transaction=True`), and
    settings changed in the test process do not reach them (only the environment does)."""
    import http.client
    import os
    import shutil
    import socket
    import subprocess
    import tempfile
    import time

    from config.redis_server import free_port
    from config.servers import http_command, websocket_command
    from tests.processes import ROOT

    with django_db_blocker.unblock():
        database = _database_url()
    port, ws_port = free_port(), free_port()
    media_root = tempfile.mkdtemp(prefix="referee-live-media-")
    env = {
        **os.environ,
        "DATABASE_URL": database,
        "SECRET_KEY": settings.SECRET_KEY,
        "REDIS_URL": settings.REDIS_URL,
        "WEBSOCKET_PORT": str(ws_port),
        "WEB_PROCESSES": "1",
        "DJANGO_SETTINGS_MODULE": "tests.live_settings",  # config.settings + the tests' hasher and media
        "REFEREE_LIVE_MEDIA_ROOT": media_root,
    }
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    procs = [
        subprocess.Popen(command, cwd=ROOT, env=env, start_new_session=True)
        for command in (http_command(bind=f"127.0.0.1:{port}"), websocket_command(port=ws_port))
    ]
    deadline = time.monotonic() + 60

    def answers(waiting: int) -> bool:
        try:
            if waiting == ws_port:  # daphne binds once the app is imported; it serves no plain HTTP
                socket.create_connection(("127.0.0.1", waiting), timeout=5).close()
                return True
            conn = http.client.HTTPConnection("127.0.0.1", waiting, timeout=5)
            conn.request("GET", "/healthz")
            conn.getresponse().read()
            conn.close()
            return True
        except (OSError, http.client.HTTPException):
            return False

    for waiting in (port, ws_port):
        while not answers(waiting):
            dead = [proc.args for proc in procs if proc.poll() is not None]
            assert not dead and time.monotonic() < deadline, f"the served stack did not start: {dead}"
            time.sleep(0.2)
    yield LiveURL(f"http://127.0.0.1:{port}", procs, media_root)
    for proc in procs:
        proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
    shutil.rmtree(media_root, ignore_errors=True)


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
