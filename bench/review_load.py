"""Review page under load: concurrent reviewers open items and autosave drafts.

    python bench/review_load.py [--reviewers 20] [--saves 8] [--think 0.3] [--server-procs N]
    python bench/review_load.py --reviewers 100 --think 3 \
        --database-url postgres://referee:referee@127.0.0.1:5432/referee_bench16

Without --database-url a throw-away SQLite database (WAL, the default set-up) is used; with it, the
PostgreSQL database named there is dropped and created afresh (its name must start with
"referee_bench": the bench never touches another one). It is migrated and seeded with the
released MLR-Bench papers (their markdown and figures) when ../shared/mlrbench is there, else
with synthetic papers of the same size: max(30, reviewers) papers, 2 reviewers per paper, so each
reviewer has about two items. The platform is served as `make up` serves it: gunicorn with
config/gunicorn.py (the command of config/servers.py) and --server-procs workers (default: the CPU
count, as WEB_PROCESSES), accepting on one inherited socket, with the platform's database settings
(each thread's persistent connection). bench/support/review_wsgi.py wraps the app there and times
each request from the moment gunicorn calls it to the last body byte handed over (server time, not
client latency), and counts its SQL queries. --baseline CHECKOUT serves the same reviewers from
another checkout's own web processes as well (e.g. /work/main: daphne and its
bench/support/review_asgi.py), so that before and after are measured in one run. Clients are
threads of this process with their own session; they also time each request end to end (client
time: queueing included). The serving thread's own CPU time per request is reported as well: on a
shared machine it compares two versions where the server time mostly measures the other load.

Reported, in one run: p50/p95/p99 server time of the item page and of the draft save, then the
obvious alternatives measured the same way: the item page rendering the paper on every request
(no render cache), saving a draft the no-JavaScript way (a full form POST), and on PostgreSQL the
shipped paths again untuned: no persistent connection (each request connects), prepared statements off
and CPython's default garbage collection (UNTUNED below, the servers restarted). Target: p95 <= 50
ms. The load average is printed with the figures (the machine may be shared).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DIMENSIONS = ("clarity", "novelty", "soundness", "significance", "overall")
# The third phase: the shipped paths untuned, each request connecting anew (no persistent connection), without
# prepared statements, with CPython's default garbage collection.
UNTUNED = {"WEB_CONN_MAX_AGE": "0", "DATABASE_PREPARED_STATEMENTS": "0", "WEB_GC_THRESHOLD": "0"}


# ---------------------------------------------------------------- server side (subprocess)


def _django() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()


def seed(n_reviewers: int) -> dict:
    """Rubric, papers, reviewers with sessions, a campaign with 2 reviewers per item."""
    _django()
    from django.contrib.sessions.backends.db import SessionStore

    from accounts.services import user_create
    from benchmark.models import Artifact, ResearchRun, Task
    from benchmark.research.files import file_store
    from judge.models import Rubric
    from review.assignment.services import campaign_assign
    from review.campaigns.services import campaign_create

    dims = [
        {"key": k, "name": k.title(), "questions": [f"How is the {k}?"], "min": 1, "max": 10, "kind": "score",
         "anchors": {"9-10": "excellent", "7-8": "good", "5-6": "fair", "3-4": "weak", "1-2": "poor"}}
        for k in DIMENSIONS
    ]  # fmt: skip
    rubric = Rubric.objects.create(
        stage="end2end", version=1, name="End-to-end", instructions="Review.", dimensions=dims
    )
    papers = []
    candidates = [
        os.environ.get("MLRBENCH_DIR", ""),
        ROOT.parent / "shared" / "mlrbench",
        ROOT.parents[1] / "shared" / "mlrbench",
    ]
    shared = next((Path(c) for c in candidates if c and Path(c).is_dir()), Path("/nonexistent"))
    sources = sorted(shared.glob("agent_results/end2end_*/*/results/paper.md")) if shared.is_dir() else []
    for i in range(max(30, n_reviewers)):
        if sources:
            paper_md = sources[i % len(sources)]
            content = paper_md.read_text(encoding="utf-8", errors="replace")
            figures = [p for p in paper_md.parent.iterdir() if p.suffix.lower() in {".png", ".jpg", ".jpeg"}]
            backbone = paper_md.parents[2].name.removeprefix("end2end_")
        else:
            content = (
                "## Section\n\nSome text with $x_i^2$ math and a table.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n" * 40
            )
            figures, backbone = [], "synthetic"
        task = Task.objects.create(slug=f"bench_task_{i}", version_hash=f"{i}", kind="mlr", title=f"Task {i}")
        run = ResearchRun.objects.create(task=task, backbone=backbone, source="mlrbench")
        artifact = Artifact.objects.create(
            research_run=run, stage="paper", content=content, files=[f.name for f in figures]
        )
        for f in figures:
            file_store(artifact=artifact, relative=f.name, source=f)
        papers.append(artifact)
    reviewers = [user_create(username=f"bench{i}", role="reviewer") for i in range(n_reviewers)]
    campaign = campaign_create(name="bench", rubric=rubric, artifacts=papers, reviewers=reviewers, reviewers_per_item=2)
    campaign_assign(campaign=campaign)
    out = []
    for user in reviewers:
        session = SessionStore()
        session["_auth_user_id"] = str(user.pk)
        session["_auth_user_backend"] = "django.contrib.auth.backends.ModelBackend"
        session["_auth_user_hash"] = user.get_session_auth_hash()
        session.create()
        codes = list(user.review_assignments.values_list("code", flat=True))
        out.append({"session": session.session_key, "codes": codes})
    return {"reviewers": out, "real_papers": bool(sources)}


def read_stats(stats_dir: str, since: float, until: float) -> dict:
    """The server processes' records of [since, until]: {"timings": {kind: [ms]}, "queries": {kind: [n]},
    "cpu": {kind: [ms]}} (cpu: the serving thread's own CPU time, which other load on the machine
    barely moves, unlike the server time)."""
    timings: dict[str, list[float]] = {}
    queries: dict[str, list[int]] = {}
    cpu: dict[str, list[float]] = {}
    for path in Path(stats_dir).glob("server-*.log"):
        for line in path.read_text(encoding="utf-8").splitlines():
            stamp, kind, ms, count, cpu_ms = line.split()
            if since <= float(stamp) <= until:
                timings.setdefault(kind, []).append(float(ms))
                queries.setdefault(kind, []).append(int(count))
                cpu.setdefault(kind, []).append(float(cpu_ms))
    return {"timings": timings, "queries": queries, "cpu": cpu}


# ---------------------------------------------------------------- client side


CLIENT_TIMES: dict[str, list[float]] = {}
_client_lock = threading.Lock()


class Client:
    def __init__(self, port: int, session: str) -> None:
        self.port, self.cookies = port, {"sessionid": session}

    def request(
        self, method: str, path: str, body: bytes | None = None, headers: dict | None = None, kind: str = ""
    ) -> tuple[int, bytes]:
        t0 = time.perf_counter()
        status, data = self._request(method, path, body, headers)
        if kind:
            with _client_lock:
                CLIENT_TIMES.setdefault(kind, []).append((time.perf_counter() - t0) * 1000)
        return status, data

    def _request(
        self, method: str, path: str, body: bytes | None = None, headers: dict | None = None
    ) -> tuple[int, bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        cookie = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        conn.request(method, path, body=body, headers={"Cookie": cookie, "Host": "127.0.0.1", **(headers or {})})
        resp = conn.getresponse()
        data = resp.read()
        for header, value in resp.getheaders():
            if header.lower() == "set-cookie":
                name, _, rest = value.partition("=")
                self.cookies[name.strip()] = rest.split(";", 1)[0]
        conn.close()
        return resp.status, data


def reviewer_loop(
    port: int, info: dict, saves: int, think: float, form_drafts: bool, revision: list[int], errors: list
) -> None:
    client = Client(port, info["session"])
    rng = random.Random(info["session"])
    # Reviewers arrive at different moments (as people do), not in one synchronised burst.
    time.sleep(rng.uniform(0, think * saves))
    page = "item_page" if not form_drafts else "item_page_uncached"
    for code in info["codes"]:
        status, _ = client.request("GET", f"/review/a/{code}/", kind=page)
        if status != 200:
            errors.append(f"GET item {status}")
            continue
        csrf = client.cookies.get("csrftoken", "")
        for n in range(saves):
            time.sleep(think * rng.uniform(0.5, 1.5))
            if n and n % 4 == 0:  # the reviewer reloads the page now and then (and a reload restores the draft)
                status, _ = client.request("GET", f"/review/a/{code}/", kind=page)
                if status != 200:
                    errors.append(f"GET item {status}")
            scores = {
                k: {"score": rng.randint(1, 10), "justification": "text " * rng.randint(5, 60)}
                for k in DIMENSIONS[: 1 + n % 5]
            }
            if form_drafts:
                fields = {"action": "draft", "csrfmiddlewaretoken": csrf}
                for k, v in scores.items():
                    fields[f"score_{k}"], fields[f"just_{k}"] = str(v["score"]), v["justification"]
                body = urlencode(fields).encode()
                headers = {"Content-Type": "application/x-www-form-urlencoded", "Referer": "http://127.0.0.1/"}
                status, _ = client.request("POST", f"/review/a/{code}/", body, headers, kind="draft_form")
                ok = status == 302
            else:
                revision[0] += 1
                body = json.dumps({"revision": revision[0], "scores": scores, "confidence": rng.randint(1, 5)}).encode()
                headers = {"Content-Type": "application/json", "X-CSRFToken": csrf}
                status, _ = client.request("POST", f"/review/a/{code}/draft", body, headers, kind="draft_json")
                ok = status == 200
            if not ok:
                errors.append(f"draft {status}")


def run_phase(
    port: int, reviewers: list[dict], saves: int, think: float, form_drafts: bool, revisions: list, stats_dir: str
) -> tuple[dict, list, float]:
    errors: list[str] = []
    threads = [
        threading.Thread(target=reviewer_loop, args=(port, info, saves, think, form_drafts, revisions[i], errors))
        for i, info in enumerate(reviewers)
    ]
    t0, since = time.perf_counter(), time.time()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    stats = read_stats(stats_dir, since, time.time())
    with _client_lock:
        stats["client"] = dict(CLIENT_TIMES)
        CLIENT_TIMES.clear()
    return stats, errors, wall


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


def _answers(port: int) -> bool:
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        conn.request("GET", "/healthz")
        conn.getresponse().read()
        conn.close()
        return True
    except (OSError, http.client.HTTPException):
        return False


def _fresh_postgres(url: str) -> str:
    """Drop and create the bench's own PostgreSQL database; returns a label for the report."""
    import dj_database_url
    import psycopg

    cfg = dj_database_url.parse(url)
    name = cfg["NAME"]
    if not name.startswith("referee_bench"):
        raise SystemExit(
            f"--database-url: the database name must start with referee_bench (got {name!r}); it is dropped"
        )
    admin = psycopg.connect(
        host=cfg["HOST"] or "127.0.0.1", port=cfg["PORT"] or 5432, user=cfg["USER"], password=cfg["PASSWORD"],
        dbname="postgres", autocommit=True,
    )  # fmt: skip
    with admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"')
        version = admin.execute("SHOW server_version").fetchone()[0]
    return f"PostgreSQL {version} ({name})"


def _row(label: str, values: list[float], queries: list[int] | None = None) -> str:
    q = f"{sum(queries) / len(queries):>8.1f}" if queries else f"{'':>8}"
    return (
        f"{label:<38}{len(values):>6}{pct(values, 50):>8.1f}{pct(values, 95):>8.1f}{pct(values, 99):>8.1f}"
        f"{max(values):>8.1f}{q}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reviewers", type=int, default=20)
    parser.add_argument("--saves", type=int, default=8, help="draft saves per item opened")
    parser.add_argument(
        "--think", type=float, default=0.3, help="mean seconds between saves (autosave debounce is 0.7)"
    )
    parser.add_argument(
        "--server-procs", type=int, default=os.cpu_count() or 1,
        help="server processes sharing the port (default: the CPU count, as make up's WEB_PROCESSES)",
    )  # fmt: skip
    parser.add_argument("--database-url", help="postgres://.../referee_bench...: dropped and created afresh")
    parser.add_argument(
        "--no-unprepared-phase", action="store_true",
        help="PostgreSQL: skip the third phase (the shipped paths without connection pool, prepared statements and GC tuning)",
    )  # fmt: skip
    parser.add_argument(
        "--baseline", metavar="CHECKOUT",
        help="also serve the same reviewers from another checkout (e.g. /work/main) and print both, side by side",
    )  # fmt: skip
    parser.add_argument("--seed-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.seed_only:
        print(json.dumps(seed(args.reviewers)))
        return

    tmp = tempfile.mkdtemp(prefix="review-bench-")
    stats_dir = str(Path(tmp) / "stats")
    os.mkdir(stats_dir)
    env = {**os.environ, "REFEREE_VAR_DIR": tmp, "SECRET_KEY": secrets.token_urlsafe(50), "DEBUG": "0"}
    env.pop("DATABASE_URL", None)
    env.pop("DATABASE_PREPARED_STATEMENTS", None)
    database = "SQLite WAL"
    if args.database_url:
        database = _fresh_postgres(args.database_url)
        env["DATABASE_URL"] = args.database_url  # the web processes' connection pool, as deployed
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    seeded = json.loads(
        subprocess.run([sys.executable, __file__, "--seed-only", "--reviewers", str(args.reviewers)], cwd=ROOT, env=env,
                       check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]
    )  # fmt: skip
    # One listening socket, inherited by every daphne process (as scripts/up.py hands its port over).
    listener = socket.create_server(("127.0.0.1", 0), backlog=1024)
    listener.set_inheritable(True)
    port = listener.getsockname()[1]

    def start_servers(extra_env: dict, checkout: str | None = None) -> list[subprocess.Popen]:
        """The shipped stack (config.servers: gunicorn, as make up runs it), or, with `checkout`, that
        checkout's own web processes (daphne serving its bench/support/review_asgi.py, the layout
        before gunicorn), on the same socket, database and reviewers."""
        for ready in Path(stats_dir).glob("ready-*"):
            ready.unlink()
        server_env = {**env, **extra_env, "REVIEW_BENCH_STATS": stats_dir, "WEB_PROCESSES": str(args.server_procs)}
        fd = listener.fileno()
        if checkout:
            daphne = [sys.executable, "-m", "daphne", "--fd", str(fd), "bench.support.review_asgi:application"]
            procs = [
                subprocess.Popen(daphne, cwd=checkout, env=server_env, pass_fds=(fd,),
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                for _ in range(args.server_procs)
            ]  # fmt: skip
        else:
            from config.servers import http_command

            procs = [
                subprocess.Popen(http_command(fd=fd, app="bench.support.review_wsgi:application"), cwd=ROOT,
                                 env=server_env, pass_fds=(fd,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            ]  # fmt: skip
        deadline = time.monotonic() + 120
        while not _answers(port):  # every process has imported the app once the port answers
            if time.monotonic() > deadline or any(proc.poll() is not None for proc in procs):
                raise SystemExit("review_load: a server process did not start")
            time.sleep(0.2)
        if checkout:
            while len(list(Path(stats_dir).glob("ready-*"))) < len(procs):
                if time.monotonic() > deadline:
                    raise SystemExit("review_load: a daphne process did not start")
                time.sleep(0.1)
        return procs

    def stop_servers(procs: list[subprocess.Popen]) -> None:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(timeout=10)

    cache_off = Path(stats_dir) / "cache-off"
    unprepared_phase = bool(args.database_url) and not args.no_unprepared_phase
    servers: list[subprocess.Popen] = []
    unprepared: dict = {}
    try:
        servers = start_servers({})
        reviewers = seeded["reviewers"]
        revisions = [[0] for _ in reviewers]
        # warm-up of every server process: imports, caches, first queries
        run_phase(port, reviewers[: 2 * args.server_procs], 1, 0.0, False, revisions, stats_dir)
        load_before = os.getloadavg()
        shipped, err1, wall1 = run_phase(port, reviewers, args.saves, args.think, False, revisions, stats_dir)
        cache_off.touch()
        alternative, err2, wall2 = run_phase(port, reviewers, args.saves, args.think, True, revisions, stats_dir)
        cache_off.unlink()
        err3: list = []
        baseline: dict = {}
        if args.baseline:
            stop_servers(servers)
            servers = start_servers({}, checkout=args.baseline)
            run_phase(port, reviewers[: 2 * args.server_procs], 1, 0.0, False, revisions, stats_dir)
            baseline, err_b, _ = run_phase(port, reviewers, args.saves, args.think, False, revisions, stats_dir)
            err3 += err_b
            if err_b:
                print(f"review_load: the baseline phase had {len(err_b)} errors (first: {err_b[:3]})", flush=True)
            stop_servers(servers)
            servers = start_servers({})
        if unprepared_phase:
            stop_servers(servers)
            servers = start_servers(UNTUNED)
            run_phase(port, reviewers[: 2 * args.server_procs], 1, 0.0, False, revisions, stats_dir)
            unprepared, err3, _ = run_phase(port, reviewers, args.saves, args.think, False, revisions, stats_dir)
        load_after = os.getloadavg()
    finally:
        stop_servers(servers)
        shutil.rmtree(tmp, ignore_errors=True)

    n_items = sum(len(r["codes"]) for r in reviewers)
    print(f"review_load: {len(reviewers)} concurrent reviewers, {n_items} assignments, {args.saves} saves per item, "
          f"think {args.think}s, {'released MLR-Bench papers' if seeded['real_papers'] else 'synthetic papers'}, "
          f"{database}, gunicorn with {args.server_procs} worker(s) serving config.wsgi on one loopback port "
          "(config.servers, as make up)")  # fmt: skip
    print(f"load average (1/5/15 min) before {'/'.join(f'{x:.2f}' for x in load_before)}, "
          f"after {'/'.join(f'{x:.2f}' for x in load_after)}; {os.cpu_count()} CPUs")  # fmt: skip
    print(f"{'server time (ms)':<38}{'n':>6}{'p50':>8}{'p95':>8}{'p99':>8}{'max':>8}{'queries':>8}")
    rows = [
        ("item page (shipped, render cache)", shipped, "item_page"),
        ("draft save (shipped, JSON autosave)", shipped, "draft_json"),
        ("item page, no render cache", alternative, "item_page_uncached"),
        ("draft save as full form POST", alternative, "draft_form"),
    ]
    if baseline:
        rows += [
            ("item page, baseline checkout", baseline, "item_page"),
            ("draft save, baseline checkout", baseline, "draft_json"),
        ]
    if unprepared:
        rows += [
            ("item page, untuned (no pool/prep./GC)", unprepared, "item_page"),
            ("draft save, untuned (no pool/prep./GC)", unprepared, "draft_json"),
        ]
    for label, stats, kind in rows:
        if stats["timings"].get(kind):
            print(_row(label, stats["timings"][kind], stats["queries"].get(kind)))
    print(f"{'server CPU time, serving thread (ms)':<38}")
    for label, stats, kind in rows:
        if stats["cpu"].get(kind):
            print(_row(label, stats["cpu"][kind]))
    print(f"{'client time, queueing included (ms)':<38}")
    for label, stats, kind in rows:
        if stats["client"].get(kind):
            print(_row(label, stats["client"][kind]))
    values = [stats["timings"].get(kind, []) for _, stats, kind in rows]
    item95, draft95 = pct(values[0], 95), pct(values[1], 95)
    verdict = "meets" if max(item95, draft95) <= 50 else "MISSES"
    print(f"target p95 <= 50 ms: item page {item95:.1f} ms, draft save {draft95:.1f} ms -> {verdict} the target")
    print(f"comparison: uncached item page p95 {pct(values[2], 95):.1f} ms "
          f"({pct(values[2], 95) / max(item95, 1e-9):.1f}x the cached page); "
          f"form-POST draft p95 {pct(values[3], 95):.1f} ms ({pct(values[3], 95) / max(draft95, 1e-9):.1f}x the JSON save)")  # fmt: skip
    if baseline:
        b_item = pct(baseline["timings"].get("item_page", []), 95)
        b_draft = pct(baseline["timings"].get("draft_json", []), 95)
        print(f"comparison with {args.baseline} (its own web processes): item page p95 {b_item:.1f} ms -> "
              f"{item95:.1f} ms ({item95 / max(b_item, 1e-9):.2f}x), draft save p95 {b_draft:.1f} ms -> "
              f"{draft95:.1f} ms ({draft95 / max(b_draft, 1e-9):.2f}x)")  # fmt: skip
    if unprepared:
        u_item, u_draft = pct(unprepared["timings"]["item_page"], 95), pct(unprepared["timings"]["draft_json"], 95)
        print(f"comparison: without persistent connections, prepared statements and GC tuning item page p95 "
              f"{u_item:.1f} ms ({u_item / max(item95, 1e-9):.1f}x), draft save p95 {u_draft:.1f} ms "
              f"({u_draft / max(draft95, 1e-9):.1f}x)")  # fmt: skip
    errors = err1 + err2 + err3
    print(f"wall time: shipped phase {wall1:.1f}s, alternative phase {wall2:.1f}s; errors: {len(errors)}"
          + (f" (first: {errors[0]})" if errors else ""))  # fmt: skip


if __name__ == "__main__":
    main()
