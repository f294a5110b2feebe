"""Benchmark: importing MLR-Bench's stepwise results and serving the stepwise leaderboard.

    python bench/stepwise_import.py [--mlrbench DIR] [--requests 20] [--skip-naive-import]

In one run, on a throw-away database (SQLite in WAL mode in a temporary folder, or PostgreSQL when
DATABASE_URL is set - the script then creates and drops its own database next to it):

  import      `import_mlr_stepwise`'s two importers (201 tasks x 6 models x 2 stages, 2 x 2,412
              reviews): wall time, CPU time and peak Python memory (tracemalloc), first into an
              empty database, then again (idempotent: nothing to write);
  naive       the obvious alternative: one update_or_create per run, artifact and judgment (the
              shape of the end-to-end importer), timed the same way on a second empty database;
  page        the stepwise leaderboard page's server time (Django's test client in process, from
              the request to the last byte) over N requests: p50 / p95 / max;
  per-row     the obvious alternative leaderboard: a query per (model, task) for its judgments, the
              full score JSON parsed in Python, timed as a computation beside Referee's computation.

Both leaderboards must give the same means (checked).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _default_data() -> Path:
    for base in (
        os.environ.get("MLRBENCH_DIR", ""),
        ROOT.parent / "shared" / "mlrbench",
        ROOT.parents[1] / "shared" / "mlrbench",
    ):
        if base and (Path(base) / "agent_results" / "ideas_and_proposals").is_dir():
            return Path(base)
    sys.exit("MLR-Bench data not found: pass --mlrbench or set MLRBENCH_DIR")


def _setup(tmp: Path) -> dict[str, Any]:
    """Point Django at a fresh database of its own; returns what teardown needs."""
    os.environ["REFEREE_VAR_DIR"] = str(tmp / "var")
    info: dict[str, Any] = {}
    url = os.environ.get("DATABASE_URL", "")
    if url.startswith(("postgres", "pgsql")):
        import psycopg

        name = f"referee_bench_stepwise_{os.getpid()}"
        base, _, _ = url.rpartition("/")
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        os.environ["DATABASE_URL"] = f"{base}/{name}"
        info = {"drop": (url, name)}
    else:
        os.environ["DATABASE_URL"] = f"sqlite:///{tmp / 'bench.sqlite3'}"
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    return info


def _teardown(info: dict[str, Any]) -> None:
    if "drop" in info:
        from django.db import connections

        connections.close_all()
        import psycopg

        url, name = info["drop"]
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')


def _rss_mib() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def _measure(label: str, fn: Any) -> dict[str, Any]:
    """Wall and CPU time, and how far the process's peak RSS grew during the call."""
    rss = _rss_mib()
    wall, cpu = time.perf_counter(), time.process_time()
    value = fn()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    out = {"wall_s": wall, "cpu_s": cpu, "rss_growth_mib": _rss_mib() - rss, "value": value}
    print(f"  {label:<42} {wall:7.2f} s wall  {cpu:7.2f} s CPU  peak RSS +{out['rss_growth_mib']:6.1f} MiB")
    return out


def _python_peak(fn: Any) -> float:
    """Peak Python allocation (MiB) of fn, under tracemalloc (which slows it: timed separately)."""
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2**20


def _import(data: Path) -> tuple[Any, Any]:
    from benchmark.research.stepwise import import_stepwise_results
    from judge.mlr_stepwise import import_stepwise_reviews

    sink = io.StringIO()
    return import_stepwise_results(data, stdout=sink), import_stepwise_reviews(data, stdout=sink)


def _naive_import(data: Path) -> int:
    """One update_or_create per row, each its own round trip: the importer written the obvious way."""
    import re

    from benchmark.models import Artifact, ResearchRun, Task
    from judge.mlr_reviews import judge_label
    from judge.models import Judgment, Rubric
    from judge.parsing import reply_parse

    root = data / "agent_results" / "ideas_and_proposals"
    rubrics = {r.stage: r for r in Rubric.objects.filter(stage__in=("idea", "proposal"), version=1)}
    rows = 0
    for folder in sorted(root.iterdir()):
        task = Task.objects.filter(slug=folder.name, is_current=True).first()
        if task is None:
            continue
        for stage in ("idea", "proposal"):
            for path in sorted((folder / stage).glob(f"{stage}_*.md")):
                model = path.stem.removeprefix(f"{stage}_")
                run, _ = ResearchRun.objects.update_or_create(
                    source=ResearchRun.Source.STEPWISE, task=task, backbone=model, stages=[stage],
                    defaults={"mode": ResearchRun.Mode.STEPWISE, "status": ResearchRun.Status.FINISHED},
                )  # fmt: skip
                artifact, _ = Artifact.objects.update_or_create(
                    research_run=run, stage=stage, defaults={"content": path.read_text(encoding="utf-8")}
                )
                rows += 2
                for judge_dir in sorted((data / "agent_reviews").glob("idea_proposal_reviews_*")):
                    review = judge_dir / folder.name / stage / f"{stage}_{model}.json"
                    if not review.is_file():
                        continue
                    text = review.read_text(encoding="utf-8")
                    parsed = reply_parse(re.sub(r'"OverallAssessment"', '"overall"', text, count=1), rubrics[stage])
                    Judgment.objects.update_or_create(
                        artifact=artifact, rubric=rubrics[stage], source=Judgment.Source.MLRBENCH,
                        judge_model=judge_label(judge_dir.name.removeprefix("idea_proposal_reviews_")),
                        defaults={"status": "succeeded", "scores": parsed.scores, "raw_reply": text},
                    )  # fmt: skip
                    rows += 1
    return rows


def _naive_board(stage: str) -> dict[tuple[str, str, str], float]:
    """A query per (model, task), full scores JSON parsed in Python: (model, judge, criterion) -> mean."""
    from benchmark.models import ResearchRun
    from judge.models import Judgment

    sums: dict[tuple[str, str, str], list[float]] = {}
    runs = ResearchRun.objects.filter(source=ResearchRun.Source.STEPWISE, stages=[stage]).select_related("task")
    for run in runs:
        for judgment in Judgment.objects.filter(
            artifact__research_run=run, artifact__stage=stage, status="succeeded", experiment__isnull=True
        ):
            for key, entry in judgment.scores.items():
                if isinstance(entry, dict) and isinstance(entry.get("score"), int | float):
                    sums.setdefault((run.backbone, judgment.judge_model, key), []).append(float(entry["score"]))
    return {k: statistics.fmean(v) for k, v in sums.items()}


def _board_means(stage: str) -> dict[tuple[str, str, str], float]:
    from judge.leaderboard import stepwise_leaderboard

    board = stepwise_leaderboard(stage)
    return {
        (row.model, judge, key): cell.mean
        for row in board.rows
        for judge in board.judges
        for key, cell in row.cells[judge].items()
        if cell.mean is not None
    }


def _timings(fn: Any, n: int) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def _summary(label: str, times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    print(
        f"  {label:<42} p50 {statistics.median(times) * 1000:7.1f} ms  p95 {p95 * 1000:7.1f} ms  max {max(times) * 1000:7.1f} ms  (n={len(times)})"
    )
    return {"p50_ms": statistics.median(times) * 1000, "p95_ms": p95 * 1000, "max_ms": max(times) * 1000}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mlrbench", type=Path, default=None)
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--skip-naive-import", action="store_true", help="the per-row import takes minutes on SQLite")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args()
    data = args.mlrbench or _default_data()
    figures: dict[str, Any] = {"data": str(data)}
    with tempfile.TemporaryDirectory(prefix="bench-stepwise-") as tmp:
        info = _setup(Path(tmp))
        try:
            from django.conf import settings
            from django.db import connection

            from benchmark.research.tasks import import_mlr_tasks
            from judge.rubrics import rubric_load_defaults

            print(f"database: {connection.vendor} ({settings.DATABASES['default']['NAME']})")
            rubric_load_defaults()
            t0 = time.perf_counter()
            import_mlr_tasks(data)
            print(f"  (setup: 201 tasks imported in {time.perf_counter() - t0:.2f} s, not counted)")
            print("import (import_mlr_stepwise's importers)")
            first = _measure("first import, empty database", lambda: _import(data))
            results, reviews = first["value"]
            print(
                f"    {results.imported} artifacts read ({dict(results.per_stage)}), runs {results.runs_created} created, "
                f"artifacts {results.artifacts_created} created; reviews {reviews.created} created, {reviews.failed} failed"
            )
            second = _measure("re-import (idempotent)", lambda: _import(data))
            results2, reviews2 = second["value"]
            print(f"    artifacts {results2.artifacts_unchanged} unchanged; reviews {reviews2.unchanged} unchanged")
            second["python_peak_mib"] = _python_peak(lambda: _import(data))
            print(
                f"    peak Python allocation of a (re-)import, under tracemalloc: {second['python_peak_mib']:.1f} MiB"
            )
            figures["import"] = {k: v for k, v in first.items() if k != "value"}
            figures["reimport"] = {k: v for k, v in second.items() if k != "value"}

            from django.contrib.auth.models import Group
            from django.test import Client

            from accounts.services import user_create

            user = user_create(
                username="bench_researcher", email="b@example.org", role="researcher", password="pw-bench"
            )
            assert user.groups.filter(name="researcher").exists() or Group.objects.filter(name="researcher").exists()
            client = Client()
            client.force_login(user)
            print("stepwise leaderboard (idea stage, 1,206 items, 2,412 reviews)")
            first_page = client.get("/judge/stepwise/idea/")
            assert first_page.status_code == 200, first_page.status_code
            figures["page"] = _summary(
                "page, server time", _timings(lambda: client.get("/judge/stepwise/idea/"), args.requests)
            )
            figures["compute"] = _summary(
                "Referee's computation (one query, numpy)", _timings(lambda: _board_means("idea"), args.requests)
            )
            figures["naive_compute"] = _summary(
                "per-row alternative (query per model x task)",
                _timings(lambda: _naive_board("idea"), max(3, args.requests // 4)),
            )
            referee, naive = _board_means("idea"), _naive_board("idea")
            same = referee.keys() == naive.keys() and all(abs(referee[k] - naive[k]) < 1e-9 for k in referee)
            print(f"    same means in both: {same} ({len(referee)} model x judge x criterion cells)")
            assert same, "the two leaderboards disagree"
            figures["ratio_naive_over_referee_p50"] = figures["naive_compute"]["p50_ms"] / figures["compute"]["p50_ms"]
            print(f"    per-row / Referee (p50): {figures['ratio_naive_over_referee_p50']:.1f}x")
            from agreement.lab.judge_pair import judge_pair_analysis

            print("judge vs judge (idea stage, every two-rater statistic, bootstrap B=1000)")
            pair = _measure("cold analysis (then cached)", lambda: judge_pair_analysis(stage="idea", n_boot=1000))
            figures["judge_pair"] = {k: v for k, v in pair.items() if k != "value"}
            overall = pair["value"]["criteria"]["Overall"]
            print(
                "    Overall: quadratic kappa {:.3f}, Spearman {:.3f}, exact agreement {:.3f}, within one {:.3f}, "
                "mean bias (A - B) {:+.3f}".format(
                    overall["kappa_quadratic"]["estimate"], overall["spearman"]["estimate"],
                    overall["percent_agreement"]["estimate"], overall["percent_agreement"]["extra"]["within_one"],
                    overall["bias_a_minus_b"]["estimate"],
                )
            )  # fmt: skip
        finally:
            _teardown(info)
        if not args.skip_naive_import:
            with tempfile.TemporaryDirectory(prefix="bench-stepwise-naive-") as tmp2:
                os.environ.pop("DATABASE_URL", None) if not info else None
                from django.db import connections

                connections.close_all()
                # A second empty database for the per-row importer, the same vendor as the first.
                info2 = _reset_database(Path(tmp2), info)
                try:
                    from benchmark.research.tasks import import_mlr_tasks
                    from judge.rubrics import rubric_load_defaults

                    rubric_load_defaults()
                    import_mlr_tasks(data)
                    print("naive import (update_or_create per row)")
                    naive = _measure("first import, empty database", lambda: _naive_import(data))
                    print(f"    {naive['value']} rows written")
                    figures["naive_import"] = {k: v for k, v in naive.items() if k != "value"}
                    figures["ratio_naive_import_over_referee"] = naive["wall_s"] / figures["import"]["wall_s"]
                    print(f"    per-row / bulk import (wall): {figures['ratio_naive_import_over_referee']:.1f}x")
                finally:
                    _teardown(info2)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))


def _reset_database(tmp: Path, info: dict[str, Any]) -> dict[str, Any]:
    """Re-point the default connection at a second fresh database and migrate it."""
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connections

    new: dict[str, Any] = {}
    if "drop" in info:
        import psycopg

        url, name = info["drop"]
        name2 = f"{name}_naive"
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name2}"')
        settings.DATABASES["default"]["NAME"] = name2
        new = {"drop": (url, name2)}
    else:
        settings.DATABASES["default"]["NAME"] = str(tmp / "naive.sqlite3")
    connections["default"].settings_dict["NAME"] = settings.DATABASES["default"]["NAME"]
    connections.close_all()
    call_command("migrate", verbosity=0)
    return new


if __name__ == "__main__":
    main()
