"""deploy/: the systemd units verify, run commands that exist, and the example environment parses."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
UNITS = ROOT / "deploy" / "systemd"
INSTANCES = {"referee-ws@.service": "8101", "referee-worker@.service": "runs-1"}


def _installed_units(tmp_path: Path) -> list[Path]:
    """The units as they would be installed, with /srv/referee being this checkout."""
    units = []
    for unit in sorted(UNITS.glob("referee*.service")) + sorted(UNITS.glob("*.target")):
        text = unit.read_text().replace("/srv/referee", str(ROOT)).replace("/etc/referee", str(tmp_path))
        name = unit.name.replace("@.", f"@{INSTANCES[unit.name]}.") if unit.name in INSTANCES else unit.name
        (tmp_path / name).write_text(text)
        units.append(tmp_path / name)
    shutil.copy(UNITS / "referee.env", tmp_path / "referee.env")
    return units


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_it_ships_units_that_systemd_accepts(tmp_path: Path) -> None:
    units = _installed_units(tmp_path)
    assert {u.name for u in units} >= {
        "referee-setup.service",
        "referee-web.service",
        "referee-ws@8101.service",
        "referee-worker@runs-1.service",
        "referee-housekeeping.service",
        "referee.target",
    }
    result = subprocess.run(["systemd-analyze", "verify", "--man=no", *map(str, units)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Unknown" not in result.stderr, result.stderr


def _exec_lines() -> list[str]:
    return [
        line.split("=", 1)[1] for unit in UNITS.glob("*.service") for line in unit.read_text().splitlines()
        if line.startswith("ExecStart=")
    ]  # fmt: skip


def test_it_runs_only_management_commands_that_exist() -> None:
    commands = {m.group(1) for line in _exec_lines() for m in [re.search(r"manage\.py (\w[\w-]*)", line)] if m}
    assert commands == {"migrate", "vendor_static", "collectstatic", "ensure_admin", "rqworker", "housekeeping"}
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"}
    for command in sorted(commands):
        result = subprocess.run([sys.executable, "manage.py", "help", command], cwd=ROOT, env=env, capture_output=True)
        assert result.returncode == 0, (command, result.stderr[-500:])


def test_it_takes_the_queue_of_a_worker_from_its_instance_name() -> None:
    (line,) = [line for line in _exec_lines() if "rqworker" in line]
    # systemd unescapes $$ and %% and fills in %i; the shell then strips "-N" from the instance.
    script = line.replace("$$", "$").replace("%%", "%")
    script = script.replace("exec /srv/referee/.venv/bin/python manage.py rqworker --skip-checks", "echo")
    args = script.split(" ", 2)  # /bin/sh -c '...' worker %i
    for instance, queue in (("runs-1", "runs"), ("judge-1", "judge"), ("default-12", "default")):
        command = args[2].replace("%i", instance)
        shell = subprocess.run(f"{args[0]} {args[1]} {command}", shell=True, capture_output=True, text=True)
        assert shell.stdout.strip() == queue, (command, shell.stdout, shell.stderr)


def test_it_ships_an_environment_that_settings_accept(tmp_path: Path) -> None:
    env = {"PATH": os.environ["PATH"], "DJANGO_SETTINGS_MODULE": "config.settings"}
    for line in (UNITS / "referee.env").read_text().splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.partition("=")
            env[name] = value
    env["REFEREE_VAR_DIR"] = str(tmp_path)
    code = "from django.conf import settings as s; print(s.DEBUG, s.DATABASES['default']['HOST'], s.REDIS_URL, s.SANDBOX_BACKEND)"
    result = subprocess.run([sys.executable, "-c", f"import django; django.setup(); {code}"], cwd=ROOT, env=env,
                            capture_output=True, text=True)  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == ["False", "db.internal", "redis://:secret@redis.internal:6379/0", "docker"]
