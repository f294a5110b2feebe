"""Slurm as the executor of runs: one `sbatch` job per run, running the same run loop on a node.

A run queue (`runs`, `gpu`) whose executor is `slurm` (settings.RUN_EXECUTORS) does not put the run
on RQ: after the launch commits, `job_submit` hands Slurm a batch job that runs
`manage.py execute_run <id>` (benchmark.management.commands.execute_run) with the launching
process's settings, so the node reaches the same database and Redis (`job_environment`: Slurm
carries only named, non-secret variables; the secrets the run loop needs go in a file only the
job's user can read, never into Slurm's records). The job asks for
the task's resources (CPUs, memory, `--gres=gpu:N`), a time limit estimated from the run's limits
(capped at SLURM_TIME_LIMIT_MAX), the configured partition and account, and no requeue: a run
Slurm ended is `interrupted`, with Slurm's reason, and Referee's own Resume goes on from its
committed steps. Slurm's words are what users read: an sbatch refusal fails the run with them, a
queued run's page says "queued on Slurm (job N, reason: Resources)", and the reaper (`slurm_reap`,
called by `manage.py reap_runs`) ends a run whose job Slurm ended (time limit, node failure,
preemption) with the job's state and reason.
"""

from __future__ import annotations

import logging
import math
import os
import re
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.utils import timezone

from benchmark.models import Run
from benchmark.runs import gpus, progress
from benchmark.runs.queue_state import ORPHAN_GRACE, queued_since, run_not_queued
from benchmark.runs.timeouts import command_timeout_of

log = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parents[2]
COMMAND_TIMEOUT = 30.0  # sbatch retries an unreachable controller for a while before it gives up
PAGE_TIMEOUT = 5.0
SETUP_SECONDS = 300  # image, sandbox and workspace before the first step
MODEL_SECONDS = 120  # one model call, on top of each step's command timeout
HARNESS_MEMORY_MB = 1024  # the run loop itself, beside the sandbox's own limit
# Slurm states in which the job may still run (or start) the run.
LIVE_STATES = {
    "PENDING",
    "CONFIGURING",
    "RUNNING",
    "COMPLETING",
    "SUSPENDED",
    "REQUEUED",
    "REQUEUE_HOLD",
    "REQUEUE_FED",
    "RESIZING",
    "SIGNALING",
    "STAGE_OUT",
}
CANCEL_KEY = "referee:slurm-cancel:{code}"
# Exported to the job besides the settings Referee read (config.env.READ): what the process itself
# and its container engines need. Nothing else of the launching process's environment goes along.
BASE_ENV = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "TMPDIR",
    "PYTHONPATH",
    "VIRTUAL_ENV",
    "PYTHONUNBUFFERED",
    "DJANGO_SETTINGS_MODULE",
    "DOCKER_HOST",
    "DOCKER_CONFIG",
    "CONTAINERS_CONF",
    "CONTAINERS_STORAGE_CONF",
    "CONTAINERS_REGISTRIES_CONF",
    "SANDBOX_DEBIAN_MIRROR",
)
# Secret settings the run loop needs (a password may sit in a URL): the database, Redis, SECRET_KEY
# (it decrypts stored endpoint keys) and the literature tool's key. Slurm keeps a job's exported
# environment in its state files (and in accounting with AccountingStoreFlags=job_env), which its
# administrators, and with some setups other users, can read: these travel in a file instead.
RUN_SECRETS = frozenset({"SECRET_KEY", "DATABASE_URL", "REDIS_URL", "SEMANTIC_SCHOLAR_API_KEY"})
# Any other setting named like a secret (EMAIL_HOST_PASSWORD, ...) does not go at all.
SECRET_NAME = re.compile(r"(^|_)(KEY|SECRET|PASSWORD|PASSWD|TOKEN|CREDENTIALS?)$")


class SlurmError(Exception):
    """A Slurm command failed; the message is Slurm's own words (its stderr)."""


# What Slurm's end states mean, beside Slurm's own word for them (which is kept).
STATE_GLOSS = {
    "PREEMPTED": "a job of a higher-priority partition or QOS took its resources",
    "NODE_FAIL": "its node stopped answering the controller",
    "TIMEOUT": "it reached its time limit",
    "OUT_OF_MEMORY": "it used more memory than it asked for",
    "BOOT_FAIL": "its node failed to boot",
    "DEADLINE": "it reached its deadline",
}


@dataclass(frozen=True)
class JobState:
    job_id: str
    state: str
    reason: str
    nodes: str
    # Neither squeue nor sacct knows the job (it ended more than MinJobAge ago and accounting is
    # off, or the controller lost its state): `reason` says what sacct answered.
    forgotten: bool = False

    @property
    def live(self) -> bool:
        return self.state in LIVE_STATES and not self.forgotten

    def ended_words(self) -> str:
        if self.forgotten:
            return (
                f"Slurm no longer knows job {self.job_id} and cannot say how it ended "
                f"(squeue: not in the controller's records; sacct: {self.reason})"
            )
        where = f" on {self.nodes}" if self.nodes and self.nodes != "(null)" else ""
        reason = f" (reason: {self.reason})" if self.reason and self.reason != "None" else ""
        gloss = f": {STATE_GLOSS[self.state]}" if self.state in STATE_GLOSS else ""
        return f"Slurm ended job {self.job_id}{where}: {self.state}{reason}{gloss}"


def executor_for(queue: str) -> str:
    return settings.RUN_EXECUTORS.get(queue, Run.Executor.RQ)


def executor_of_task(task: Any) -> str:
    return executor_for(gpus.queue_name(task))


def configured() -> bool:
    return Run.Executor.SLURM in settings.RUN_EXECUTORS.values()


def _slurm(
    args: list[str],
    *,
    stdin: str | None = None,
    timeout: float = COMMAND_TIMEOUT,
    any_status: bool = False,
    env: dict[str, str] | None = None,
) -> str:
    """Run a Slurm client command; its stdout, or SlurmError with its stderr (unless `any_status`:
    `scontrol ping` says DOWN on stdout and exits 1). `env`: the command's whole environment."""
    try:
        result = subprocess.run(
            args, input=stdin, capture_output=True, text=True, timeout=timeout, check=False, env=env
        )
    except FileNotFoundError:
        raise SlurmError(f"{args[0]} is not installed on this host (Slurm's client commands are needed)") from None
    except subprocess.TimeoutExpired:
        raise SlurmError(f"{args[0]} did not answer within {timeout:g} s (is slurmctld reachable?)") from None
    if result.returncode != 0 and not (any_status and result.stdout.strip()):
        words = " ".join(line.strip() for line in result.stderr.splitlines() if line.strip())
        raise SlurmError(words or f"{args[0]} exited with status {result.returncode}")
    return result.stdout


# -- submit ----------------------------------------------------------------------------------------
def time_limit_minutes(run: Run) -> int:
    """Setup plus, per step, the command timeout and a model call; capped by SLURM_TIME_LIMIT_MAX."""
    max_steps = int(run.params.get("max_steps", run.agent.max_steps))
    estimate = SETUP_SECONDS + max_steps * (command_timeout_of(run) + MODEL_SECONDS)
    return max(1, math.ceil(min(estimate, settings.SLURM_TIME_LIMIT_MAX) / 60))


def sbatch_args(run: Run) -> list[str]:
    from benchmark.tasks.resources import task_gpus

    limits = (run.task.config or {}).get("sandbox", {})
    queue = gpus.queue_name(run.task)
    args = [
        "sbatch",
        "--parsable",
        f"--job-name=referee-run-{str(run.code)[:8]}",
        f"--cpus-per-task={max(1, math.ceil(float(limits.get('cpus', 1.0))))}",
        f"--mem={int(limits.get('memory_mb', 1024)) + HARNESS_MEMORY_MB}M",
        f"--time={time_limit_minutes(run)}",
        "--no-requeue",  # a run Slurm ended is interrupted; Resume replays its steps, not the whole run
        # ALL of the environment sbatch itself is given (sbatch_environment): the named settings, no
        # key of the web or worker process. A list of names without ALL would make slurmd load the
        # user's login environment on the node first (`su - user`, implied --get-user-env): 1.1 s
        # of every job's start here, and variables nobody chose.
        "--export=ALL",
        f"--chdir={ROOT}",
        f"--output={output_dir() / '%j.out'}",
    ]
    if gpus_needed := task_gpus(run.task):
        args.append(f"--gres=gpu:{gpus_needed}")
    if partition := settings.SLURM_PARTITION.get(queue):
        args.append(f"--partition={partition}")
    if settings.SLURM_ACCOUNT:
        args.append(f"--account={settings.SLURM_ACCOUNT}")
    return args


def job_environment(run: Run) -> tuple[list[str], dict[str, str]]:
    """(the variables Slurm exports to the run's job, by name; the secrets its file holds).

    Exported: BASE_ENV and every setting this process read from its environment, that is set and
    holds no secret. The file: RUN_SECRETS that are set and the one provider key the run loop calls
    with, that of the agent's endpoint when it names an environment variable. Other secrets stay."""
    from config.env import READ

    exported, secrets = [], {}
    for name in sorted(set(BASE_ENV) | READ):
        if name not in os.environ:
            continue
        if name in RUN_SECRETS:
            secrets[name] = os.environ[name]
        elif not SECRET_NAME.search(name):
            exported.append(name)
    endpoint = run.agent.endpoint
    if endpoint is not None and endpoint.key_source == endpoint.KeySource.ENV:
        name = endpoint.key_env_var.strip()
        if name in os.environ:
            secrets[name] = os.environ[name]
    return exported, secrets


def sbatch_environment(exported: list[str]) -> dict[str, str]:
    """sbatch's own environment, which `--export=ALL` hands to the job: the exported settings and
    the client's own SLURM_CONF (where the cluster's configuration lies), nothing else."""
    names = [*exported, "SLURM_CONF"]
    return {name: os.environ[name] for name in names if name in os.environ}


def secrets_path(run: Run) -> Path:
    return output_dir() / f"{run.code}.env"


def secrets_write(run: Run, secrets: dict[str, str]) -> Path:
    """The job's secrets as shell assignments, in a file only this user can read (the job runs as
    this user, on a node sharing VAR_DIR, as its output file does); the job removes it once read."""
    path = secrets_path(run)
    path.unlink(missing_ok=True)  # a fresh file, so the mode below is the one it has
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.writelines(f"export {name}={shlex.quote(value)}\n" for name, value in secrets.items())
    return path


def secrets_forget(run: Run) -> None:
    """The file of a job that will not read it (never started, cancelled, refused)."""
    secrets_path(run).unlink(missing_ok=True)


def output_dir() -> Path:
    path = Path(settings.VAR_DIR) / "slurm"
    path.mkdir(parents=True, exist_ok=True)
    return path


def batch_script(run: Run) -> str:
    python = settings.SLURM_PYTHON or sys.executable
    lines = ["#!/bin/bash", f"# Referee run {run.code}"]
    # When the node started the job, in its output: the share of a run's start that is Slurm's own.
    lines.append('echo "job $SLURM_JOB_ID started on $(hostname) at $(date +%s.%N)"')
    # The node's GPUs for this job are the ones Slurm allocated (its gres), not every GPU of the node.
    lines.append('if [ -n "${SLURM_JOB_GPUS:-}" ]; then export GPU_DEVICES="$SLURM_JOB_GPUS"; fi')
    # The secrets, read once and removed: without them the run loop would open another database.
    env_file = shlex.quote(str(secrets_path(run)))
    lines.append(f"if [ ! -r {env_file} ]; then echo 'the run settings file {env_file} is gone' >&2; exit 1; fi")
    lines.append(f". {env_file} && rm -f {env_file}")
    lines.append(f"exec {shlex.quote(python)} {shlex.quote(str(ROOT / 'manage.py'))} execute_run {run.pk}")
    return "\n".join(lines) + "\n"


def job_submit(run: Run) -> str:
    """Submit the run's job; its id (saved on the run), or SlurmError in sbatch's words."""
    exported, secrets = job_environment(run)
    secrets_write(run, secrets)
    try:
        out = _slurm(sbatch_args(run), stdin=batch_script(run), env=sbatch_environment(exported))
    except SlurmError:
        secrets_forget(run)
        raise
    job_id = out.strip().split(";")[0]
    if not job_id.isdigit():
        secrets_forget(run)
        raise SlurmError(f"sbatch answered {out.strip()!r}, not a job id")
    Run.objects.filter(pk=run.pk).update(slurm_job_id=job_id)
    run.slurm_job_id = job_id
    log.info("run %s submitted to Slurm as job %s", run.code, job_id)
    return job_id


def job_cancel(job_id: str) -> None:
    _slurm(["scancel", job_id])


# -- state -----------------------------------------------------------------------------------------
def job_states(job_ids: list[str], *, timeout: float = COMMAND_TIMEOUT) -> dict[str, JobState]:
    """What the controller says of these jobs (ended ones too, for MinJobAge after their end); a job
    it has forgotten is looked up in accounting (sacct), and where that is off or does not know the
    job either, it is `forgotten`, with sacct's words."""
    ids = sorted({job_id for job_id in job_ids if job_id})
    if not ids:
        return {}
    states: dict[str, JobState] = {}
    try:
        out = _slurm(["squeue", "-h", "-t", "all", "-j", ",".join(ids), "-o", "%i|%T|%r|%N"], timeout=timeout)
    except SlurmError as exc:
        if "Invalid job id" not in str(exc):
            raise
        out = ""
    for line in out.splitlines():
        job_id, state, reason, nodes = (line.split("|") + ["", "", ""])[:4]
        states[job_id.strip()] = JobState(job_id.strip(), state.strip(), reason.strip(), nodes.strip())
    forgotten = [job_id for job_id in ids if job_id not in states]
    if forgotten:
        unknown = "it has no record of the job"
        try:
            out = _slurm(
                # --allusers: the reaper's account need not be the one that submitted (a site may
                # run housekeeping elsewhere); where PrivateData hides others' jobs, sacct says so.
                [
                    "sacct",
                    "-n",
                    "-X",
                    "-P",
                    "--allusers",
                    "-j",
                    ",".join(forgotten),
                    "-o",
                    "JobID,State,Reason,NodeList",
                ],
                timeout=timeout,
            )
        except SlurmError as exc:  # "Slurm accounting storage is disabled": nothing more to learn
            out, unknown = "", str(exc)
        for line in out.splitlines():
            job_id, state, reason, nodes = (line.split("|") + ["", "", ""])[:4]
            # sacct says "CANCELLED by 0" (the uid that cancelled): the state is the first word; and
            # "None assigned" for the nodes of a job that never started.
            nodes = "" if nodes == "None assigned" else nodes
            states[job_id] = JobState(job_id, state.split(" ")[0], reason, nodes)
        for job_id in forgotten:
            states.setdefault(job_id, JobState(job_id, "", unknown, "", forgotten=True))
    return states


def queued_note(run: Run) -> str:
    """For a queued Slurm run's page: "queued on Slurm (job N, reason: Resources)"; "" otherwise."""
    if run.executor != Run.Executor.SLURM or run.status != Run.Status.QUEUED or not run.slurm_job_id:
        return ""
    try:
        # A page view waits a few seconds at most for the controller.
        state = job_states([run.slurm_job_id], timeout=PAGE_TIMEOUT).get(run.slurm_job_id)
    except SlurmError as exc:
        return f"queued on Slurm (job {run.slurm_job_id}; its state could not be read: {exc})"
    if state is None or state.forgotten:
        return f"queued on Slurm (job {run.slurm_job_id}, no longer known to the controller)"
    if state.state == "PENDING":
        return f"queued on Slurm (job {state.job_id}, reason: {state.reason})"
    return f"queued on Slurm (job {state.job_id}, {state.state.lower()} on {state.nodes or 'a node'})"


def controller_health() -> dict[str, Any]:
    """For /healthz: `scontrol ping` and the configured partitions' availability, in Slurm's words."""
    try:
        ping = " ".join(_slurm(["scontrol", "ping"], timeout=10, any_status=True).split("*")[0].split())
    except SlurmError as exc:
        return {"ok": False, "error": str(exc)}
    result: dict[str, Any] = {"ok": "is UP" in ping, "controller": ping, "partitions": {}}
    if not result["ok"]:
        result["error"] = ping
        return result
    partitions: dict[str, str] = {}  # partition ("" = the cluster's default) -> the queues it serves
    for queue, executor in settings.RUN_EXECUTORS.items():
        if executor == Run.Executor.SLURM:
            partition = settings.SLURM_PARTITION.get(queue) or ""
            partitions[partition] = ", ".join(filter(None, (partitions.get(partition), queue)))
    for partition, queue in partitions.items():
        args = ["sinfo", "-h", "-o", "%P|%a|%D|%t"] + (["-p", partition] if partition else [])
        try:
            rows = [line.split("|") for line in _slurm(args, timeout=10).splitlines() if line.strip()]
        except SlurmError as exc:
            result.update(ok=False, error=str(exc))
            continue
        if partition and not rows:
            result.update(ok=False, error=f"partition {partition!r} (queue {queue}) is not known to Slurm")
        for name, available, count, node_state in rows:
            if not partition and not name.endswith("*"):
                continue  # the default partition is the one sinfo marks with *
            entry = result["partitions"].setdefault(name.rstrip("*"), {"available": available, "nodes": {}})
            entry["nodes"][node_state] = entry["nodes"].get(node_state, 0) + int(count)
    return result


# -- the reaper's part -----------------------------------------------------------------------------
def cancel_asked(run: Run) -> None:
    """A cancel of a Slurm run: a queued one's job is cancelled now (it would start for nothing); a
    running one stops itself (the cancelling flow), and the reaper scancels a job still running
    SLURM_CANCEL_GRACE seconds after this mark."""
    if run.executor != Run.Executor.SLURM or not run.slurm_job_id:
        return
    if run.status == Run.Status.CANCELLED:
        secrets_forget(run)
        try:
            job_cancel(run.slurm_job_id)
        except SlurmError as exc:
            log.warning("scancel of run %s's job %s failed: %s", run.code, run.slurm_job_id, exc)
        return
    progress_connection().set(CANCEL_KEY.format(code=run.code), str(time.time()), nx=True, ex=7 * 24 * 3600)


def progress_connection() -> Any:
    import django_rq

    return django_rq.get_queue("runs").connection


def slurm_reap() -> list[tuple[Run, str]]:
    """Slurm runs whose job Slurm ended while the run was active: running ones are `interrupted`
    (steps kept), cancelling ones `cancelled`, queued ones `failed` (never started), each with the
    job's state and reason; a cancelling run's job past its grace is scancelled. Returns (run, what)."""
    from benchmark.runs import heartbeat

    done = []
    cutoff = timezone.now() - ORPHAN_GRACE
    for run in Run.objects.filter(executor=Run.Executor.SLURM, status=Run.Status.QUEUED, slurm_job_id=""):
        # Committed, but the launching process died before sbatch answered: no job will claim it.
        if queued_since(run) < cutoff and run_not_queued(
            run, reason="its launch ended before sbatch gave it a Slurm job"
        ):
            done.append((run, "failed"))
    active = list(Run.objects.filter(executor=Run.Executor.SLURM, status__in=Run.ACTIVE).exclude(slurm_job_id=""))
    if not active:
        return done
    states = job_states([run.slurm_job_id for run in active])
    forgotten_running = [run.code for run in active if run.status != Run.Status.QUEUED]
    beating = heartbeat.beating_codes(forgotten_running, progress_connection()) if forgotten_running else set()
    for run in active:
        state = states.get(run.slurm_job_id)
        if state is None:
            continue
        if state.forgotten and str(run.code) in beating:
            # The controller lost the job but its process still beats (a slurmctld restarted without
            # its state): the run goes on; when the process stops, this ends it with Slurm's words.
            log.warning("run %s: %s, but its process is alive", run.code, state.ended_words())
            continue
        if state.live:
            if run.status == Run.Status.CANCELLING and _cancel_grace_over(run):
                try:
                    job_cancel(run.slurm_job_id)
                    done.append((run, "scancelled"))
                except SlurmError as exc:
                    log.warning("scancel of job %s failed: %s", run.slurm_job_id, exc)
            continue
        if what := run_job_ended(run, state):
            done.append((run, what))
    return done


def _cancel_grace_over(run: Run) -> bool:
    asked = progress_connection().get(CANCEL_KEY.format(code=run.code))
    return asked is not None and time.time() - float(asked) >= settings.SLURM_CANCEL_GRACE


def run_job_ended(run: Run, state: JobState) -> str:
    """End an active run whose job Slurm ended; what was done ("" if the run had ended meanwhile)."""
    now = timezone.now()
    words = state.ended_words()
    updated = Run.objects.filter(pk=run.pk, status=Run.Status.CANCELLING).update(
        status=Run.Status.CANCELLED, exit_status="exit_cancelled", finished_at=now
    )
    what = "cancelled" if updated else ""
    if not updated:
        updated = Run.objects.filter(pk=run.pk, status=Run.Status.RUNNING).update(
            status=Run.Status.INTERRUPTED,
            exit_status="interrupted",
            error=f"{words} while it ran this run. Every committed step is kept; Resume continues it.",
            finished_at=now,
        )
        what = "interrupted" if updated else ""
    if not updated:
        updated = Run.objects.filter(pk=run.pk, status=Run.Status.QUEUED).update(
            status=Run.Status.FAILED,
            exit_status="not_queued",
            error=f"Not started: {words} before it started the run (its output: "
            f"{output_dir() / (state.job_id + '.out')}). Launch it again.",
            finished_at=now,
        )
        what = "failed" if updated else ""
    if updated:
        secrets_forget(run)  # a job that never started leaves its file
        run.refresh_from_db()
        progress.run_status_send(run)
    return what
