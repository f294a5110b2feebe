"""The web entry points tune the garbage collector (config.gc_tuning); WEB_GC_THRESHOLD=0 leaves it alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROBE = "import gc, json, {module}; print(json.dumps([gc.get_threshold()[0], gc.get_freeze_count()]))"


@pytest.mark.parametrize("module", ["config.wsgi", "config.asgi"])
@pytest.mark.parametrize("setting, tuned", [(None, True), ("5000", True), ("0", False)])
def test_it_freezes_start_up_and_raises_the_gen0_threshold(tmp_path, module, setting, tuned) -> None:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "REFEREE_VAR_DIR": str(tmp_path)}
    env.pop("WEB_GC_THRESHOLD", None)
    if setting is not None:
        env["WEB_GC_THRESHOLD"] = setting
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(module=module)], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    threshold, frozen = json.loads(out.stdout.strip().splitlines()[-1])
    if tuned:
        assert threshold == int(setting or 20_000) and frozen > 10_000
    else:
        assert threshold == 700 and frozen == 0
