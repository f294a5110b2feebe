"""tests/ci_plugin.py in a pytest of its own: in CI a skipped real part fails the run, and kinds are counted."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SUITE = """
import pytest

@pytest.mark.docker
def test_docker_skipped():
    pytest.skip("no Docker engine reachable: sandbox.docker not importable")

@pytest.mark.podman
def test_podman_skipped():
    pytest.skip("podman unusable here: podman is not installed")

@pytest.mark.bwrap
def test_bwrap_runs():
    pass

@pytest.mark.shared_data("/nonexistent/mlgym/configs")
def test_reads_released_data():
    pass

@pytest.mark.browser
def test_browser_runs():
    pass

@pytest.mark.slurm
def test_slurm_missing():
    pytest.skip("Slurm is not installed here (slurmctld not found)")

def test_plain_skip():
    pytest.skip("nothing to do with a real part")

@pytest.mark.docker
@pytest.mark.registry
def test_registry_unreachable():
    pytest.skip("no container registry answers here")

@pytest.mark.postgres
def test_race_on_postgres():
    pass
"""


def _pytest(tmp_path: Path, *, ci: bool) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_suite.py").write_text(SUITE)
    # Django off for real: without its settings module (which pytest-django exports to children) the
    # plugin cannot see CI's PostgreSQL, whatever DATABASE_URL says.
    inherited = {k: v for k, v in os.environ.items() if k not in ("DJANGO_SETTINGS_MODULE", "DATABASE_URL")}
    env = {**inherited, "PYTHONPATH": str(ROOT), "CI": "true" if ci else ""}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.ci_plugin", "-p", "no:django", "-p", "no:cacheprovider"]
        + ["-p", "no:tests.redis_plugin", "-rA", "test_suite.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_it_fails_the_run_on_a_skipped_docker_podman_or_shared_data_test_in_ci(tmp_path: Path) -> None:
    result = _pytest(tmp_path, ci=True)
    assert result.returncode == 1, result.stdout
    out = result.stdout
    assert "CI=true: a skipped docker test is a failure. It was skipped because: no Docker engine reachable" in out
    assert "CI=true: a skipped podman test is a failure. It was skipped because: podman unusable here" in out
    assert "CI=true: a skipped shared_data test is a failure" in out and "/nonexistent/mlgym/configs" in out
    assert "SKIPPED [1] test_suite.py" in out and "no container registry answers here" in out  # skips stay skips
    # Django is off here, so the database is no PostgreSQL: the race test skips, and CI calls that a failure.
    assert "CI=true: a skipped slurm test is a failure. It was skipped because: Slurm is not installed" in out
    assert "CI=true: a skipped postgres test is a failure. It was skipped because: needs PostgreSQL" in out
    assert (
        "docker 0, podman 0, bwrap 1, browser 1, shared-data 0, slurm 0, registry 0, postgres 0 (of 2 tests executed) [CI=true]"
        in out
    )


def test_it_only_skips_outside_ci_and_still_counts(tmp_path: Path) -> None:
    result = _pytest(tmp_path, ci=False)
    assert result.returncode == 0, result.stdout
    assert "2 passed, 7 skipped" in result.stdout
    assert "needs PostgreSQL: on SQLite one writer at a time serializes the race away" in result.stdout
    assert (
        "docker 0, podman 0, bwrap 1, browser 1, shared-data 0, slurm 0, registry 0, postgres 0 (of 2 tests executed)"
        in result.stdout
    )
