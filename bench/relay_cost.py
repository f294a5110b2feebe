"""What the CPU-charge relay costs a call: MLGym's 3-SAT heuristic_fn called through the real
evaluation (an evaluator sandbox, the submission in a sandbox of its own, the pipes between them),
behind the relay and without it, alternating in the same run.

    python bench/relay_cost.py [--runs 3] [--calls 2000] [--backend docker]

The relay (sandbox/runtime/driver.py) runs the submitted code as its child and forwards each reply
with a signed line giving the CPU time the submission's sandbox spent on it; evaluators that charge
that time (the built-in 3-SAT task) need it, MLGym's never read it. The evaluator here (written to
a temporary folder, mounted read-only like any evaluator) makes random 3-SAT formulas of MLGym's
kind (50-60 variables, 4.26 clauses a variable) and calls heuristic_fn(clauses, assignments,
conflict_count, assignment_history, level) with int-keyed dicts, as MLGym's DPLL solver does,
timing every call. The submission is MLGym's own heuristic.py (from MLGYM_DIR) when present, else a
copy of its rule. Per variant: the median and mean wall time of a call in microseconds, the
evaluator's CPU time a call, the CPU time a call that the relay measured in the submission's
sandbox (relay only), and the load average: the machine is shared, and a call's wall time is
mostly waiting for the scheduler. In-process, the same heuristic call costs what "in-process" says.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402

from sandbox import SandboxSpec  # noqa: E402
from sandbox.evaluation import Submission, evaluate  # noqa: E402

# The rule of MLGym's starter heuristic (3SATTime/heuristic.py), used when no MLGym checkout is here.
STARTER = """import random


def heuristic_fn(clauses, assignments, conflict_count, assignment_history, level):
    random.seed(10)
    unassigned_vars = list(set([abs(lit) for clause in clauses for lit in clause if abs(lit) not in assignments]))
    if not unassigned_vars:
        return None, True
    return random.choice(unassigned_vars), True
"""

ARGUMENTS = '''import random


def arguments(rng):
    """One call's arguments as MLGym's DPLL passes them, midway through a search."""
    n = rng.randint(50, 60)
    clauses = [[rng.choice((-1, 1)) * v for v in rng.sample(range(1, n + 1), 3)] for _ in range(round(4.26 * n))]
    fixed = rng.sample(range(1, n + 1), rng.randint(0, n // 2))
    assignments = {v: rng.random() < 0.5 for v in fixed}
    conflicts = {v: rng.randint(0, 5) for v in rng.sample(range(1, n + 1), 10)}
    return clauses, assignments, conflicts, fixed, len(fixed)
'''

EVALUATOR = (
    ARGUMENTS
    + """
import statistics
import sys
import time

from arena import Player, emit

CALLS = int(sys.argv[1])
rng = random.Random(20261203)
calls = [arguments(rng) for _ in range(CALLS)]
player = Player("heuristic_fn")
walls, relay_cpu = [], 0.0
cpu = time.process_time()
for args in calls:
    started = time.perf_counter()
    player(*args)
    walls.append(time.perf_counter() - started)
    relay_cpu += player.cpu_seconds or 0.0
cpu = time.process_time() - cpu
emit({
    "median_us": statistics.median(walls) * 1e6,
    "mean_us": statistics.fmean(walls) * 1e6,
    "evaluator_cpu_us": cpu / CALLS * 1e6,
    "submission_cpu_us": relay_cpu / CALLS * 1e6,
})
"""
)


def heuristic_source() -> tuple[bytes, str]:
    path = Path(settings.MLGYM_DIR) / "data" / "3SATTime" / "heuristic.py"
    if path.is_file():
        return path.read_bytes(), str(path)
    return STARTER.encode(), "a copy of MLGym's starter rule (no MLGym checkout here)"


def in_process_us(source: bytes, calls: int) -> float:
    """The same calls without any wall: the heuristic imported into this process."""
    namespace: dict = {}
    exec(compile(source, "heuristic.py", "exec"), namespace)
    heuristic = namespace["heuristic_fn"]
    made: dict = {}
    exec(ARGUMENTS, made)
    rng = made["random"].Random(20261203)
    args = [made["arguments"](rng) for _ in range(calls)]
    started = time.process_time()
    for item in args:
        heuristic(*item)
    return (time.process_time() - started) / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--backend", default=None, help="docker, podman or bwrap (default: the configured one)")
    args = parser.parse_args()
    if args.backend:
        settings.SANDBOX_BACKEND = args.backend
    source, origin = heuristic_source()
    print(
        f"heuristic: {origin}; {args.calls} calls a run; in-process {in_process_us(source, args.calls):.1f} us a call"
    )
    columns = ("median_us", "mean_us", "evaluator_cpu_us", "submission_cpu_us")
    print(f"{'variant':<14} run " + " ".join(f"{c:>17}" for c in columns) + "   load   wall s")
    results: dict[str, list[dict]] = {"relay": [], "no relay": []}
    with tempfile.TemporaryDirectory(prefix="referee-relay-bench-") as folder:
        (Path(folder) / "evaluate.py").write_text(EVALUATOR)
        os.chmod(folder, 0o755)
        for run in range(args.runs):
            for name, charged in (("relay", True), ("no relay", False)):
                submission = Submission(
                    files={"heuristic.py": source}, module="heuristic.py", functions=["heuristic_fn"],
                    call_timeout=5.0, cpu_charge=charged,
                )  # fmt: skip
                started = time.monotonic()
                result = evaluate(
                    evaluator_dir=Path(folder),
                    artifacts={},
                    command=f"python3 /evaluator/evaluate.py {args.calls}",
                    timeout=600,
                    spec=SandboxSpec(network=False, memory_mb=1024, cpus=1.0),
                    submission=submission,
                )
                seconds = time.monotonic() - started
                load = os.getloadavg()[0]
                if not result.ok:
                    print(f"{name:<14} {run:>3} failed: {result.error}\n{result.output[-2000:]}")
                    continue
                results[name].append(result.metrics)
                values = " ".join(f"{result.metrics[c]:>17.1f}" for c in columns)
                print(f"{name:<14} {run:>3} {values} {load:6.1f} {seconds:8.1f}", flush=True)
    if results["relay"] and results["no relay"]:
        relay = statistics.median(m["median_us"] for m in results["relay"])
        plain = statistics.median(m["median_us"] for m in results["no relay"])
        print(
            f"relay's cost a call (median of the runs' medians): {relay - plain:.1f} us ({relay:.1f} against {plain:.1f})"
        )


if __name__ == "__main__":
    main()
