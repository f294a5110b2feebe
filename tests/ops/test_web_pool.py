"""The web processes' database connections, as Django's docs advise per server (config.settings).

HTTP: gunicorn's threads keep their connection between requests (WEB_CONN_MAX_AGE, health-checked),
so a request neither connects anew nor loses its prepared statements. Websockets: daphne's
consumers run in a thread pool, where per-thread connections would never be reused: they take
theirs from Django's pool (DATABASE_POOL_SIZE). A real gunicorn, started with the command `make up`
runs (config.servers), on this session's test database.
"""

from __future__ import annotations

import http.client
import secrets
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.conf import settings
from django.db import connection
from django.test import Client

from config.redis_server import free_port
from config.servers import http_command
from tests.processes import ROOT, on_postgres, process_database

pytestmark = pytest.mark.django_db(transaction=True)


def _get(port: int, path: str, cookie: str) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", path, headers={"Cookie": cookie, "Host": "127.0.0.1"})
    status = conn.getresponse().status
    conn.close()
    return status


def _backends(app: str) -> list[int]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pid FROM pg_stat_activity WHERE application_name = %s", [app])
        return [row[0] for row in cursor.fetchall()]


def _serve(tmp_path, **env: str):  # type: ignore[no-untyped-def]
    port = free_port()
    db = process_database(tmp_path / "var")
    # This session's key: the server must accept the sessions the test signs in with.
    env = {"SECRET_KEY": settings.SECRET_KEY, **env}
    env = {"WEB_PROCESSES": "1", "WEB_THREADS": "4", **env}
    proc = db.popen(http_command(bind=f"127.0.0.1:{port}"), **env)
    deadline = time.monotonic() + 60
    while True:
        try:
            _get(port, "/healthz", "")
            return proc, port
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                raise AssertionError(f"gunicorn did not start: {proc.stdout.read() if proc.stdout else ''}") from None
            time.sleep(0.2)


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    proc.wait(timeout=20)


@pytest.fixture
def reviewer_cookie(reviewer) -> str:
    client = Client()
    client.force_login(reviewer)
    return f"sessionid={client.cookies['sessionid'].value}"


def test_requests_keep_one_connection_per_thread_and_survive_dropped_ones(tmp_path, reviewer_cookie):
    if not on_postgres():
        pytest.skip("checked on PostgreSQL (DATABASE_URL), where a connection is a backend process")
    app = f"referee-web-{secrets.token_hex(4)}"
    proc, port = _serve(tmp_path, PGAPPNAME=app)
    try:
        assert [_get(port, "/review/", reviewer_cookie) for _ in range(10)] == [200] * 10
        with ThreadPoolExecutor(max_workers=20) as pool:  # 40 at once: more requests than threads
            statuses = list(pool.map(lambda _: _get(port, "/review/", reviewer_cookie), range(40)))
        assert statuses == [200] * 40
        kept = _backends(app)
        # Kept for the next requests, one per thread at most (none kept: every request connected anew).
        assert 1 <= len(kept) <= 4, kept
        # PostgreSQL drops them (a restart, an idle timeout): the health check replaces them.
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s", [app])
        assert [_get(port, "/review/", reviewer_cookie) for _ in range(5)] == [200] * 5
        assert not set(_backends(app)) & set(kept)
    finally:
        _stop(proc)


def test_with_no_connection_age_no_connection_outlives_its_request(tmp_path, reviewer_cookie):
    if not on_postgres():
        pytest.skip("checked on PostgreSQL (DATABASE_URL), where a connection is a backend process")
    app = f"referee-noage-{secrets.token_hex(4)}"
    proc, port = _serve(tmp_path, WEB_CONN_MAX_AGE="0", PGAPPNAME=app)
    try:
        assert [_get(port, "/review/", reviewer_cookie) for _ in range(5)] == [200] * 5
        time.sleep(0.5)  # a closed connection's backend takes a moment to leave pg_stat_activity
        assert _backends(app) == []
    finally:
        _stop(proc)


def test_each_server_gets_its_connections_and_passes_no_mark_on(tmp_path):
    db = process_database(tmp_path / "var")
    probe = (
        "import os, django; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'config.settings'); {setup}\n"
        "from django.conf import settings\n"
        "d = settings.DATABASES['default']\n"
        "print('pool' in d.get('OPTIONS', {}), d.get('CONN_MAX_AGE', 0), 'REFEREE_WEB_SERVER' in os.environ)"
    )
    env = {**db.env, "DATABASE_POOL_SIZE": "4", "DATABASE_CONN_MAX_AGE": "0"}

    def run(setup: str) -> list[str]:
        code = probe.replace("{setup}", setup)
        result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=ROOT)
        assert result.returncode == 0, result.stderr[-2000:]
        return result.stdout.split()

    assert run("django.setup()") == ["False", "0", "False"]  # workers, commands, sweepers
    assert run("import config.wsgi") == ["False", "600", "False"]  # gunicorn: persistent connections
    assert run("import config.asgi") == [str(on_postgres()), "0", "False"]  # daphne: the pool (PostgreSQL)
