"""Each attempt an agent validated, scored again on the test split after its run, out of its sight.

MLGym's `validate` scores the test set, so MLGym's best attempt, and the baseline row it is ranked
against, are test-split scores. Referee's agent validates on the dev split (that score is what it
sees). To rank a Referee run the same way, the worker keeps each attempt that validated without
an error: the task's declared artifacts as they were when the agent called `validate`, copied out
of its sandbox, in the "artifacts" storage under `attempts/<run code>/<step>/` (listed in
`run.params["attempts_kept"]`). After the run a job (`benchmark.runs.jobs.score_attempts`, queue
`default`) scores each kept attempt on the test split through the task's isolated evaluation
(benchmark.tasks.evaluation.artifacts_evaluate, the path every score takes) and stores the scores
and the run's test-split best attempt (best of them and of the submission) in
`run.params["test_scoring"]`. The sandbox is gone by then and nothing is sent to the agent: it
never sees a test score before it submits. The leaderboard ranks by these scores
(benchmark.leaderboards.board.attempt_on_test_split); until they are in it uses the submission and
says so. `manage.py score_attempts` runs the job by hand (a run whose job never ran, or failed).
"""

from __future__ import annotations

import hashlib
import logging
from typing import Any

from django.core.files.base import ContentFile
from django.core.files.storage import Storage, storages
from django.db import transaction
from django.utils import timezone

from benchmark.models import Run, Task

log = logging.getLogger(__name__)

STORAGE_ALIAS = "artifacts"
PREFIX = "attempts"
JOB = "benchmark.runs.jobs.score_attempts"
# Runs whose kept attempts are scored: a cancelled or interrupted run is ranked as far as it went.
SCORED_STATUSES = (Run.Status.FINISHED, Run.Status.CANCELLED, Run.Status.INTERRUPTED)


def _storage() -> Storage:
    return storages[STORAGE_ALIAS]


def attempt_take(*, task: Task, session: Any) -> dict[str, bytes] | None:
    """The task's declared artifacts as they stand in the agent's workspace, or None when one cannot
    be read (the evaluation that follows says why; such an attempt has no score to keep)."""
    from benchmark.tasks.evaluation import artifacts_take
    from sandbox import SandboxError

    if not task.config.get("artifacts"):
        return None
    try:
        return artifacts_take(task=task, session=session)
    except SandboxError:
        return None


def attempt_keep(*, run: Run, step_index: int, artifacts: dict[str, bytes]) -> None:
    """Store one validated attempt's artifacts and list it on the run (the worker, during the run)."""
    storage = _storage()
    files = {}
    for name, data in artifacts.items():
        files[name] = storage.save(f"{PREFIX}/{run.code}/{step_index}/{name}", ContentFile(data))
    kept = [*(run.params.get("attempts_kept") or []), {"step": step_index, "files": files}]
    run.params = {**run.params, "attempts_kept": kept}
    Run.objects.filter(pk=run.pk).update(params=run.params)


def attempts_enqueue(run: Run) -> None:
    """After the run's end is committed: queue the test-split scoring of its kept attempts, if any.

    A queue that does not answer leaves the run saying so (`test_scoring.status` "not queued");
    `manage.py score_attempts --pending` scores it later."""
    if not run.params.get("attempts_kept") or run.status not in SCORED_STATUSES:
        return

    def enqueue() -> None:
        import django_rq

        try:
            django_rq.get_queue("default").enqueue(JOB, run.pk, job_timeout=3600)
        except Exception as exc:  # Redis down: recorded, never raised into the worker
            log.warning("test-split scoring of run %s not queued: %s", run.code, exc)
            _scoring_store(run.pk, {"status": "not queued", "error": f"the job queue did not answer: {exc}"})
            return
        _scoring_store(run.pk, {"status": "queued"}, only_if_missing=True)

    transaction.on_commit(enqueue)


def _scoring_store(run_id: int, scoring: dict[str, Any], *, only_if_missing: bool = False) -> Run:
    with transaction.atomic():
        run = Run.objects.select_for_update().get(pk=run_id)
        if only_if_missing and run.params.get("test_scoring"):
            return run  # the job was faster than this line
        run.params = {**run.params, "test_scoring": {**scoring, "at": timezone.now().isoformat()}}
        Run.objects.filter(pk=run.pk).update(params=run.params)
    return run


def _attempt_files(storage: Storage, files: dict[str, str]) -> dict[str, bytes] | str:
    """The stored artifacts of one attempt, or why they cannot be read."""
    artifacts = {}
    for name, stored in files.items():
        try:
            with storage.open(stored, "rb") as handle:
                artifacts[name] = handle.read()
        except OSError as exc:
            return f"the kept copy of {name} cannot be read: {exc}"
    return artifacts


def attempts_score(*, run_id: int) -> dict[str, Any]:
    """Score every kept attempt of the run on the test split; store and return `test_scoring`.

    Identical attempts are scored once. An attempt whose test evaluation fails makes the status
    "failed" (with the evaluator's words): the leaderboard then counts the submission only rather
    than a best attempt missing that attempt. Done, the kept files are deleted, and scoring the run
    again returns what is stored."""
    from benchmark.tasks.evaluation import artifacts_evaluate

    run = Run.objects.select_related("task").get(pk=run_id)
    done = run.params.get("test_scoring")
    if isinstance(done, dict) and done.get("status") == "done":
        return done
    kept = run.params.get("attempts_kept") or []
    storage = _storage()
    results: dict[str, Any] = {}
    attempts = []
    for attempt in kept:
        artifacts = _attempt_files(storage, attempt["files"])
        if isinstance(artifacts, str):
            attempts.append({"step": attempt["step"], "primary": None, "error": artifacts})
            continue
        digest = hashlib.sha256(b"".join(name.encode() + b"\0" + data for name, data in sorted(artifacts.items())))
        key = digest.hexdigest()
        if key not in results:
            results[key] = artifacts_evaluate(task=run.task, artifacts=artifacts, split="test")
        result = results[key]
        attempts.append({"step": attempt["step"], "primary": result.primary, "error": result.error[:2000]})
    values = [a["primary"] for a in attempts if a["primary"] is not None]
    if run.best_submission is not None:
        values.append(run.best_submission)
    pick = max if run.task.direction == Task.Direction.MAX else min
    errors = [f"step {a['step']}: {a['error']}" for a in attempts if a["error"]]
    scoring = {
        "status": "failed" if errors else "done",
        "split": "test",
        "attempts": attempts,
        "best_attempt": pick(values) if values else None,
        "evaluations": len(results),
    }
    if errors:
        scoring["error"] = "; ".join(errors)[:2000]
    _scoring_store(run.pk, scoring)
    if not errors:
        for attempt in kept:
            for stored in attempt["files"].values():
                storage.delete(stored)
    return scoring


def attempts_pending() -> list[int]:
    """Runs with kept attempts whose test-split scoring is not done (never queued, lost, failed)."""
    runs = Run.objects.filter(status__in=SCORED_STATUSES, params__has_key="attempts_kept")
    return [
        pk
        for pk, scoring in runs.values_list("pk", "params__test_scoring")
        if not (isinstance(scoring, dict) and scoring.get("status") == "done")
    ]
