"""The web processes' PostgreSQL connection pool (config.settings, DATABASE_POOL_SIZE; issue 16).

Django's ASGI handler runs each request in a thread of its own: without a pool every request
connects anew, and with DATABASE_CONN_MAX_AGE each request's thread leaves its connection open. A
real daphne serving config.asgi on this session's test database, as `make up` runs it.
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
    proc = db.popen([sys.executable, "-m", "daphne", "-p", str(port), "config.asgi:application"], **env)
    deadline = time.monotonic() + 60
    while True:
        try:
            _get(port, "/healthz", "")
            return proc, port
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                raise AssertionError(f"daphne did not start: {proc.stdout.read() if proc.stdout else ''}") from None
            time.sleep(0.2)


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    proc.wait(timeout=20)


@pytest.fixture
def reviewer_cookie(reviewer) -> str:
    client = Client()
    client.force_login(reviewer)
    return f"sessionid={client.cookies['sessionid'].value}"


def test_requests_share_a_few_pooled_connections_and_survive_dropped_ones(tmp_path, reviewer_cookie):
    if not on_postgres():
        pytest.skip("the pool is PostgreSQL's (DATABASE_URL)")
    app = f"referee-pool-{secrets.token_hex(4)}"
    proc, port = _serve(tmp_path, DATABASE_POOL_SIZE="3", PGAPPNAME=app)
    try:
        assert [_get(port, "/review/", reviewer_cookie) for _ in range(10)] == [200] * 10
        with ThreadPoolExecutor(max_workers=20) as pool:  # 40 at once: more requests than connections
            statuses = list(pool.map(lambda _: _get(port, "/review/", reviewer_cookie), range(40)))
        assert statuses == [200] * 40
        kept = _backends(app)
        # Kept for the next requests, and no more than the pool's size (a connection per request's
        # thread would leave up to 50 open; none kept would mean every request connected anew).
        assert 1 <= len(kept) <= 3, kept
        # PostgreSQL drops them (a restart, an idle timeout): the next requests get fresh ones.
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s", [app])
        assert [_get(port, "/review/", reviewer_cookie) for _ in range(5)] == [200] * 5
        assert not set(_backends(app)) & set(kept)
    finally:
        _stop(proc)


def test_without_the_pool_no_connection_outlives_its_request(tmp_path, reviewer_cookie):
    if not on_postgres():
        pytest.skip("the pool is PostgreSQL's (DATABASE_URL)")
    app = f"referee-nopool-{secrets.token_hex(4)}"
    proc, port = _serve(tmp_path, DATABASE_POOL_SIZE="0", PGAPPNAME=app)
    try:
        assert [_get(port, "/review/", reviewer_cookie) for _ in range(5)] == [200] * 5
        time.sleep(0.5)  # a closed connection's backend takes a moment to leave pg_stat_activity
        assert _backends(app) == []
    finally:
        _stop(proc)


def test_only_the_web_processes_pool_and_they_pass_no_mark_on(tmp_path):
    db = process_database(tmp_path / "var")
    probe = (
        "import os, django; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'config.settings'); {setup}\n"
        "from django.conf import settings\n"
        "print('pool' in settings.DATABASES['default'].get('OPTIONS', {}), 'REFEREE_WEB_PROCESS' in os.environ)"
    )
    env = {**db.env, "DATABASE_POOL_SIZE": "4"}

    def run(setup: str) -> str:
        code = probe.replace("{setup}", setup)
        result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=ROOT)
        assert result.returncode == 0, result.stderr[-2000:]
        return result.stdout.split()

    web, command = run("import config.asgi"), run("django.setup()")
    assert command == ["False", "False"]  # workers, commands and sweepers keep DATABASE_CONN_MAX_AGE
    assert web == [str(on_postgres()), "False"]  # on SQLite nothing to pool; the mark is gone after setup
