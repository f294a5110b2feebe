"""Benchmark: the judge lab's judges page computed by a job vs in the request (issue 30 item 8),
and what a user hammering it does to a reviewer's item page.

    python bench/lab_cache.py [--items 1206] [--hammer 6] [--seconds 20] [--server-procs 2]

A throw-away SQLite database (WAL) and a Redis server of its own; --items stepwise proposals, each
scored by two judges on the seven proposal criteria (synthetic scores, used only to time the code),
and a reviewer with one paper to review. Served as `make up` serves it: gunicorn (config.servers)
with --server-procs workers, and one RQ worker of the `default` queue (manage.py rqworker). The
old path is served by the same gunicorn workers (bench/support/lab_wsgi.py): the page as it was,
computing in the request.

Reported, in one run:
1. the judges page: the old path (in the request), and the new one cold (the time to the 202
   answer, and until the page shows the result), then cached;
2. the reviewer's item page (median and p95 of sequential requests for --seconds) idle, while
   --hammer threads of one admin loop the old page (each asks again --pace seconds after its last
   request started, or at once when that took longer: a slow page keeps them back to back), while they loop the new page (cached hits),
   while they loop it with the cached results dropped every second (as if the data changed all the
   time: one job per key at a time is what holds), and while they ask for the fabrication page
   with a new parameter each time (a new key each: the per-user limit, LAB_COLD_PER_MINUTE, holds).
The load average is printed with the figures (the machine may be shared).
"""

from __future__ import annotations

import argparse
import http.client
import itertools
import json
import os
import re
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
STAGE = "proposal"


def _django() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()


def _session(user) -> str:
    from django.contrib.sessions.backends.db import SessionStore

    session = SessionStore()
    session["_auth_user_id"] = str(user.pk)
    session["_auth_user_backend"] = "django.contrib.auth.backends.ModelBackend"
    session["_auth_user_hash"] = user.get_session_auth_hash()
    session.create()
    return session.session_key


def seed(n_items: int) -> dict:
    """Stepwise proposals judged by two judges; an admin; a reviewer with one assignment."""
    _django()
    import numpy as np

    from accounts.services import user_create
    from benchmark.models import Artifact, ResearchRun, Task
    from judge.models import Judgment, Rubric
    from judge.rubrics import rubric_load_defaults
    from review.assignment.services import campaign_assign
    from review.campaigns.services import campaign_create

    rubric_load_defaults()
    rubric = Rubric.objects.get(stage=STAGE, version=1)
    keys = [d["key"] for d in rubric.score_dimensions]
    rng = np.random.default_rng(1)
    models = ["claude-3-7-sonnet", "gemini-2.5-pro", "o4-mini", "deepseek-r1", "qwen3", "gpt-4.1"]
    tasks = [
        Task.objects.create(slug=f"bench_lab_{t}", version_hash=str(t), kind="mlr", title=f"T{t}") for t in range(201)
    ]
    judgments = []
    for i in range(n_items):
        run = ResearchRun.objects.create(
            task=tasks[i % len(tasks)], backbone=models[i % len(models)], source=ResearchRun.Source.STEPWISE,
            mode=ResearchRun.Mode.STEPWISE, stages=[STAGE], status=ResearchRun.Status.FINISHED,
        )  # fmt: skip
        item = Artifact.objects.create(research_run=run, stage=STAGE, content="proposal " * 300)
        quality = rng.normal(6, 1.5)
        for judge, bias in (("anthropic:claude-3-7-sonnet-20250219", 0.5), ("google:gemini-2.5-pro", -0.3)):
            scores = {k: {"score": int(np.clip(round(quality + bias + rng.normal(0, 1)), 1, 10)),
                          "justification": "x " * 40} for k in keys}  # fmt: skip
            judgments.append(Judgment(artifact=item, rubric=rubric, judge_model=judge, scores=scores,
                                      status=Judgment.Status.SUCCEEDED))  # fmt: skip
    Judgment.objects.bulk_create(judgments, batch_size=500)
    end2end = Rubric.objects.get(stage="end2end", version=1)
    run = ResearchRun.objects.create(task=tasks[0], backbone="claude", source="mlrbench")
    paper = Artifact.objects.create(research_run=run, stage="paper", content="## Section\n\nText.\n\n" * 200)
    reviewer = user_create(username="bench_reviewer", role="reviewer")
    admin = user_create(username="bench_admin", role="admin")
    campaign = campaign_create(name="bench", rubric=end2end, artifacts=[paper], reviewers=[reviewer],
                               reviewers_per_item=1)  # fmt: skip
    campaign_assign(campaign=campaign)
    code = str(reviewer.review_assignments.values_list("code", flat=True).first())
    return {"admin": _session(admin), "reviewer": _session(reviewer), "item": f"/review/a/{code}/"}


def get(port: int, session: str, url: str) -> tuple[int, float]:
    t0 = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        conn.request("GET", url, headers={"Cookie": f"sessionid={session}"})
        response = conn.getresponse()
        response.read()
        return response.status, time.perf_counter() - t0
    finally:
        conn.close()


def get_body(port: int, session: str, url: str) -> str:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        conn.request("GET", url, headers={"Cookie": f"sessionid={session}"})
        return conn.getresponse().read().decode(errors="replace")
    finally:
        conn.close()


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))] if ordered else float("nan")


def ms(seconds: float) -> str:
    return f"{seconds * 1000:9.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=1206, help="stepwise proposals (the release has 1,206)")
    parser.add_argument("--hammer", type=int, default=6, help="threads of one admin looping the lab page")
    parser.add_argument("--seconds", type=float, default=20.0, help="length of each reviewer phase")
    parser.add_argument(
        "--pace", type=float, default=1.0,
        help="seconds between the starts of one hammer thread's requests (a person reloading); 0: back to back",
    )  # fmt: skip
    parser.add_argument("--server-procs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--seed-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.seed_only:
        print(json.dumps(seed(args.items)))
        return

    from config.redis_server import free_port, start_redis
    from config.servers import http_command

    tmp = tempfile.mkdtemp(prefix="lab-bench-")
    redis_port = free_port()
    redis_proc = start_redis(data_dir=Path(tmp) / "redis", port=redis_port, persist=False)
    env = {**os.environ, "REFEREE_VAR_DIR": tmp, "SECRET_KEY": secrets.token_urlsafe(50), "DEBUG": "0",
           "REDIS_URL": f"redis://127.0.0.1:{redis_port}/0", "CHANNEL_PREFIX": "referee", "WEB_PROCESSES": str(args.server_procs)}  # fmt: skip
    env.pop("DATABASE_URL", None)
    procs: list[subprocess.Popen] = []

    def clear() -> None:
        """Drop the cached results (the agreement cache's KEY_PREFIX, settings.CACHES), as a change of the data
        would make them unreachable; not the markers of queued jobs nor the per-user counters."""
        import redis

        client = redis.Redis(port=redis_port)
        keys = [k for pattern in ("referee:agreement:1:lab:*", "referee:agreement:1:judge_pair:*")
                for k in client.scan_iter(match=pattern, count=1000)]  # fmt: skip
        if keys:
            client.delete(*keys)
        client.close()

    try:
        subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
        seeding = subprocess.run([sys.executable, __file__, "--seed-only", "--items", str(args.items)], cwd=ROOT,
                                 env=env, capture_output=True, text=True)  # fmt: skip
        if seeding.returncode:
            raise SystemExit(f"lab_cache: seeding failed:\n{seeding.stderr[-3000:]}")
        out = seeding.stdout
        seeded = json.loads(out.strip().splitlines()[-1])
        listener = socket.create_server(("127.0.0.1", 0), backlog=1024)
        listener.set_inheritable(True)
        port = listener.getsockname()[1]
        fd = listener.fileno()
        quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
        procs.append(subprocess.Popen(http_command(fd=fd, app="bench.support.lab_wsgi:application"), cwd=ROOT,
                                      env=env, pass_fds=(fd,), **quiet))  # fmt: skip
        procs.append(subprocess.Popen([sys.executable, "manage.py", "rqworker", "default"], cwd=ROOT, env=env, **quiet))
        deadline = time.monotonic() + 120
        while True:
            try:
                if get(port, "", "/healthz")[0] in (200, 503):
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise SystemExit("lab_cache: the server did not start")
            time.sleep(0.3)
        admin, reviewer, item = seeded["admin"], seeded["reviewer"], seeded["item"]
        new_url, old_url = f"/agreement/lab/judges/{STAGE}/", f"/bench/old-judges/{STAGE}/"
        for _ in range(2 * args.server_procs):  # warm-up: imports, first queries, the old path's pair analysis
            get(port, reviewer, item)
            get(port, admin, old_url)
        load_before = os.getloadavg()
        failures: list[str] = []

        # 1. the judges page
        old = [get(port, admin, old_url)[1] for _ in range(3)]
        clear()
        status, first = get(port, admin, new_url)
        assert status == 202, status
        t0 = time.perf_counter()
        while get(port, admin, new_url)[0] != 200:
            time.sleep(0.1)
        ready = time.perf_counter() - t0 + first
        warm = []
        for _ in range(10):
            status, took = get(port, admin, new_url)
            assert status == 200, status
            warm.append(took)

        # 2. the reviewer's item page under each kind of load
        def reviewer_phase(target: str | None, drop_cache: bool = False) -> tuple[list[float], Counter]:
            stop = threading.Event()
            statuses: Counter = Counter()
            numbers = itertools.count(1)  # a new parameter each request: a new key, a cold computation

            def hammer() -> None:
                while not stop.is_set():
                    url = target.replace("{n}", str(next(numbers))) if "{n}" in target else target
                    status, took = get(port, admin, url)
                    stop.wait(max(0.0, args.pace - took))  # one request a --pace seconds, or back to back
                    statuses[status] += 1
                    if status not in (200, 202, 429) and not failures:
                        failures.append(get_body(port, admin, url))

            def dropper() -> None:
                while not stop.wait(1.0):
                    clear()

            threads = [threading.Thread(target=hammer) for _ in range(args.hammer if target else 0)]
            if drop_cache:
                threads.append(threading.Thread(target=dropper))
            for t in threads:
                t.start()
            times = []
            end = time.monotonic() + args.seconds
            while time.monotonic() < end:
                status, took = get(port, reviewer, item)
                assert status == 200, status
                times.append(took)
            stop.set()
            for t in threads:
                t.join()
            return times, statuses

        phases = [
            ("idle", reviewer_phase(None)),
            (f"{args.hammer} x old page (in the request)", reviewer_phase(old_url)),
            (f"{args.hammer} x new page (cached)", reviewer_phase(new_url)),
            (f"{args.hammer} x new page, cache dropped every 1 s", reviewer_phase(new_url, drop_cache=True)),
            (
                f"{args.hammer} x fabrication, a new min_flags each",
                reviewer_phase("/agreement/lab/fabrication/?min_flags={n}"),
            ),
        ]
        load_after = os.getloadavg()
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
        redis_proc.terminate()
        redis_proc.wait(timeout=10)
        shutil.rmtree(tmp, ignore_errors=True)

    print(f"lab_cache: {args.items} stepwise {STAGE}s x 2 judges (synthetic scores), SQLite WAL, gunicorn with "
          f"{args.server_procs} worker(s) and one RQ worker (default queue), Redis of its own")  # fmt: skip
    print(f"load average (1/5/15 min) before {'/'.join(f'{x:.2f}' for x in load_before)}, "
          f"after {'/'.join(f'{x:.2f}' for x in load_after)}; {os.cpu_count()} CPUs")  # fmt: skip
    print(f"judges page, old path (computed in the request), median of 3   {ms(statistics.median(old))}")
    print(f"judges page, new path cold: answer (202, progress page)        {ms(first)}")
    print(f"judges page, new path cold: until the page shows the result    {ms(ready)}")
    print(f"judges page, new path cached, median of 10                     {ms(statistics.median(warm))}")
    print(f"hammer: {args.hammer} threads of one admin, each a request every {args.pace:g} s (or back to back)")
    print(f"{'reviewer item page while':<52}{'n':>6}{'p50':>12}{'p95':>12}   lab answers (status: count)")
    for label, (times, statuses) in phases:
        answers = ", ".join(f"{s}: {n}" for s, n in sorted(statuses.items())) or "-"
        print(f"  {label:<50}{len(times):>6}{ms(statistics.median(times))}{ms(pct(times, 95))}   {answers}")
    for body in failures:  # what a failed lab answer said (its message, not the page around it)
        print(
            "first failed lab answer:", re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", body.split("<main", 1)[-1]))[:600]
        )


if __name__ == "__main__":
    main()
