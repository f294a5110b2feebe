"""Import what you use (issue 20): the processes `make up` keeps running stay light.

Every web process, worker and the housekeeping sweeper runs `django.setup()` and the system checks
(which import the URL configuration); workers then import the job modules, housekeeping the sweep
commands. None of that may load the LLM SDKs or the statistics stack: those weigh ~120 MB and
seconds of start time per process, and only a model call or an agreement analysis needs them; nor
Twisted (~25 MB), which only the daphne web server needs. The judge worker is the exception: it
preloads the SDKs before forking its work horses (config/workers.py), tested below.
Checked in a fresh interpreter, since this test process has imported everything long ago.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

BASE = Path(__file__).resolve().parents[2]

# twisted: the web server's (daphne), never a worker's or the URL conf's. numpy (~15 MB, a fifth of
# a second): the agreement, leaderboard and judge-statistics paths'. The URL conf imports every view
# module as Django's docs show, so the web processes (which serve those pages) load numpy; workers
# and housekeeping start with `--skip-checks` (make up, deploy/; `migrate` ran the checks before
# them), so they never import the URL conf.
HEAVY = ("anthropic", "openai", "scipy", "pandas", "pingouin", "plotly", "twisted", "numpy")
SDKS = tuple(name for name in HEAVY if name != "numpy")

# What the workers and housekeeping import: the job modules RQ imports by dotted path, the sweeps.
LIGHT = (
    "benchmark.runs.jobs",
    "benchmark.research.jobs",
    "benchmark.research.fabrication",
    "judge.jobs",
    "accounts.management.commands.housekeeping",
    "benchmark.management.commands.reap_runs",
    "judge.management.commands.reap_judgments",
    "sandbox.management.commands.sandbox_reaper",
)
# What the web processes import: the URL conf (every view) and the ASGI app (websockets).
WEB = ("config.urls", "config.asgi")


PROBE = """
import importlib, json, sys
import django
django.setup()
from django.core.management import call_command
if sys.argv[2] == "checks":
    call_command("check", verbosity=0)  # the system checks import the URL conf, as a command's start does
for name in sys.argv[3:]:
    importlib.import_module(name)
heavy = sys.argv[1].split(",")
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules} & set(heavy))))
"""


def _loaded(tmp_path: Path, modules: tuple[str, ...], heavy: tuple[str, ...], *, checks: bool = False) -> list[str]:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "REFEREE_VAR_DIR": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-c", PROBE, ",".join(heavy), "checks" if checks else "no-checks", *modules],
        cwd=BASE,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_it_starts_the_workers_and_housekeeping_without_the_sdks_or_the_statistics_stack(tmp_path: Path) -> None:
    assert _loaded(tmp_path, LIGHT, HEAVY) == []


def test_the_web_processes_load_every_view_but_neither_the_sdks_nor_scipy(tmp_path: Path) -> None:
    assert _loaded(tmp_path, WEB, SDKS, checks=True) == []


def test_make_up_and_deploy_start_workers_and_housekeeping_without_the_checks() -> None:
    up = (BASE / "scripts" / "up.py").read_text()
    assert '"rqworker", "--skip-checks"]' in up and '"housekeeping", "--skip-checks"' in up
    assert '"rqworker", "runs"' not in up and '"rqworker", "gpu"' not in up
    unit = (BASE / "deploy" / "systemd" / "referee-worker@.service").read_text()
    assert "--skip-checks" in unit


def test_it_runs_an_agreement_job_with_numpy_but_without_the_sdks_or_scipy(tmp_path: Path) -> None:
    # The agreement job computes with numpy (on use: RQ imports it in the work horse, per job).
    assert _loaded(tmp_path, ("agreement.jobs",), HEAVY) == ["numpy"]


def test_it_sees_a_heavy_import_when_one_happens(tmp_path: Path) -> None:
    # The probe is not blind: the one module that imports the SDKs (a model call's path) shows them.
    assert _loaded(tmp_path, ("benchmark.llm.providers",), HEAVY) == ["anthropic", "openai"]


def test_it_keeps_the_written_out_normal_quantile_equal_to_scipys() -> None:
    from scipy import stats as sps

    from agreement.stats.core import Z975

    assert Z975 == float(sps.norm.ppf(0.975))


WORKER_PROBE = """
import json, sys
import django
django.setup()
import django_rq
worker = django_rq.get_worker(sys.argv[2])  # the class `manage.py rqworker` uses (settings.RQ)
worker.work(burst=True)  # an empty queue on a Redis database of its own: starts, then returns
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules} & set(sys.argv[1].split(",")))))
"""


def _worker_loaded(tmp_path: Path, queue: str, redis_url: str) -> list[str]:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "REFEREE_VAR_DIR": str(tmp_path),
        "REDIS_URL": redis_url,
    }
    result = subprocess.run(
        [sys.executable, "-c", WORKER_PROBE, ",".join(HEAVY), queue],
        cwd=BASE,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_it_preloads_the_sdks_in_the_judge_worker_only(tmp_path: Path, redis_client) -> None:
    # A judgment is one model call in a forked work horse: without the SDKs in the worker's own
    # process every judgment imported them again (config/workers.py). Run workers stay light.
    from django.conf import settings

    url = settings.REDIS_URL.rsplit("/", 1)[0] + "/9"
    assert _worker_loaded(tmp_path, "judge", url) == ["anthropic", "openai"]
    assert _worker_loaded(tmp_path, "runs", url) == []
