"""What of the launching process's environment a Slurm job gets, and what Slurm keeps of it: the
settings by name, no secret in Slurm's records (`scontrol show job`, the batch script, the
controller's state files), and in the job only the secrets its run loop needs, from a file only
the job's user could read and that the job removes. Real cluster, real job."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from benchmark.models import AgentConfig, ModelEndpoint
from benchmark.runs import slurm
from config.env import READ
from tests.benchmark.runs.test_slurm import SLURM, partition, run_row, seed, wait_for
from tests.benchmark.runs_support import builtin_task
from tests.processes import process_database

pytestmark = [pytest.mark.slurm, pytest.mark.django_db(transaction=True)]

SECRET_KEY = "marker-secret-key-0b3c9d" + "k" * 24  # the run loop needs it (stored endpoint keys)
NOT_NEEDED = {"ANTHROPIC_API_KEY": "sk-marker-anthropic-5e71", "REFEREE_TEST_TOKEN": "marker-token-a4d2"}


def slurm_records(job_id: str, cluster) -> str:  # type: ignore[no-untyped-def]
    """Everything Slurm keeps of the job that a user or its admins can read."""
    env = {**os.environ, **cluster.env}
    show = subprocess.run(["scontrol", "show", "job", "-dd", job_id], env=env, capture_output=True, text=True)
    script = subprocess.run(
        ["scontrol", "write", "batch_script", job_id, "-"], env=env, capture_output=True, text=True, check=True
    )
    files = "".join(
        path.read_bytes().decode(errors="replace") for path in Path(cluster.base).rglob("*") if path.is_file()
    )
    return show.stdout + script.stdout + files


def job_environ(db, pk: int) -> dict[str, str]:  # type: ignore[no-untyped-def]
    pid = db.rows("select worker_name from benchmark_run where id = ?", (pk,))[0][0].rpartition(":")[2]
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(item.decode().partition("=")[::2] for item in raw if item)


@pytest.mark.slow
@pytest.mark.docker
def test_it_keeps_secrets_out_of_slurms_records_and_the_job_gets_only_those_it_needs(slurm_node, tmp_path):
    db = process_database(tmp_path)
    partition("DOWN", slurm_node)  # pending: Slurm holds the job's description, environment and script
    try:
        ((pk, code, _, job_id),) = seed(db, ["echo one", "sleep 300"], SECRET_KEY=SECRET_KEY, **NOT_NEEDED)
        records = slurm_records(job_id, slurm_node)
        env_file = tmp_path / "slurm" / f"{code}.env"
        assert oct(env_file.stat().st_mode & 0o777) == "0o600"
    finally:
        partition("UP", slurm_node)
    assert "RUN_HEARTBEAT_EVERY=0.5" in records  # a setting, by name: the records were read where they lie
    assert str(tmp_path) in records  # REFEREE_VAR_DIR
    for secret in (SECRET_KEY, *NOT_NEEDED.values()):
        assert secret not in records
    wait_for(lambda: run_row(db, pk)[3] == 1, timeout=180, what="the run's first step")
    environ = job_environ(db, pk)
    assert environ["SECRET_KEY"] == SECRET_KEY and environ["REFEREE_VAR_DIR"] == str(tmp_path)
    assert environ["REDIS_URL"] == os.environ["REDIS_URL"]  # the test session's Redis: a secret too
    assert not set(NOT_NEEDED) & set(environ)
    # Nor the user's login environment on the node, which slurmd loads (su -) for a name list
    # without ALL: Slurm marks that with SLURM_GET_USER_ENV, and a login shell sets SHELL and MAIL.
    assert not {"SLURM_GET_USER_ENV", "SHELL", "MAIL"} & set(environ)
    assert not env_file.exists()  # read once and removed by the job
    db.shell(
        f"from benchmark.models import Run; from benchmark.runs.services import run_cancel; "
        f"assert run_cancel(run=Run.objects.get(pk={pk}))",
        **SLURM,
    )
    wait_for(lambda: run_row(db, pk)[0] == "cancelled", timeout=60, what="the run to stop")


def test_it_hands_a_job_the_key_of_its_agents_endpoint_and_no_other(researcher, monkeypatch, settings):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-marker-openai")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-marker-anthropic")
    monkeypatch.setenv("SANDBOX_BACKEND", "podman")
    monkeypatch.setenv("JUDGE_MAX_TOKENS", "4096")
    monkeypatch.setenv("UNRELATED_VARIABLE", "x")
    monkeypatch.setenv("EMAIL_HOST_PASSWORD", "marker-mail-password")  # a setting, a secret, not the run's
    endpoint = ModelEndpoint.objects.create(
        name="openai-env", provider="openai", key_source="env", key_env_var="OPENAI_API_KEY"
    )
    agent = AgentConfig.objects.create(name="m", model="openai:gpt-x", endpoint=endpoint)
    run = slurm.Run.objects.create(task=builtin_task("prisoners_dilemma"), agent=agent, owner=researcher)
    exported, secrets = slurm.job_environment(run)
    assert "SANDBOX_BACKEND" in exported and "PATH" in exported and "UNRELATED_VARIABLE" not in exported
    assert secrets.get("OPENAI_API_KEY") == "sk-marker-openai" and "ANTHROPIC_API_KEY" not in secrets
    assert "JUDGE_MAX_TOKENS" in READ and "JUDGE_MAX_TOKENS" not in secrets  # a number, not a token
    assert "EMAIL_HOST_PASSWORD" in READ and "EMAIL_HOST_PASSWORD" not in {*exported, *secrets}
    assert not {"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "SECRET_KEY", "DATABASE_URL", "REDIS_URL"} & set(exported)
    assert "--export=ALL" in slurm.sbatch_args(run)  # ALL of sbatch's own environment, which is:
    environment = slurm.sbatch_environment(exported)
    assert environment["SANDBOX_BACKEND"] == "podman" and set(environment) <= {*exported, "SLURM_CONF"}
    assert not {"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "UNRELATED_VARIABLE", "EMAIL_HOST_PASSWORD"} & set(environment)
