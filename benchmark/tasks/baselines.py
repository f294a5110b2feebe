"""A task version's baseline: the task's own baseline command, run like the model-free agent and
scored through exactly the path a submission takes; stored on that version (a failure as an
error, never as a number), and compared with the baseline its source published (MLGym's
``baseline_scores``)."""

from __future__ import annotations

import math
import statistics
import time
from typing import Any

from django.utils import timezone
from redis.exceptions import RedisError

from benchmark.models import Task
from benchmark.runs.gpus import GpuUnavailable, gpus_leased
from benchmark.runs.provenance import gpu_hours, run_environment
from benchmark.tasks.evaluation import (
    TaskNotRunnable,
    agent_sandbox_spec,
    submission_evaluate,
    task_image_ensure,
    workspace_prepare,
)
from benchmark.tasks.resources import task_gpus
from sandbox import SandboxError, Session, open_session

# Deterministic evaluations must give the published value up to float noise across library versions.
REL_TOLERANCE = 1e-6
# Monte-Carlo evaluations: the published value is one run; it agrees when it lies inside the
# prediction interval for one more run drawn from the repeats: Student's t with n - 1 degrees of
# freedom (the sd is itself estimated from few repeats), at the two-sided level of 3 normal sigmas.
PREDICTION_LEVEL = 0.9973


def baseline_command(task: Task) -> str:
    """What the `baseline` agent runs in the prepared workspace to produce the artifacts."""
    if not task.config.get("runnable"):
        raise TaskNotRunnable(f"task {task.slug} cannot run here: {task.config.get('not_runnable_reason', '')}")
    command = task.config["baseline"]["command"]
    if not command:
        raise TaskNotRunnable(f"task {task.slug} has no baseline code (its baseline_paths name no script to run)")
    return command


def baseline_compute(*, task: Task, gpu_wait: float | None = None) -> dict[str, Any]:
    """Run the baseline in an agent sandbox, score it on dev and test, store it on this version.

    A task that needs GPUs gets them exactly as a run does (benchmark.runs.gpus): leased for the
    whole baseline, training and evaluation, so that no run or other baseline shares them, waiting
    up to `gpu_wait` seconds (GPU_LEASE_WAIT by default) for ones that are held; without them the
    baseline is an error that says why and no sandbox starts. What it ran on (image, hashes, GPUs
    and GPU-hours) is kept under "environment", as a run keeps it (benchmark.runs.provenance).

    A task whose evaluation is Monte-Carlo (MLGym's games) is scored ``monte_carlo_repeats``
    times in all (dev and test count: MLGym scores both on the same games), to measure the spread
    that the comparison with the published value needs. A failure is stored as an error, never
    as a number.
    """
    scores: dict[str, Any] = {"version": task.version_hash, "computed_at": timezone.now().isoformat()}
    try:
        command = baseline_command(task)
        task_image_ensure(task)  # the task's image variant, if it has packages of its own
        with gpus_leased(task_gpus(task), wait=gpu_wait, holder="baseline") as devices:  # [] for a CPU task
            leased = time.perf_counter()
            spec = agent_sandbox_spec(task=task, run_code=f"baseline-{task.code}", gpus=[gpu.id for gpu in devices])
            try:
                with open_session(spec) as session:
                    scores["environment"] = run_environment(task=task, session=session, gpus=devices)
                    _baseline_score(task=task, session=session, command=command, scores=scores)
            finally:  # the sandbox is gone: its GPUs' time ends here, whatever happened inside
                hours = gpu_hours(environment=scores.get("environment", {}), wall_seconds=time.perf_counter() - leased)
                if hours is not None:
                    scores["environment"]["gpu_hours"] = hours
        failed = [split for split in ("dev", "test") if scores[split]["error"]]
        scores["error"] = "; ".join(f"{split}: {scores[split]['error']}" for split in failed)
    except (TaskNotRunnable, SandboxError, GpuUnavailable) as exc:
        scores["error"] = str(exc)
    except RedisError as exc:  # only a GPU task's baseline needs Redis: its lease's locks live there
        scores["error"] = (
            f"the task's GPUs are leased through Redis, which did not answer, so the baseline did not start: {exc}"
        )
    task.baseline_scores = scores
    task.save(update_fields=["baseline_scores"])
    return scores


def _baseline_score(*, task: Task, session: Session, command: str, scores: dict[str, Any]) -> None:
    """Run the baseline command in the prepared workspace and score it into `scores`."""
    workspace_prepare(task=task, session=session)
    run = session.run(command, timeout=float(task.config["baseline"]["timeout"]))
    scores["baseline_output"] = run.output[-4000:]
    if run.exit_code != 0 or run.timed_out:
        why = "timed out" if run.timed_out else f"exited with code {run.exit_code}"
        raise TaskNotRunnable(f"the baseline command {why}:\n{run.output[-2000:]}")
    for split in ("dev", "test"):
        result = submission_evaluate(task=task, session=session, split=split)
        scores[split] = result.as_dict()
    repeats = int(task.config.get("monte_carlo_repeats") or 1)
    if repeats > 1 and not scores["dev"]["error"] and not scores["test"]["error"]:
        runs = [scores["dev"]["metrics"], scores["test"]["metrics"]]
        while len(runs) < repeats:
            result = submission_evaluate(task=task, session=session, split="test")
            if not result.ok:
                scores["repeats_error"] = result.error
                break
            runs.append(result.metrics)
        scores["repeats"] = runs


def _computed(metrics: dict[str, Any], key: str) -> float | None:
    """The computed value of a published metric; names compare case-insensitively (MLGym's titanic
    publishes "Accuracy" and its evaluate.py prints "accuracy")."""
    for name, value in (metrics or {}).items():
        if name.lower() == key.lower() and isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    return None


def published_comparison(task: Task) -> dict[str, Any]:
    """The published baseline beside the computed one, metric by metric, with the verdict.

    Each row: metric, published, computed, agrees (True, False, or None when not compared) and how.
    ``disagrees`` lists the metrics that were compared and differ."""
    published = task.config.get("published_baseline_scores") or {}
    baseline = task.baseline_scores or {}
    test = baseline.get("test") or {}
    repeats = baseline.get("repeats") or []
    machine = set(task.config.get("machine_bound_metrics") or [])
    rows = []
    for key, value in published.items():
        row: dict[str, Any] = {
            "metric": key,
            "published": value,
            "computed": None,
            "sd": None,
            "agrees": None,
            "how": "",
        }
        rows.append(row)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            row["how"] = "the published value is not a number"
            continue
        if key in machine:
            row["computed"] = _computed(test.get("metrics") or {}, key)
            row["how"] = "wall-clock time: it measures the machine, so it is shown, not compared"
            continue
        if not test or test.get("error"):
            row["how"] = "not computed: " + (test.get("error") or baseline.get("error") or "no baseline run yet")
            continue
        values = [v for v in (_computed(metrics, key) for metrics in repeats) if v is not None]
        if len(values) >= 2:
            mean, sd = statistics.fmean(values), statistics.stdev(values)
            # here: scipy.stats takes a second to import, and neither the web processes nor a run's start need it
            from scipy.stats import t as student_t

            quantile = float(student_t.ppf(0.5 + PREDICTION_LEVEL / 2, len(values) - 1))
            tolerance = quantile * sd * math.sqrt(1 + 1 / len(values))
            row["computed"], row["sd"] = mean, sd
            row["agrees"] = abs(mean - value) <= tolerance
            row["how"] = (
                f"Monte-Carlo: mean of {len(values)} evaluations, one evaluation's sd {sd:.3g}; agrees when "
                f"within {tolerance:.3g} ({PREDICTION_LEVEL:.2%} prediction interval for one evaluation: "
                f"Student's t {quantile:.3g} with {len(values) - 1} degrees of freedom x sd "
                f"x{math.sqrt(1 + 1 / len(values)):.2f} for the mean's own error)"
            )
            continue
        computed = _computed(test.get("metrics") or {}, key)
        row["computed"] = computed
        if computed is None:
            row["how"] = "the evaluator reported no such metric"
            row["agrees"] = False
            continue
        row["agrees"] = math.isclose(computed, value, rel_tol=REL_TOLERANCE, abs_tol=1e-12)
        row["how"] = f"deterministic: agrees within a relative {REL_TOLERANCE:g}"
    return {"rows": rows, "disagrees": [row["metric"] for row in rows if row["agrees"] is False]}
