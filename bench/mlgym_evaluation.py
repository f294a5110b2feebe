"""MLGym's own tasks: Referee's isolated evaluation against MLGym's in-workspace evaluation, side by
side, on the same submission (target: isolated <= 1.5x in-workspace).

    python bench/mlgym_evaluation.py [--runs 3] [--tasks battleOfSexes regressionKaggleHousePrice ...]

"mlgym" = what MLGym does: one sandbox holding the whole workspace as MLGym lays it out (starter
code, evaluate.py, target.py, data with the answers) and the submission, `python3 evaluate.py`
run there. "referee" = validate/submit's path (benchmark.tasks.evaluation.artifacts_evaluate):
the evaluator's sandbox with the pristine files and answers, the submitted strategy.py in a
sandbox of its own called over pipes. Both include starting their sandboxes. The submissions are
the tasks' baselines (house prices: baseline.py's submission.csv, made once beforehand).
Prints medians in seconds, the ratio and both scores (Monte-Carlo tasks differ run to run). The
machine is shared, so beside each median: the CPU time of the evaluator's processes (the shell's
`times` after evaluate.py, in either way's evaluator sandbox; the referee way's submission sandbox
not included), the CPU time the whole machine spent during that way (/proc/stat, everyone's), and
the load average when the task's runs ended.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402

from benchmark.models import Task  # noqa: E402
from benchmark.tasks.evaluation import (  # noqa: E402
    agent_sandbox_spec,
    artifacts_evaluate,
    evaluator_spec,
    task_folder,
    workspace_prepare,
)
from benchmark.tasks.loader import task_load  # noqa: E402
from benchmark.tasks.spec import task_files  # noqa: E402
from sandbox import open_session  # noqa: E402
from sandbox.evaluation import parse_metrics  # noqa: E402

TARGET = 1.5
# After the evaluator, in its shell: its processes' CPU time (bash's `times`, whose second line is
# the children's user and system time). Not JSON, so the metrics' line is still the one parsed.
TIMES = "; status=$?; times; exit $status"


def evaluator_cpu(output: str) -> float:
    """The children's user + system seconds from the last `times` output in ``output``."""
    lines = [line.split() for line in output.splitlines() if line.count("m") == 2 and line.endswith("s")]
    if not lines or len(lines[-1]) != 2:
        return float("nan")
    total = 0.0
    for field in lines[-1]:
        minutes, _, seconds = field.rstrip("s").partition("m")
        total += 60 * float(minutes) + float(seconds)
    return total


def machine_cpu() -> float:
    """CPU seconds the whole machine has been busy (all users), from /proc/stat."""
    with open("/proc/stat") as fh:
        fields = [int(value) for value in fh.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def unsaved_task(name: str) -> Task:
    root = Path(settings.MLGYM_DIR)
    spec = task_load(root / "configs" / "tasks" / f"{name}.yaml", mlgym_dir=root)
    return Task(slug=spec.slug, version_hash=spec.content_hash, config=spec.config, path=spec.path,
                metric=spec.metric, direction=spec.direction)  # fmt: skip


def submission(task: Task) -> dict[str, bytes]:
    """The task's baseline artifacts, made in an agent sandbox as the starter-code agent makes them."""
    with open_session(agent_sandbox_spec(task=task, run_code="bench")) as session:
        workspace_prepare(task=task, session=session)
        if task.config["baseline"]["command"]:
            session.run(task.config["baseline"]["command"], timeout=600)
        return {name: session.get_file(f"/workspace/{name}") for name in task.config["artifacts"]}


def mlgym_way(task: Task, artifacts: dict[str, bytes]) -> tuple[float, dict | None, float]:
    folder = task_folder(task)
    started = time.monotonic()
    with open_session(evaluator_spec(task)) as session:
        for base in (folder / "workspace", folder / "evaluator" / "hidden"):
            for path in task_files(base):
                session.put_file(path.relative_to(base).as_posix(), path.read_bytes())
        for path in task_files(folder / "evaluator"):
            if "hidden" not in path.relative_to(folder / "evaluator").parts:
                session.put_file(path.name, path.read_bytes())
        for name, data in artifacts.items():
            session.put_file(name, data)
        extra = " --submission_file submission.csv" if "submission.csv" in artifacts else ""
        result = session.run(f"python3 evaluate.py{extra}{TIMES}", timeout=900)
    metrics, _ = parse_metrics(result.output)
    return time.monotonic() - started, metrics, evaluator_cpu(result.output)


def referee_way(task: Task, artifacts: dict[str, bytes]) -> tuple[float, dict | None, float]:
    started = time.monotonic()
    result = artifacts_evaluate(task=task, artifacts=artifacts, split="test")
    metrics = result.metrics if result.ok else {"error": result.error}
    return time.monotonic() - started, metrics, evaluator_cpu(result.output)


def pair(values: dict[str, list[float]]) -> str:
    """'mlgym/referee' medians."""
    return f"{statistics.median(values['mlgym']):.1f}/{statistics.median(values['referee']):.1f}"


def timed_command(task: Task) -> Task:
    """The task with `times` after its evaluator command (an unsaved row: nothing is stored)."""
    evaluator = {**task.config["evaluator"], "command": task.config["evaluator"]["command"] + TIMES}
    task.config = {**task.config, "evaluator": evaluator}
    return task


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tasks", nargs="+", default=["battleOfSexes", "prisonersDilemma", "blotto",
                                                         "regressionKaggleHousePrice"])  # fmt: skip
    args = parser.parse_args()
    print(f"{'task':28} {'mlgym s':>8} {'referee s':>9} {'ratio':>6} {'eval cpu s':>11} {'machine cpu s':>14} {'load':>5}"
          "  scores (mlgym | referee, last run)")  # fmt: skip
    for name in args.tasks:
        task = unsaved_task(name)
        task_folder(task)  # build once, outside the timings
        artifacts = submission(task)
        timed_command(task)
        times: dict[str, list[float]] = {"mlgym": [], "referee": []}
        cpu: dict[str, list[float]] = {"mlgym": [], "referee": []}
        machine: dict[str, list[float]] = {"mlgym": [], "referee": []}
        last: dict[str, dict | None] = {}
        for _ in range(args.runs):  # alternate, so that machine load hits both paths alike
            for way, function in (("mlgym", mlgym_way), ("referee", referee_way)):
                busy = machine_cpu()
                seconds, metrics, evaluator = function(task, artifacts)
                machine[way].append(machine_cpu() - busy)
                times[way].append(seconds)
                cpu[way].append(evaluator)
                last[way] = metrics
        old, new = statistics.median(times["mlgym"]), statistics.median(times["referee"])
        verdict = "ok" if new <= TARGET * old else f"over {TARGET}x"
        print(f"{name:28} {old:8.2f} {new:9.2f} {new / old:6.2f} {pair(cpu):>11} {pair(machine):>14} "
              f"{os.getloadavg()[0]:5.1f}  {last['mlgym']} | {last['referee']}  {verdict}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
