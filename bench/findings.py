"""Benchmark and check: the findings page (/judge/findings/) on MLR-Bench's release, against the paper.

Run: python bench/findings.py [--dir ../shared/mlrbench] [--repeat 5]

Imports the release (the 201 tasks, the end-to-end runs, the stepwise experiments and write-ups,
every review and the human hallucination check) into a throw-away SQLite database, then reads the page
through the real view (Django's test client, an admin session): the first request (cold: templates
compiled, the fabrication audit of 40 experiments and papers run and cached; `make up` does this in its
seed) and the median of the next ones. Prints each figure the page computes beside
the paper's (judge/findings.py PUBLISHED) and, where the release has one, its own table
(human_eval/llm_judge.csv): the check that the page reproduces them. Exits 1 when a figure the page
claims to reproduce differs from the paper's. Target: page <= 1 s (the agreement page's, DESIGN.md).
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TASKS = ("iclr2025_bi_align", "iclr2025_buildingtrust", "iclr2025_data_problems", "iclr2025_dl4c", "iclr2025_mldpr",
         "iclr2025_question", "iclr2025_scope", "iclr2025_scsl", "iclr2025_verifai", "iclr2025_wsl")  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser()
    default = Path(__file__).resolve().parents[2] / "shared" / "mlrbench"
    ap.add_argument("--dir", type=Path, default=Path(os.environ.get("MLRBENCH_DIR") or default))
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    if not (args.dir / "agent_reviews").is_dir():
        print(f"no MLR-Bench release at {args.dir} (--dir or MLRBENCH_DIR)")
        return 2
    from config.redis_server import free_port, start_redis

    with tempfile.TemporaryDirectory(prefix="bench-findings-") as tmp:
        port = free_port()
        redis_proc = start_redis(data_dir=Path(tmp) / "redis", port=port, persist=False)
        try:
            return _run(args, tmp, port)
        finally:
            redis_proc.terminate()
            redis_proc.wait(timeout=10)


def _run(args: argparse.Namespace, tmp: str, port: int) -> int:
    os.environ["REDIS_URL"] = f"redis://127.0.0.1:{port}/0"
    os.environ["REFEREE_VAR_DIR"] = tmp
    os.environ.pop("DATABASE_URL", None)
    os.environ.setdefault("SECRET_KEY", "bench-findings-" + "x" * 40)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command
    from django.test import Client

    from accounts.services import user_create
    from benchmark.research.imports import import_mlr_runs
    from benchmark.research.tasks import import_mlr_tasks
    from benchmark.research.writeups import import_writeups
    from judge.findings import PUBLISHED, findings_compute
    from judge.mlr_reviews import import_mlr_reviews
    from judge.rubrics import rubric_load_defaults
    from review.io.hallucination import import_hallucination_labels

    call_command("migrate", verbosity=0)
    rubric_load_defaults()
    started = time.perf_counter()
    import_mlr_tasks(args.dir)
    import_mlr_runs(args.dir, stdout=io.StringIO())
    import_writeups(args.dir, stdout=io.StringIO())
    import_mlr_reviews(args.dir, stdout=io.StringIO())
    import_hallucination_labels(args.dir / "human_eval" / "Hallucination Check.csv")
    print(f"import of the release: {time.perf_counter() - started:.1f} s")

    admin = user_create(username="bench_admin", role="admin")
    client = Client()
    client.force_login(admin)
    timings = []
    for _ in range(args.repeat + 1):
        t = time.perf_counter()
        response = client.get("/judge/findings/")
        timings.append(time.perf_counter() - t)
        assert response.status_code == 200, response.status_code
    print(f"/judge/findings/: first {timings[0] * 1000:.0f} ms, then median {statistics.median(timings[1:]) * 1000:.0f} ms "
          f"of {args.repeat} (target <= 1000 ms)")  # fmt: skip

    f = findings_compute()
    failures = 0
    print("\nfigure | page | paper | release table")
    for block in f["experiment_flags"]["agents"]:
        for source in block["sources"]:
            c = source["count"]
            paper = f"{block['published']['value']}/{block['published']['of']}" if block["published"] else "-"
            print(
                f"{block['agent']} experiments flagged, {source['name']} | {c['flagged']}/{c['judged']} | {paper} | -"
            )
        if block["published"] and not block["reproduced_by"]:
            failures += 1
    for audits in f["paper_audits"]:
        c = audits["count"]
        print(f"end-to-end {audits['backbone']} papers flagged, Referee's audit | {c['flagged']}/{c['judged']} | - | -")
    released = list(csv.DictReader((args.dir / "human_eval" / "llm_judge.csv").open()))
    for row in f["end_to_end"]["rows"]:
        table = statistics.mean(float(r["Overall"]) for r in released if r["model_name"] == row["backbone"])
        paper = f"{row['published']['value']:.2f}" if row["published"] else "-"
        print(
            f"end-to-end Overall, {row['backbone']} | {row['overall'].mean:.2f} | {paper} | {table:.2f} (llm_judge.csv)"
        )
        failures += (row["published"] is not None and not row["matches"]) + (abs(row["overall"].mean - table) > 1e-9)
    for row in f["costs"]["rows"]:
        paper = f"${row['published']['value']:.2f}" if row["published"] else "-"
        total = f"${row['total']:.2f}" if row["total"] is not None else "unpriced"
        print(
            f"cost per paper, {row['backbone']} (coding agent alone ${row['agent_only']:.2f}) | {total} | {paper} | -"
        )
        failures += row["published"] is not None and not row["matches"]
    for judge in f["ablation"]["judges"]:
        overall = next(r for r in judge["rows"] if r["key"] == "overall")
        print(f"ablation, {judge['judge']}: Overall without - with code over {overall['n']} papers | "
              f"{overall['difference']:+.2f} | - | -")  # fmt: skip
    print(f"\nfigures differing from the paper: {failures}; published figures compared: {len(PUBLISHED)}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
