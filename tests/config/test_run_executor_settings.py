"""RUN_EXECUTOR and SLURM_PARTITION: one word for both run queues, or per queue; a typo stops start-up."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
READ = "from django.conf import settings; import json; print(json.dumps([settings.RUN_EXECUTORS, settings.SLURM_PARTITION]))"


def settings_with(**env: str) -> subprocess.CompletedProcess[str]:
    code = f"import django; django.setup(); {READ}"
    environ = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", **env}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=environ, capture_output=True, text=True, timeout=60
    )


def test_it_reads_one_executor_for_both_queues_or_one_per_queue(tmp_path) -> None:
    var = str(tmp_path)
    both = settings_with(REFEREE_VAR_DIR=var, RUN_EXECUTOR="slurm", SLURM_PARTITION="batch")
    assert json.loads(both.stdout) == [{"runs": "slurm", "gpu": "slurm"}, {"runs": "batch", "gpu": "batch"}], (
        both.stderr
    )
    split = settings_with(REFEREE_VAR_DIR=var, RUN_EXECUTOR="gpu=slurm", SLURM_PARTITION="runs=cpu, gpu=a100")
    assert json.loads(split.stdout) == [{"runs": "rq", "gpu": "slurm"}, {"runs": "cpu", "gpu": "a100"}], split.stderr
    default = settings_with(REFEREE_VAR_DIR=var, RUN_EXECUTOR="", SLURM_PARTITION="")
    assert json.loads(default.stdout) == [{"runs": "rq", "gpu": "rq"}, {"runs": "", "gpu": ""}], default.stderr


def test_it_stops_start_up_on_an_unknown_executor_or_queue(tmp_path) -> None:
    for env in ({"RUN_EXECUTOR": "kubernetes"}, {"RUN_EXECUTOR": "judge=slurm"}, {"SLURM_PARTITION": "cpus=x"}):
        result = settings_with(REFEREE_VAR_DIR=str(tmp_path), **env)
        assert result.returncode != 0
        ((name, value),) = env.items()
        assert f"ImproperlyConfigured: {name}={value!r}" in result.stderr
