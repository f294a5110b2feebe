"""One database for a test and the real processes it starts (workers, reapers, `manage.py shell`).

On PostgreSQL (DATABASE_URL set, as in CI) the children connect to this session's test database,
so the test must be `django_db(transaction=True)`: what they commit, the test sees, and pytest-django
empties the tables afterwards. On SQLite the test database lives in memory and no other process can
open it, so the children share a migrated file database in the test's own var dir (WAL, the
production default); `rows()` reads it with plain SQL.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from django.db import connection

ROOT = Path(__file__).resolve().parents[1]
MANAGE = [sys.executable, str(ROOT / "manage.py")]
# `manage.py shell -c CODE` without the automatic model imports (and their "N objects imported" line).
SHELL = [*MANAGE, "shell", "--no-imports", "-c"]
_template: Path | None = None


def on_postgres() -> bool:
    return connection.vendor == "postgresql"


def _postgres_url() -> str:
    db = connection.settings_dict
    auth = quote(db["USER"] or "", safe="")
    if db["PASSWORD"]:
        auth += ":" + quote(db["PASSWORD"], safe="")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def _migrated_sqlite() -> Path:
    """Migrate once per test session; each test gets a copy (migrating costs seconds)."""
    global _template
    if _template is None:
        var = Path(tempfile.mkdtemp(prefix="referee-test-procdb-"))
        atexit.register(shutil.rmtree, var, ignore_errors=True)  # the session's template goes with it
        env = {**os.environ, "REFEREE_VAR_DIR": str(var), "DJANGO_SETTINGS_MODULE": "config.settings"}
        env.pop("DATABASE_URL", None)
        subprocess.run([*MANAGE, "migrate", "-v0"], cwd=ROOT, env=env, check=True)
        _template = var / "referee.sqlite3"
    return _template


@dataclass
class ProcessDatabase:
    env: dict[str, str]
    sqlite_path: Path | None

    @property
    def vendor(self) -> str:
        return "sqlite" if self.sqlite_path else "postgresql"

    def rows(self, sql: str, params: tuple[object, ...] = ()) -> list[tuple]:
        if self.sqlite_path is None:
            with connection.cursor() as cursor:
                cursor.execute(sql.replace("?", "%s"), params)
                return list(cursor.fetchall())
        db = sqlite3.connect(self.sqlite_path)
        try:
            return db.execute(sql, params).fetchall()
        finally:
            db.close()

    def shell(self, code: str, *, timeout: float = 120, **env: str) -> str:
        """`manage.py shell -c code` in a child on this database; its stdout."""
        result = subprocess.run(
            [*SHELL, code],
            cwd=ROOT,
            env={**self.env, **env},
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        assert result.returncode == 0, result.stderr[-3000:]
        return result.stdout

    def popen(self, args: list[str], **env: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            args,
            cwd=ROOT,
            env={**self.env, **env},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )


def process_database(var_dir: Path) -> ProcessDatabase:
    var_dir.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "REFEREE_VAR_DIR": str(var_dir), "DJANGO_SETTINGS_MODULE": "config.settings"}
    env["PYTHONUNBUFFERED"] = "1"
    if on_postgres():
        env["DATABASE_URL"] = _postgres_url()
        return ProcessDatabase(env=env, sqlite_path=None)
    env.pop("DATABASE_URL", None)
    path = var_dir / "referee.sqlite3"
    shutil.copyfile(_migrated_sqlite(), path)
    return ProcessDatabase(env=env, sqlite_path=path)


def mounts_under(path: Path) -> list[str]:
    """Mount points at or below `path` (from /proc/self/mountinfo)."""
    base = str(path)
    with open("/proc/self/mountinfo") as handle:
        points = [line.split()[4].replace("\\040", " ") for line in handle]
    return [p for p in points if p == base or p.startswith(base + "/")]


def sweep_disks(var_dir: Path) -> list[tuple[str, str]]:
    """The sandbox-disk sweep of the host whose var dir is `var_dir`, as its housekeeping runs it
    after a crash: a worker killed -9 never tears its loop-mounted disks down itself."""
    from django.test import override_settings

    from sandbox.reaper import Reaper

    with override_settings(SANDBOX_DISK_DIR=str(var_dir / "sandbox-disks")):
        return Reaper(log=lambda line: None).reap_disks()
