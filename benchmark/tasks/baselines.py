"""A task version's baseline: the task's own baseline command, run like the model-free agent and
scored through exactly the path a submission takes; stored on that version (a failure as an
error, never as a number)."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from benchmark.models import Task
from benchmark.tasks.evaluation import (
    TaskNotRunnable,
    agent_sandbox_spec,
    submission_evaluate,
    task_image_ensure,
    workspace_prepare,
)
from sandbox import SandboxError, open_session


def baseline_command(task: Task) -> str:
    """What the `baseline` agent runs in the prepared workspace to produce the artifacts."""
    if not task.config.get("runnable"):
        raise TaskNotRunnable(f"task {task.slug} cannot run here: {task.config.get('not_runnable_reason', '')}")
    return task.config["baseline"]["command"]


def baseline_compute(*, task: Task) -> dict[str, Any]:
    """Run the baseline in an agent sandbox, score it on dev and test, store it on this version.

    A failure is stored as an error, never as a number.
    """
    scores: dict[str, Any] = {"version": task.version_hash, "computed_at": timezone.now().isoformat()}
    try:
        command = baseline_command(task)
        task_image_ensure(task)  # the task's image variant, if it has packages of its own
        with open_session(agent_sandbox_spec(task=task, run_code=f"baseline-{task.code}")) as session:
            workspace_prepare(task=task, session=session)
            run = session.run(command, timeout=float(task.config["baseline"]["timeout"]))
            scores["baseline_output"] = run.output[-4000:]
            if run.exit_code != 0 or run.timed_out:
                why = "timed out" if run.timed_out else f"exited with code {run.exit_code}"
                raise TaskNotRunnable(f"the baseline command {why}:\n{run.output[-2000:]}")
            for split in ("dev", "test"):
                result = submission_evaluate(task=task, session=session, split=split)
                scores[split] = result.as_dict()
        failed = [split for split in ("dev", "test") if scores[split]["error"]]
        scores["error"] = "; ".join(f"{split}: {scores[split]['error']}" for split in failed)
    except (TaskNotRunnable, SandboxError) as exc:
        scores["error"] = str(exc)
    task.baseline_scores = scores
    task.save(update_fields=["baseline_scores"])
    return scores
