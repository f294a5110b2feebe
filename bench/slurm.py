"""Benchmark: runs executed by Slurm against runs executed by RQ workers, on the same machine.

    python bench/slurm.py [--runs 20] [--samples 5] [--steps 5] [--concurrency 2] [--slurm-conf LINE]

Starts its own Redis, a throw-away SQLite database (WAL) in a temporary folder, `--concurrency` RQ
workers on `runs`, and a one-node Slurm cluster from Debian's slurm-wlm and munge
(tests/slurm_cluster.py) whose node has `--concurrency` CPUs, so that both executors run as many
runs at once. Every run replays a stored trajectory of `--steps` `echo` commands in the Docker
sandbox (no model is called). For each executor, after one warm-up run:

  start       `--samples` runs launched one at a time: time from the launch (run_launch called)
              to the run's claim (the process driving it marks it running) and to its first
              committed step; median and max; for Slurm, also to the job script's start on the
              node (the line it writes to its output), which is Slurm's own share;
  per step    the harness's own time per step (run.params["harness_ms_p50"]: the loop's time
              around each step minus the command and the model), median over all runs;
  throughput  `--runs` runs launched at once: wall time from the launch to the last run ended,
              and runs per minute.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

MANAGE = [sys.executable, str(ROOT / "manage.py")]


def _setup(tmp: Path, concurrency: int, extra: str) -> dict[str, Any]:
    from config.redis_server import free_port, start_redis
    from tests import slurm_cluster

    missing = slurm_cluster.missing_binaries()
    if missing:
        sys.exit(f"Slurm is not installed here ({', '.join(missing)}): apt-get install slurm-wlm munge")
    port = free_port()
    redis = start_redis(data_dir=tmp / "redis", port=port, persist=False)
    os.environ.update(
        {
            "REDIS_URL": f"redis://127.0.0.1:{port}/0",
            "REFEREE_VAR_DIR": str(tmp / "var"),
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "CHANNEL_PREFIX": "referee-bench-slurm",
            "SANDBOX_BACKEND": os.environ.get("SANDBOX_BACKEND", "docker"),
            "PYTHONUNBUFFERED": "1",
        }
    )
    os.environ.pop("DATABASE_URL", None)
    (tmp / "var").mkdir()
    subprocess.run([*MANAGE, "migrate", "-v0"], cwd=ROOT, check=True)
    cluster = slurm_cluster.start(cpus=concurrency, extra=extra)
    import django

    django.setup()
    return {"redis": redis, "cluster": cluster}


def _seed(steps: int) -> tuple[Any, Any, Any, Any]:
    from accounts.roles import RESEARCHER
    from accounts.services import user_create
    from benchmark.models import AgentConfig, Run
    from benchmark.runs import progress
    from benchmark.tasks.loader import BUILTIN_DIR, task_sync

    owner = user_create(username="bench", email="bench@example.org", role=RESEARCHER, password="pw-bench-1")
    task = task_sync(BUILTIN_DIR / "prisoners_dilemma")
    original = Run.objects.create(task=task, agent=AgentConfig.objects.create(name="x"), owner=owner, status="finished")
    for index in range(steps):
        progress.step_append(run=original, thought="t", action=f"echo step-{index}", observation="", publish=False)
    replayer = AgentConfig.objects.create(name="replay", kind=AgentConfig.Kind.REPLAY, max_steps=steps)
    return owner, task, replayer, original


def _wait_ended(runs: list[Any], timeout: float = 900) -> None:
    from benchmark.models import Run

    pks = [run.pk for run in runs]
    deadline = time.monotonic() + timeout
    while Run.objects.filter(pk__in=pks, status__in=Run.ACTIVE).exists():
        if time.monotonic() > deadline:
            raise SystemExit(f"runs still active after {timeout:g} s")
        time.sleep(0.1)
    bad = list(Run.objects.filter(pk__in=pks).exclude(status="finished").values_list("code", "status", "error"))
    if bad:
        raise SystemExit(f"runs that did not finish: {bad}")


def _launch(seed: tuple[Any, Any, Any, Any], n: int) -> list[Any]:
    from benchmark.runs.services import run_launch

    owner, task, agent, original = seed
    return run_launch(owner=owner, tasks=[task], agent=agent, replay_of=original, n_runs=n)


def _measure(executor: str, seed: tuple[Any, Any, Any, Any], *, samples: int, runs: int) -> dict[str, Any]:
    from django.conf import settings
    from django.utils import timezone

    from benchmark.models import Run, Step

    settings.RUN_EXECUTORS = {"runs": executor, "gpu": executor}
    _wait_ended(_launch(seed, 1))  # warm-up: the first run of a worker or node imports more
    claims, firsts, every, scheduled = [], [], [], []
    for _ in range(samples):
        launched_at = timezone.now()
        (run,) = _launch(seed, 1)
        _wait_ended([run])
        run.refresh_from_db()
        first = Step.objects.filter(run=run).order_by("index").values_list("created_at", flat=True).first()
        claims.append((run.started_at - launched_at).total_seconds())
        if executor == "slurm":  # the job's script says when the node started it (benchmark.runs.slurm)
            output = (Path(settings.VAR_DIR) / "slurm" / f"{run.slurm_job_id}.out").read_text()
            node_start = float(re.search(r"started on \S+ at ([0-9.]+)", output).group(1))
            scheduled.append(node_start - launched_at.timestamp())
        firsts.append((first - launched_at).total_seconds())
        every.append(run)
    started = time.perf_counter()
    batch = _launch(seed, runs)
    _wait_ended(batch)
    wall = time.perf_counter() - started
    harness = [
        r.params["harness_ms_p50"]
        for r in Run.objects.filter(pk__in=[r.pk for r in [*every, *batch]])
        if "harness_ms_p50" in r.params
    ]
    return {
        "claim": claims,
        "scheduled": scheduled,
        "first": firsts,
        "harness_ms": statistics.median(harness) if harness else float("nan"),
        "wall": wall,
        "per_minute": 60 * runs / wall,
        "executor_seen": sorted(
            set(Run.objects.filter(pk__in=[r.pk for r in batch]).values_list("executor", flat=True))
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument(
        "--slurm-conf",
        action="append",
        default=[],
        help="a line added to the cluster's slurm.conf, e.g. SchedulerParameters=batch_sched_delay=0",
    )
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="referee-bench-slurm-"))
    tmp.chmod(0o755)
    parts = _setup(tmp, args.concurrency, "\n".join(args.slurm_conf) + "\n")
    workers = []
    try:
        seed = _seed(args.steps)
        workers = [
            subprocess.Popen(
                [*MANAGE, "rqworker", "runs", "--name", f"bench-slurm-{i}-{os.getpid()}"],
                cwd=ROOT,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
            for i in range(args.concurrency)
        ]
        results = {
            executor: _measure(executor, seed, samples=args.samples, runs=args.runs) for executor in ("rq", "slurm")
        }
    finally:
        for worker in workers:
            os.killpg(worker.pid, signal.SIGTERM)
            worker.wait(timeout=60)
        parts["cluster"].stop()
        parts["redis"].terminate()
        parts["redis"].wait(timeout=10)
        shutil.rmtree(tmp, ignore_errors=True)
    print(
        f"\n{args.samples} runs one at a time and {args.runs} at once per executor, {args.steps} echo steps each "
        f"(Docker sandbox, replayed trajectory), {args.concurrency} at a time (RQ workers / Slurm node CPUs), "
        f"{os.cpu_count()} cores here; slurm.conf extra: {args.slurm_conf or 'none'}\n"
    )
    print(f"{'':28}{'RQ worker':>14}{'Slurm job':>14}{'difference':>14}")

    def row(label: str, rq: float, slurm: float, unit: str) -> None:
        print(f"{label:28}{rq:>12.2f} {unit}{slurm:>12.2f} {unit}{slurm - rq:>+12.2f} {unit}")

    rq, sl = results["rq"], results["slurm"]
    row("launch -> claim, median", statistics.median(rq["claim"]), statistics.median(sl["claim"]), "s")
    row("launch -> claim, max", max(rq["claim"]), max(sl["claim"]), "s")
    scheduled = statistics.median(sl["scheduled"])
    print(f"{'  of which Slurm (to the job script), median':46}{scheduled:>8.2f} s")
    row("launch -> first step, median", statistics.median(rq["first"]), statistics.median(sl["first"]), "s")
    row("launch -> first step, max", max(rq["first"]), max(sl["first"]), "s")
    row("harness per step, median", rq["harness_ms"], sl["harness_ms"], "ms")
    row(f"{args.runs} runs, wall", rq["wall"], sl["wall"], "s")
    row(f"{args.runs} runs, per minute", rq["per_minute"], sl["per_minute"], " ")
    print(f"\nexecutors recorded on the runs: rq {rq['executor_seen']}, slurm {sl['executor_seen']}")


if __name__ == "__main__":
    main()
