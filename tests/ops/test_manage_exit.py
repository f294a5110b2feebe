"""manage.py freezes the heap at exit (no final walk of it, ~0.2 s of every command; issue 20),
after every other exit handler: what a command says, logs or registers for exit still happens."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.processes import MANAGE, ROOT


def _manage(*args: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "REFEREE_VAR_DIR": str(tmp_path)}
    env.pop("DATABASE_URL", None)
    return subprocess.run([*MANAGE, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_exit_handlers_output_and_exit_codes_are_kept(tmp_path):
    log = tmp_path / "exit.log"
    code = (
        "import atexit, logging, weakref, sys\n"
        f"handler = logging.FileHandler({str(log)!r}, delay=True)\n"
        "logging.getLogger('exit-test').addHandler(handler)\n"
        "class Node: pass\n"
        "a, b = Node(), Node(); a.peer, b.peer = b, a  # a cycle, alive until exit\n"
        "weakref.finalize(a, print, 'finalizer ran')\n"
        "atexit.register(lambda: logging.getLogger('exit-test').error('logged at exit'))\n"
        "sys.stdout.write('x' * 200000)  # more than a pipe's buffer: flushed at exit\n"
    )
    result = _manage("shell", "--no-imports", "-c", code, tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("x" * 200000)
    assert result.stdout.endswith("finalizer ran\n")
    assert log.read_text() == "logged at exit\n"
    failing = _manage("housekeeping", "--only", "no_such_sweep", tmp_path=tmp_path)
    assert failing.returncode == 1
    assert "no such sweep" in failing.stderr
