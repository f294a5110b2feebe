"""Runs list, its filters, full-text search and the compare view at scale.

    python bench/lists.py [--runs 10000] [--steps 100] [--repeats 30]

A throw-away database (SQLite by default; a fresh PostgreSQL database of its own when
DATABASE_URL points at a PostgreSQL server, dropped afterwards) is migrated and filled with
generated runs: --runs runs x --steps steps each (1,000,000 steps by default), over 20 tasks,
a third of them owned by the measuring researcher, a third by another, a third imported (public);
plus two 1,000-step runs on one task for the compare view. Each step carries a thought, a command
and an output of a few hundred characters; a few words are rare (in 1 step of 1,000) or unique.

Each case is one untimed warm-up GET, then --repeats timed GETs through the whole Django stack
(middleware, permission helper, queries, template) with the test client, each timed from call to
rendered response: server time, no network.
Reported: p50 / p99 per case, then beside them, in the same run, the obvious alternatives: the
unpaged list (every visible run in one page, what the list did without its old 200-row cap) and
the search as an unindexed LIKE scan of the same steps. Goal: <= 200 ms each.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

WORDS = "loss model train eval epoch batch error config data split score accuracy tensor gradient".split()
RARE = "flamingo"  # in one step of every 1,000
UNIQUE = "xylophone"  # in exactly one step


def _setup(tmp: Path) -> dict[str, Any]:
    os.environ["REFEREE_VAR_DIR"] = str(tmp / "var")
    os.environ["DEBUG"] = "0"
    info: dict[str, Any] = {}
    url = os.environ.get("DATABASE_URL", "")
    if url.startswith(("postgres", "pgsql")):
        import psycopg

        name = f"referee_bench_lists_{os.getpid()}"
        base, _, _ = url.rpartition("/")
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        os.environ["DATABASE_URL"] = f"{base}/{name}"
        info = {"drop": (url, name)}
    else:
        os.environ.pop("DATABASE_URL", None)  # the default: SQLite (WAL) under REFEREE_VAR_DIR
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    return info


def _teardown(info: dict[str, Any]) -> None:
    if "drop" in info:
        import psycopg
        from django.db import connections

        connections.close_all()
        url, name = info["drop"]
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def seed(n_runs: int, n_steps: int) -> dict[str, Any]:
    from django.db import connection, transaction

    from accounts.roles import RESEARCHER
    from accounts.services import user_create
    from benchmark.models import AgentConfig, Run, Step, Task

    rng = random.Random(7)
    me = user_create(username="bench-me", role=RESEARCHER)
    other = user_create(username="bench-other", role=RESEARCHER)
    tasks = [
        Task.objects.create(slug=f"task-{i}", version_hash=f"{i:064d}", kind=Task.Kind.MLGYM, title=f"Task {i}")
        for i in range(20)
    ]
    agents = [AgentConfig.objects.create(name=f"openai:model-{i}", model=f"openai:model-{i}") for i in range(6)]
    statuses = [Run.Status.FINISHED] * 6 + [Run.Status.FAILED, Run.Status.CANCELLED, Run.Status.RUNNING]
    exits = ["submitted", "autosubmission (max_steps)", "exit_cost", "exit_error"]
    runs = []
    for i in range(n_runs):
        kind = i % 3
        runs.append(
            Run(
                task=tasks[i % 20],
                agent=agents[i % 6],
                owner=(me, other, None)[kind],
                source=Run.Source.MLGYM if kind == 2 else Run.Source.REFEREE,
                method=agents[i % 6].name,
                status=rng.choice(statuses),
                exit_status=rng.choice(exits),
                step_count=n_steps,
                best_attempt=rng.random() if rng.random() > 0.1 else None,
                cost=rng.random() * 3,
            )
        )
    started = time.perf_counter()
    Run.objects.bulk_create(runs, batch_size=2000)
    run_ids = list(Run.objects.order_by("id").values_list("id", flat=True))
    # Steps through executemany: a million ORM objects would take minutes to build.
    table, cols = (
        Step._meta.db_table,
        '(run_id, "index", thought, action, observation, raw_response, state, execution_time, tokens_sent, tokens_received, cost, created_at, wire)',
    )
    sql = f"INSERT INTO {table} {cols} VALUES (%s, %s, %s, %s, %s, '', '{{}}', 0.1, 0, 0, 0, CURRENT_TIMESTAMP, '')"
    # A pool of texts to draw from: generating 50 random words for each of a million steps would
    # take longer than inserting them.
    thoughts = [_text(rng, 12) for _ in range(997)]
    outputs = [_text(rng, 40) for _ in range(1009)]
    count = 0
    unique_at = len(run_ids) * n_steps // 2
    batch: list[tuple] = []
    with transaction.atomic(), connection.cursor() as cursor:
        for run_id in run_ids:
            for index in range(1, n_steps + 1):
                observation = outputs[count % 1009]
                if count % 1000 == 999:
                    observation += f" {RARE}"
                if count == unique_at:
                    observation += f" {UNIQUE}"
                batch.append(
                    (run_id, index, thoughts[count % 997], f"python train.py --epochs {index % 7}", observation)
                )
                count += 1
                if len(batch) == 5000:
                    cursor.executemany(sql, batch)
                    batch = []
        if batch:
            cursor.executemany(sql, batch)
    # Two long runs on one task for the compare view; the second diverges at every 10th step.
    pair = []
    for offset in (0, 1):
        run = Run.objects.create(task=tasks[0], agent=agents[0], owner=me, method="pair", step_count=1000)
        Step.objects.bulk_create(
            [
                Step(
                    run=run,
                    index=i,
                    thought=_text(rng, 12),
                    action=f"python train.py --seed {i if offset and i % 10 == 0 else 0}",
                    observation=_text(rng, 40),
                )
                for i in range(1, 1001)
            ],
            batch_size=1000,
        )
        pair.append(run)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    print(
        f"seeded {n_runs:,} runs and {count + 2000:,} steps in {time.perf_counter() - started:.0f} s ({connection.vendor})"
    )
    return {"me": me, "pair": pair, "task": tasks[3].slug}


def measure(client: Any, url: str, repeats: int) -> tuple[float, float, int]:
    client.get(url)  # warm-up, untimed: the first request after seeding reads a cold page cache
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        response = client.get(url)
        times.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, (url, response.status_code)
    times.sort()
    p99 = times[min(len(times) - 1, round(0.99 * (len(times) - 1)))]
    return statistics.median(times), p99, len(response.content)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--steps", type=int, default=100, help="steps per run")
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-lists-") as tmp:
        info = _setup(Path(tmp))
        try:
            run_bench(args)
        finally:
            _teardown(info)


def run_bench(args: argparse.Namespace) -> None:
    from django.test import Client

    from benchmark.runs import compare, listing, search

    data = seed(args.runs, args.steps)
    client = Client()
    client.force_login(data["me"])
    a, b = data["pair"]
    cases = [
        ("list, page 1", "/runs/"),
        ("list, page 60", "/runs/?page=60"),
        ("filter mine", "/runs/?mine=on"),
        ("filter task", f"/runs/?task={data['task']}"),
        ("filter agent/model", "/runs/?agent=model-3"),
        ("filter status", "/runs/?status=failed"),
        ("filter exit status", "/runs/?exit=exit_cost"),
        ("filter source", "/runs/?source=mlgym"),
        ("sort by best attempt", "/runs/?sort=best"),
        ("filters combined", f"/runs/?task={data['task']}&status=finished&sort=cost"),
        (f"search rare word ({RARE})", f"/runs/?q={RARE}"),
        (f"search unique word ({UNIQUE})", f"/runs/?q={UNIQUE}"),
        ("search two common words", "/runs/?q=gradient+tensor"),
        ("search + filter status", f"/runs/?q={RARE}&status=finished"),
        ("compare two 1,000-step runs", f"/runs/compare/?run={a.code}&run={b.code}"),
    ]
    load_before = os.getloadavg()[0]
    rows = []
    for label, url in cases:
        p50, p99, size = measure(client, url, args.repeats)
        rows.append((label, p50, p99, size))

    # The alternatives, measured the same way in the same run.
    page_size = listing.PAGE_SIZE
    listing.PAGE_SIZE = 10**9  # every visible run on one page: the list without paging
    p50, p99, size = measure(client, "/runs/", max(3, args.repeats // 10))
    listing.PAGE_SIZE = page_size
    alternatives = [("unpaged list (all visible runs)", p50, p99, size)]

    real = search.recent_matches

    def matching_runs(sql: str, params: list[Any]) -> search.Matches:
        # As the search did before its window: every matching step of every run grouped by run,
        # and the view then keeps the runs the user may see and filtered (pk__in).
        from django.db import connection

        with connection.cursor() as cursor:
            cursor.execute(f"SELECT run_id FROM ({sql}) AS m GROUP BY run_id ORDER BY MAX(id) DESC", params)
            return search.Matches(run_ids=[row[0] for row in cursor.fetchall()], capped=False)

    def every_match(text: str, runs: Any) -> search.Matches:
        """The search before the window: every matching step read and grouped by run."""
        from django.db import connection

        terms = search.query_terms(text)
        if connection.vendor == "postgresql":
            sql = "SELECT id, run_id FROM benchmark_step WHERE search_document @@ plainto_tsquery('simple', %s)"
            return matching_runs(sql, [" ".join(terms)])
        sql = f"SELECT id, run_id FROM benchmark_step WHERE id IN (SELECT rowid FROM {search.FTS_TABLE} WHERE {search.FTS_TABLE} MATCH %s)"
        return matching_runs(sql, [search._fts5_query(terms)])

    def like_scan(text: str, runs: Any) -> search.Matches:
        pattern = f"%{text}%"
        sql = "SELECT id, run_id FROM benchmark_step WHERE thought LIKE %s OR action LIKE %s OR observation LIKE %s"
        return matching_runs(sql, [pattern, pattern, pattern])

    fold_min = compare.FOLD_MIN
    compare.FOLD_MIN = 10**9  # nothing folded: every aligned row rendered, as before the folding
    p50, p99, size = measure(client, f"/runs/compare/?run={a.code}&run={b.code}", max(3, args.repeats // 10))
    compare.FOLD_MIN = fold_min
    alternatives.append(("compare, every row rendered (unfolded)", p50, p99, size))

    for label, patched, url in [
        ("every match grouped (gradient tensor)", every_match, "/runs/?q=gradient+tensor"),
        (f"unindexed LIKE search ({RARE})", like_scan, f"/runs/?q={RARE}"),
    ]:
        search.recent_matches = patched  # the same view, matching the old way
        try:
            p50, p99, size = measure(client, url, max(3, args.repeats // 10))
            alternatives.append((label, p50, p99, size))
        finally:
            search.recent_matches = real

    print(f"\nload average (1 min) {load_before:.1f} before, {os.getloadavg()[0]:.1f} after, on {os.cpu_count()} cores")
    print(f"\n{'case':<40} {'p50 ms':>9} {'p99 ms':>9} {'KB':>8}  goal <= 200 ms")
    for label, p50, p99, size in rows:
        print(f"{label:<40} {p50:9.1f} {p99:9.1f} {size / 1024:8.0f}  {'ok' if p99 <= 200 else 'OVER'}")
    print("\nalternatives (same data, same run)")
    for label, p50, p99, size in alternatives:
        print(f"{label:<40} {p50:9.1f} {p99:9.1f} {size / 1024:8.0f}")


if __name__ == "__main__":
    main()
