"""Runs under faults: short runs while a worker and Redis are killed on a schedule.

    python bench/faults.py [--runs 20] [--steps 4] [--workers 2] [--backend bwrap]
                           [--ttl 30] [--reap-every 30] [--redis-down 5]

Starts, in a var dir of its own: a redis-server (append-only file, as `make up`), --workers
`rqworker runs` processes and a `reap_runs --loop` sweeper, on a SQLite database (WAL). It launches
--runs model-free runs (replays of a stored trajectory of --steps commands of ~0.5 s each), then:

- kill -9 of one worker and its work horse while it runs a run, the worker started again a second
  later (what `make up`'s supervisor does);
- kill -9 of Redis while runs are running, started again --redis-down seconds later (< 60 s: the
  runs must ride it out).

When every run has settled it resumes the interrupted ones once and waits again. It prints runs
finished / interrupted / resumed / failed, steps lost (committed steps missing or out of order;
goal 0), how long the reaper took to notice the killed worker against how long RQ's own worker
key still had to live (the obvious alternative: RQ's registry alone), and how long after Redis
came back the first step was committed. Defaults are production's (heartbeat TTL 30 s, reaper
every 30 s, as `make up`'s housekeeping).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BASE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE))

from config.redis_server import free_port, start_redis  # noqa: E402

MANAGE = [sys.executable, str(BASE / "manage.py")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--backend", default="bwrap", help="sandbox backend (bwrap needs no image build)")
    parser.add_argument("--ttl", type=float, default=30.0, help="RUN_HEARTBEAT_TTL, seconds")
    parser.add_argument("--reap-every", type=float, default=30.0, help="reap_runs interval, seconds")
    parser.add_argument("--redis-down", type=float, default=5.0, help="seconds Redis stays dead")
    args = parser.parse_args()

    var = Path(tempfile.mkdtemp(prefix="referee-bench-faults-"))
    port = free_port()
    redis = start_redis(data_dir=var / "redis", port=port, persist=True)
    env = {
        **os.environ,
        "REFEREE_VAR_DIR": str(var),
        "REDIS_URL": f"redis://127.0.0.1:{port}/0",
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "SANDBOX_BACKEND": args.backend,
        "CHANNEL_PREFIX": "referee-bench-faults",
        "RUN_HEARTBEAT_TTL": str(args.ttl),
        "RUN_HEARTBEAT_EVERY": str(max(0.1, args.ttl / 6)),
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("DATABASE_URL", None)
    os.environ.update(env)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    logs = var / "logs"
    logs.mkdir()
    procs: dict[str, subprocess.Popen] = {}

    def start(name: str, cmd: list[str]) -> None:
        out = open(logs / f"{name}.log", "a")  # noqa: SIM115 (kept open for the child)
        procs[name] = subprocess.Popen(cmd, cwd=BASE, env=env, stdout=out, stderr=subprocess.STDOUT)

    try:
        for n in range(args.workers):
            start(f"worker{n}", [*MANAGE, "rqworker", "runs", "--name", f"bench-faults-{n}-{port}"])
        start("reaper", [*MANAGE, "reap_runs", "--loop", "--interval", str(args.reap_every)])
        report = drive(args, procs, start, lambda: redis, port, var)
        redis = report.pop("_redis")
        print_report(args, report)
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in procs.values():
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
        redis.terminate()
        print(f"(logs and data in {var})")


def seed(args: argparse.Namespace) -> list[int]:
    from accounts.roles import RESEARCHER
    from accounts.services import user_create
    from benchmark.models import AgentConfig, Run
    from benchmark.runs import progress
    from benchmark.runs.services import run_launch
    from benchmark.tasks.loader import BUILTIN_DIR, task_sync

    owner = user_create(username="bench", email="bench@example.org", role=RESEARCHER, password="pw-bench-12345")
    task = task_sync(BUILTIN_DIR / "prisoners_dilemma")
    original = Run.objects.create(task=task, agent=AgentConfig.objects.create(name="script"), owner=owner)
    for step in range(1, args.steps + 1):
        action = f"sleep 0.5; echo step {step} >> steps.txt; wc -l < steps.txt"
        progress.step_append(run=original, thought=f"step {step}", action=action, observation="", publish=False)
    Run.objects.filter(pk=original.pk).update(status=Run.Status.FINISHED)
    replayer = AgentConfig.objects.create(name="replay", kind=AgentConfig.Kind.REPLAY, max_steps=args.steps + 1)
    runs = run_launch(owner=owner, tasks=[task], agent=replayer, replay_of=original, n_runs=args.runs)
    return [run.pk for run in runs]


RESTARTS: list[str] = []


def keep_alive(procs: dict, start) -> None:  # type: ignore[no-untyped-def]
    """What `make up`'s supervisor does: a worker or the reaper that exited is started again."""
    for name, proc in list(procs.items()):
        if proc.poll() is not None:
            RESTARTS.append(f"{name} (exit {proc.returncode})")
            start(name, proc.args)


def statuses(ids: list[int]) -> dict[int, str]:
    from benchmark.models import Run

    return dict(Run.objects.filter(pk__in=ids).values_list("pk", "status"))


def last_step_at(ids: list[int]) -> float | None:
    from benchmark.models import Step

    step = Step.objects.filter(run_id__in=ids).order_by("-created_at").first()
    return step.created_at.timestamp() if step else None


def wait_settled(ids: list[int], procs: dict, start, timeout: float = 1800) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not {"queued", "running"} & set(statuses(ids).values()):
            return
        keep_alive(procs, start)
        time.sleep(0.5)
    raise SystemExit("runs did not settle within the timeout: see the logs")


def drive(args, procs, start, redis_of, port, var) -> dict:  # type: ignore[no-untyped-def]
    import redis as redis_lib
    from rq import Worker

    from benchmark.models import Run
    from benchmark.runs.heartbeat import heartbeat_key
    from benchmark.runs.services import run_resume
    from config.redis_server import start_redis as restart

    client = redis_lib.Redis(port=port)
    ids = seed(args)
    report: dict = {"_redis": redis_of()}

    # 1. kill -9 a worker and its work horse while it runs a run; the "supervisor" restarts it.
    victim = None
    while victim is None:
        running = Run.objects.filter(pk__in=ids, status=Run.Status.RUNNING, step_count__gte=1).first()
        victim = running
        time.sleep(0.2)
    worker_name = victim.worker_name
    name = next(n for n in procs if n.startswith("worker") and f"bench-faults-{n[6:]}-" in worker_name)
    horse = int(client.get(heartbeat_key(victim.code)).decode().rpartition(":")[2])
    os.kill(horse, signal.SIGKILL)
    os.kill(procs[name].pid, signal.SIGKILL)
    procs[name].wait()
    killed = time.time()
    time.sleep(1.0)
    start(name, [*MANAGE, "rqworker", "runs", "--name", f"{worker_name}-again"])
    while Run.objects.get(pk=victim.pk).status == Run.Status.RUNNING:
        time.sleep(0.2)
    report["worker_noticed_s"] = time.time() - killed
    dead = Worker.find_by_key(f"rq:worker:{worker_name}", connection=client)
    report["rq_key_left_s"] = client.ttl(f"rq:worker:{worker_name}") if dead is not None else None
    report["victim_status"] = Run.objects.get(pk=victim.pk).status

    # 2. kill -9 Redis while runs run; it comes back after --redis-down seconds with its AOF.
    while not Run.objects.filter(pk__in=ids, status=Run.Status.RUNNING).exists():
        if not {"queued", "running"} & set(statuses(ids).values()):
            break
        time.sleep(0.2)
    server = report["_redis"]
    server.kill()
    server.wait()
    time.sleep(args.redis_down)
    report["_redis"] = restart(data_dir=var / "redis", port=port, persist=True)
    back = time.time()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        at = last_step_at(ids)
        if at is not None and at > back:
            report["first_step_after_redis_s"] = at - back
            break
        if not {"queued", "running"} & set(statuses(ids).values()):
            break
        keep_alive(procs, start)
        time.sleep(0.2)

    wait_settled(ids, procs, start)
    before = statuses(ids)
    report["interrupted"] = sorted(pk for pk, status in before.items() if status == Run.Status.INTERRUPTED)
    for run in Run.objects.filter(pk__in=report["interrupted"]):
        run_resume(run=run)
    wait_settled(ids, procs, start)
    report["after"] = statuses(ids)
    report["lost"] = steps_lost(ids)
    return report


def steps_lost(ids: list[int]) -> int:
    """Committed steps missing: a run's counter ahead of its rows, or a gap in its indexes."""
    from benchmark.models import Run

    lost = 0
    for run in Run.objects.filter(pk__in=ids):
        indexes = list(run.steps.order_by("index").values_list("index", flat=True))
        lost += max(0, run.step_count - len(indexes)) + sum(1 for i, n in enumerate(indexes, 1) if n != i)
    return lost


def print_report(args: argparse.Namespace, report: dict) -> None:
    after = report["after"]
    counts = {status: list(after.values()).count(status) for status in sorted(set(after.values()))}
    print(f"{args.runs} runs x {args.steps} steps, {args.workers} workers, backend {args.backend}")
    print(f"final statuses: {counts}")
    print(f"interrupted before resume: {len(report['interrupted'])}; resumed: {len(report['interrupted'])}")
    print(f"steps lost: {report['lost']} (goal 0)")
    print(f"processes restarted by the bench's supervisor loop: {RESTARTS or 'none'}")
    rq_left = report["rq_key_left_s"]
    print(
        f"killed worker: its run marked {report['victim_status']} after {report['worker_noticed_s']:.1f} s "
        f"(heartbeat TTL {args.ttl:g} s, reaper every {args.reap_every:g} s); RQ's registry alone: "
        + (f"the dead worker's key had {rq_left} s left to live" if rq_left is not None else "its key was gone")
    )
    first = report.get("first_step_after_redis_s")
    print(
        f"Redis dead for {args.redis_down:g} s: "
        + (f"first step committed {first:.1f} s after it came back" if first is not None else "no step followed")
    )


if __name__ == "__main__":
    main()
