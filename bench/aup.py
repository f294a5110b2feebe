"""Benchmark: MLGym's 12-model AUP over the 676 released results (target <= 1 s).

Measures, in the same run:
  referee   benchmark.leaderboards.mlgym_results + benchmark.leaderboards.scoring: one directory walk, numpy profiles;
  loop      the obvious alternative, written the way MLGym's own script works: a glob per
            (model, task) pair and pure-Python loops over the 500 tau points;
  cold      the referee path in a fresh interpreter (imports included), as `manage.py aup` pays it;
  page      the leaderboard page's compute over the same runs imported into a scratch SQLite
            database (board.runs_leaderboard + tables.page_data, filtered to the 12 models):
            first call in a fresh process whose URL conf is loaded (as a web process's is) and
            warm median, and whether it matches MLGym's table.
Both warm paths must give the same AUP to 3 decimals.

    python bench/aup.py [--results DIR] [--repeat N] [--no-page]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmark.leaderboards.mlgym_results import MLGYM_TASKS, PUBLISHED_MODELS, read_results_dir, results_leaderboard  # noqa: E402
from benchmark.leaderboards.scoring import Direction, Scoring  # noqa: E402


def default_results_dir() -> Path:
    for base in (
        os.environ.get("MLGYM_DIR", ""),
        REPO.parent / "shared" / "mlgym",
        REPO.parent.parent / "shared" / "mlgym",
    ):
        if base and (Path(base) / "trajectories" / "mlgym_bench_v0").is_dir():
            return Path(base) / "trajectories" / "mlgym_bench_v0"
    sys.exit("MLGym data not found: pass --results or set MLGYM_DIR")


def referee(results_dir: Path) -> dict[str, tuple[float, float]]:
    board = results_leaderboard(read_results_dir(results_dir, models=PUBLISHED_MODELS), models=PUBLISHED_MODELS)
    return {
        m: (board.results[Scoring.BEST_ATTEMPT].aup[m], board.results[Scoring.BEST_SUBMISSION].aup[m])
        for m in board.methods
    }


def loop(results_dir: Path) -> dict[str, tuple[float, float]]:
    """Pure-Python version: glob per (model, task), list loops for ratios and profiles."""
    methods = [*PUBLISHED_MODELS, "baseline"]
    best: dict[str, dict[str, float]] = {}
    last: dict[str, dict[str, float]] = {}
    for task, spec in MLGYM_TASKS.items():
        pick = max if spec.direction == Direction.MAX else min
        best[task], last[task] = {}, {}
        for model in PUBLISHED_MODELS:
            attempts, submissions = [], []
            for run in sorted(results_dir.glob(f"*{model}__{task}__*")):
                path = run / "results.json"
                if not path.exists():
                    continue
                data = json.loads(path.read_text())
                base = data.get("baseline", {}).get(spec.metric)
                if base is not None and "baseline" not in best[task]:
                    best[task]["baseline"] = last[task]["baseline"] = base
                values = [a.get(spec.metric) for a in data.get("agent", [])]
                good = [
                    v
                    for v in values
                    if isinstance(v, int | float) and math.isfinite(v) and abs(v) < 1e6 * max(1, abs(base or 1))
                ]
                if good:
                    attempts.append(pick(good))
                    if values[-1] in good:
                        submissions.append(values[-1])
            if attempts:
                best[task][model] = pick(attempts)
            if submissions:
                last[task][model] = pick(submissions)

    def ratios(scores: dict[str, float], direction: Direction) -> tuple[dict[str, float], int]:
        base = scores.get("baseline")
        feasible = {}
        for m in methods:
            s = scores.get(m)
            if s is None or s < 0 or (base is not None and (s < base if direction == Direction.MAX else s > base)):
                continue
            feasible[m] = s
        top = max(feasible.values()) if direction == Direction.MAX else min(feasible.values())
        r = {m: (top / s if direction == Direction.MAX else s / top) for m, s in feasible.items()}
        penalty = max(r.values()) * 1.05
        return {m: r.get(m, penalty) for m in methods}, math.ceil(penalty)

    per_scoring, candidates = [], []
    for table in (best, last):
        by_task = {}
        for task, spec in MLGYM_TASKS.items():
            by_task[task], candidate = ratios(table[task], spec.direction)
            candidates.append(candidate)
        per_scoring.append(by_task)
    tau_max = math.ceil(math.log10(max(candidates)) * 10) / 10
    tau = [tau_max * i / 499 for i in range(500)]
    out: dict[str, list[float]] = {m: [] for m in methods}
    for by_task in per_scoring:
        for m in methods:
            profile = [sum(1 for r in by_task.values() if math.log10(r[m]) <= t) / len(by_task) for t in tau]
            out[m].append(sum((tau[i + 1] - tau[i]) * profile[i] for i in range(499)))
    return {m: (v[0], v[1]) for m, v in out.items()}


PAGE_PROBE = """
import json, statistics, sys, time
import django
django.setup()
from django.urls import reverse
reverse("benchmark:leaderboard")  # the URL conf and its views, loaded as in a web process
from benchmark.leaderboards.board import runs_leaderboard
from benchmark.leaderboards.mlgym_results import PUBLISHED_MODELS
from benchmark.leaderboards.tables import page_data
from benchmark.models import Run

def compute():
    runs = Run.objects.filter(method__in=PUBLISHED_MODELS)
    board, analysis, rows = runs_leaderboard(runs, methods=list(PUBLISHED_MODELS))
    return page_data(board, analysis, runs=rows)

start = time.perf_counter()
data = compute()
first = time.perf_counter() - start
times = []
for _ in range(int(sys.argv[1])):
    start = time.perf_counter()
    compute()
    times.append(time.perf_counter() - start)
published = data["published"] or {}
print(json.dumps({"first": first, "warm": statistics.median(times), "tau_max": data["tau_max"],
                  "matches": bool(published.get("matches")), "runs": len(data["runs"])}))
"""


def page_compute(results_dir: Path, repeat: int) -> dict[str, object]:
    """The leaderboard page's compute on a scratch database holding the imported release."""
    with tempfile.TemporaryDirectory() as scratch:
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "REFEREE_VAR_DIR": scratch,
            "DATABASE_URL": f"sqlite:///{scratch}/bench.sqlite3",
        }
        manage = [sys.executable, str(REPO / "manage.py")]
        subprocess.run([*manage, "migrate", "-v0"], env=env, cwd=REPO, check=True)
        subprocess.run(
            [*manage, "import_mlgym_results", str(results_dir)], env=env, cwd=REPO, check=True, capture_output=True
        )
        probe = subprocess.run(
            [sys.executable, "-c", PAGE_PROBE, str(repeat)],
            env=env,
            cwd=REPO,
            check=True,
            capture_output=True,
            text=True,
        )
        return json.loads(probe.stdout.strip().splitlines()[-1])


def timed(fn, *args, repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn(*args)
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--results", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-page", action="store_true", help="skip the page's compute (it imports into a scratch DB)")
    args = parser.parse_args()
    results_dir = args.results or default_results_dir()
    n_files = sum(1 for _ in results_dir.rglob("results.json"))

    referee_s, ours = timed(referee, results_dir, repeat=args.repeat)
    loop_s, theirs = timed(loop, results_dir, repeat=args.repeat)
    mismatches = [m for m in ours if tuple(round(x, 3) for x in ours[m]) != tuple(round(x, 3) for x in theirs[m])]

    code = (
        f"import sys,time; t=time.perf_counter(); sys.path.insert(0, {str(REPO)!r});"
        "from benchmark.leaderboards.mlgym_results import *;"
        f"b=results_leaderboard(read_results_dir({str(results_dir)!r}, models=PUBLISHED_MODELS), models=PUBLISHED_MODELS);"
        "print(time.perf_counter()-t)"
    )
    colds = [
        float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
        for _ in range(3)
    ]

    print(f"MLGym AUP, 12 models + baseline, 13 tasks, {n_files} results.json under {results_dir}")
    print(f"  referee (numpy, one walk)      warm median of {args.repeat}: {referee_s * 1000:8.1f} ms")
    print(
        f"  loop (glob per pair, pure py)  warm median of {args.repeat}: {loop_s * 1000:8.1f} ms  ({loop_s / referee_s:.1f}x slower)"
    )
    print(
        f"  referee cold process, imports included, median of 3:   {statistics.median(colds) * 1000:8.1f} ms (target <= 1000 ms)"
    )
    print(f"  same AUP to 3 decimals: {'yes' if not mismatches else 'NO: ' + ', '.join(mismatches)}")
    for m, (a, s) in sorted(ours.items(), key=lambda kv: -kv[1][0]):
        print(f"    {m:26s} best attempt {a:.3f}  best submission {s:.3f}")
    if not args.no_page:
        page = page_compute(results_dir, args.repeat)
        print(
            f"  page compute over {page['runs']} imported runs (SQLite): first call {page['first'] * 1000:.1f} ms, "
            f"warm median of {args.repeat}: {page['warm'] * 1000:.1f} ms; tau_max {page['tau_max']}, "
            f"MLGym's table reproduced: {'yes' if page['matches'] else 'NO'}"
        )


if __name__ == "__main__":
    main()
