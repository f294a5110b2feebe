"""The benchmark app's use of the channel layer, for sync code (the run worker).

Appending a step is one INSERT (plus the Score row of a validate/submit, and one UPDATE of the
run's counters) and one group message to `run_<code>`; nothing ever rewrites a trajectory, so
the cost of step 1,000 equals the cost of step 10.

Encode once: a step is serialised to JSON when it is recorded and the text is stored with it
(`Step.wire`); the group message carries that text, every viewer's socket sends it as it is, and
the reconnect catch-up reads it back instead of encoding the row again (issue 20).

Group messages go through accounts.progress.group_send, shared with the other apps: channels_redis's
own group_send on the process's one sending loop, which keeps its Redis connection.
"""

from __future__ import annotations

import json
import logging
import math
import time
from datetime import datetime
from typing import Any, TypedDict

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone
from redis.exceptions import RedisError

from accounts.progress import group_send
from benchmark.fields import without_nul
from benchmark.models import Run, Score, Step, Task
from benchmark.runs.exits import exit_text
from config.db import reconnecting

log = logging.getLogger(__name__)


class ScorePayload(TypedDict):
    kind: str
    metrics: dict[str, Any]
    primary: float | None
    error: str


class StepPayload(TypedDict):
    index: int
    thought: str
    action: str
    observation: str
    state: dict[str, Any]
    execution_time: float | None
    tokens_sent: int
    tokens_received: int
    cost: float
    created_at: str
    score: ScorePayload | None


class RunPayload(TypedDict):
    status: str
    exit_status: str
    exit_text: str  # the exit status in words (benchmark.runs.exits)
    error: str
    step_count: int
    cost: float | None
    tokens_sent: int | None
    tokens_received: int | None
    best_attempt: float | None
    best_submission: float | None
    finished: bool
    started_at: str | None
    wall_time: float | None  # seconds; final once finished, the page counts on from started_at before
    # A cancelled run's model call that no step holds (services._run_finish): in cost and tokens.
    unrecorded: dict[str, Any] | None


def run_group(code: Any) -> str:
    return f"run_{code}"


def score_payload(score: Score | None) -> ScorePayload | None:
    if score is None:
        return None
    return {"kind": score.kind, "metrics": score.metrics, "primary": score.primary, "error": score.error}


def step_payload(step: Step, score: Score | None = None) -> StepPayload:
    return {
        "index": step.index,
        "thought": step.thought,
        "action": step.action,
        "observation": step.observation,
        "state": step.state,
        "execution_time": round(step.execution_time, 4) if step.execution_time is not None else None,
        "tokens_sent": step.tokens_sent,
        "tokens_received": step.tokens_received,
        "cost": step.cost,
        "created_at": step.created_at.isoformat() if step.created_at else "",
        "score": score_payload(score),
    }


def _with_scores(run_id: int, steps: Any) -> list[tuple[Step, Score | None]]:
    steps = list(steps)
    scores = {s.step_id: s for s in Score.objects.filter(run_id=run_id, step__in=steps)} if steps else {}
    return [(step, scores.get(step.pk)) for step in steps]


def steps_after(run_id: int, after: int, *, limit: int | None = None) -> list[StepPayload]:
    """Steps with index > after, in order, each with its score (the run page's first steps)."""
    steps = Step.objects.filter(run_id=run_id, index__gt=after).order_by("index")[:limit]
    return [step_payload(step, score) for step, score in _with_scores(run_id, steps)]


# -- encode once --------------------------------------------------------------------------------


def step_wire(step: Step, score: Score | None = None) -> str:
    """The step as every viewer receives it: JSON, encoded once. NULs are written as the database
    stores them (benchmark.fields), so a live step and the same step read back are the same text."""
    return json.dumps(without_nul(step_payload(step, score)))


def steps_frame(wires: list[str]) -> str:
    """The websocket message {"type": "steps", "steps": [...]} around already encoded steps."""
    return '{"type": "steps", "steps": [' + ", ".join(wires) + "]}"


def wires_after(run_id: int, after: int, *, limit: int | None = None) -> list[tuple[int, str]]:
    """(index, encoded step) of the steps with index > after, in order: the reconnect catch-up.

    Reads the stored text only; a step stored without one (imported from a file) is encoded here.
    """
    steps = Step.objects.filter(run_id=run_id, index__gt=after).order_by("index")
    rows = list(steps.values_list("index", "wire")[:limit])
    missing = [index for index, wire in rows if not wire]
    if missing:
        found = _with_scores(run_id, Step.objects.filter(run_id=run_id, index__in=missing))
        encoded = {step.index: step_wire(step, score) for step, score in found}
        rows = [(index, wire or encoded[index]) for index, wire in rows]
    return rows


def step_send(run: Run, step: Step) -> None:
    """Publish a recorded step: its stored text, which consumers relay without decoding it; retried
    while Redis is unreachable (send_retrying)."""
    send_retrying(run_group(run.code), {"type": "run.step", "index": step.index, "wire": step.wire})


def run_payload(run: Run) -> RunPayload:
    unknown = set((run.params or {}).get("unknown") or ())  # numbers an imported file did not give
    return {
        "status": run.status,
        "exit_status": run.exit_status,
        "exit_text": exit_text(run.exit_status),
        "error": run.error,
        "step_count": run.step_count,
        "cost": None if "cost" in unknown else run.cost,
        "tokens_sent": None if "tokens_sent" in unknown else run.tokens_sent,
        "tokens_received": None if "tokens_received" in unknown else run.tokens_received,
        "best_attempt": run.best_attempt,
        "best_submission": run.best_submission,
        "finished": not run.is_active,
        "started_at": run.started_at.isoformat() if run.started_at else None,
        "wall_time": None if run.wall_time is None else round(run.wall_time, 1),
        "unrecorded": (run.params or {}).get("cancel_unrecorded"),
    }


# -- sending (accounts.progress.group_send) ---------------------------------------------------------


def run_status_send(run: Run, *, patient: bool = False) -> None:
    """Tell the run's viewers its status. `patient` (the worker): retry through a Redis blip, see
    send_retrying. Otherwise (a web request, the reaper) one try: the status is committed, and a
    viewer reads it from the database when its socket reconnects."""
    message = {"type": "run.status", "run": dict(run_payload(run))}
    if patient:
        send_retrying(run_group(run.code), message)
        return
    try:
        group_send(run_group(run.code), message)
    except Exception as exc:
        log.warning("status of run %s not pushed (viewers read it on reconnect): %s", run.code, exc)


# -- Redis blips: the database holds every step; the live push waits for Redis, up to a limit -----


class LiveChannelDown(Exception):
    """Redis stayed unreachable longer than settings.RUN_REDIS_OUTAGE_LIMIT; the run stops interrupted."""


# What an unreachable or restarting Redis raises (BusyLoadingError, while it reads its append-only
# file, is a ConnectionError); anything else (a message that cannot be encoded) is no blip.
UNREACHABLE = (RedisError, OSError, TimeoutError)
BACKOFF_FIRST = 0.05  # seconds before the first retry; doubled each time up to BACKOFF_MAX
BACKOFF_MAX = 2.0  # so that a run notices within about 2 s that Redis is back


def send_retrying(group: str, message: dict[str, Any]) -> None:
    """group_send, retried with exponential backoff while Redis is unreachable; LiveChannelDown once
    it has been failing for RUN_REDIS_OUTAGE_LIMIT seconds."""
    limit = settings.RUN_REDIS_OUTAGE_LIMIT
    delay = BACKOFF_FIRST
    failing_since: float | None = None
    while True:
        try:
            group_send(group, message)
            if failing_since is not None:
                log.warning("live push to %s went through after %.1f s", group, time.monotonic() - failing_since)
            return
        except UNREACHABLE as exc:
            now = time.monotonic()
            failing_since = now if failing_since is None else failing_since
            if now - failing_since >= limit:
                raise LiveChannelDown(
                    f"Redis (the job queue and live updates) was unreachable for more than {limit:g} s"
                ) from exc
            log.warning("live push to %s failed, retrying in %.2f s: %s", group, delay, exc)
            time.sleep(min(delay, limit - (now - failing_since)))
            delay = min(2 * delay, BACKOFF_MAX)


class RunNotRunning(Exception):
    """step_append(while_running=True) found the run no longer running (cancelled): nothing was written."""


def _better(task: Task, current: float | None, value: float | None) -> float | None:
    if value is None or not math.isfinite(value):
        return current
    if current is None:
        return value
    return max(current, value) if task.direction == Task.Direction.MAX else min(current, value)


def step_append(
    *,
    run: Run,
    thought: str,
    action: str,
    observation: str,
    raw_response: str = "",
    state: dict[str, Any] | None = None,
    execution_time: float = 0.0,
    tokens_sent: int = 0,
    tokens_received: int = 0,
    cost: float = 0.0,
    score_kind: str | None = None,
    score: Any = None,
    publish: bool = True,
    while_running: bool = False,
) -> Step:
    """Persist the next step of `run` (the worker is its only writer) and publish it.

    `run` is updated in memory too, so the caller's object stays the source of the next index.
    `while_running`: only if the run is still `running`, else RunNotRunning and nothing written.
    The run's row is updated first, on that condition, in the step's transaction: a cancel commits
    either before it (no step) or after it (the step was committed first, and is published).
    """
    index = run.step_count + 1
    now = timezone.now()

    def commit() -> Step:
        with transaction.atomic():
            step = Step(
                run=run,
                index=index,
                thought=thought,
                action=action,
                observation=observation,
                raw_response=raw_response,
                state=state or {},
                execution_time=execution_time,
                tokens_sent=tokens_sent,
                tokens_received=tokens_received,
                cost=cost,
                created_at=now,
            )
            changes: dict[str, Any] = {"step_count": index, "heartbeat_at": now}
            counters = {"tokens_sent": tokens_sent, "tokens_received": tokens_received, "cost": cost}
            score_row = _score_row(run=run, step=step, score_kind=score_kind, score=score, changes=changes)
            _write(run=run, step=step, score=score_row, changes=changes, counters=counters, while_running=while_running)
        if "best_attempt" in changes:
            run.best_attempt = changes["best_attempt"]
        if "best_submission" in changes:
            run.best_submission = changes["best_submission"]
        return step

    # A connection dropped mid-step is reopened and the step written again, unless it was
    # committed before the connection died (config.db.reconnecting).
    step = reconnecting(
        commit,
        committed=lambda: Step.objects.filter(run=run, index=index).first(),
        what=f"step {index} of run {run.code}",
    )
    _count_in_memory(run, index=index, tokens_sent=tokens_sent, tokens_received=tokens_received, cost=cost, now=now)
    if publish:
        # Sent after the commit: a viewer that reconnects and asks the database finds it too, and a
        # Redis outage (LiveChannelDown) leaves this step committed.
        step_send(run, step)
    return step


def _score_row(*, run: Run, step: Step, score_kind: str | None, score: Any, changes: dict[str, Any]) -> Score | None:
    """The step's score row, if it was scored. A valid score also moves the run's best values (put
    in `changes`, the run row's update); a failed one is stored with its error and no number."""
    if score_kind is None or score is None:
        return None
    primary = score.primary if score.primary is not None and math.isfinite(score.primary) else None
    score_row = Score(
        run=run,
        step=step,
        kind=score_kind,
        metrics=score.metrics or {},
        primary=primary if not score.error else None,
        error=score.error or "",
    )
    if not score.error:
        changes["best_attempt"] = _better(run.task, run.best_attempt, primary)
        if score_kind == Score.Kind.SUBMIT:
            changes["best_submission"] = primary
    return score_row


def _count_in_memory(
    run: Run, *, index: int, tokens_sent: int, tokens_received: int, cost: float, now: datetime
) -> None:
    """The caller's run object follows the row's counters (the database added them with F())."""
    run.step_count = index
    run.tokens_sent += tokens_sent
    run.tokens_received += tokens_received
    run.cost += cost
    run.heartbeat_at = now


def _write(
    *, run: Run, step: Step, score: Score | None, changes: dict[str, Any], counters: dict[str, Any], while_running: bool
) -> None:
    """The step's writes, inside its transaction: the run's row first (a compare-and-set on its
    status when `while_running`: the UPDATE's row count says whether it was still running), then the
    step, encoded once (its stored text), and its score."""
    condition = {"pk": run.pk, "status": Run.Status.RUNNING} if while_running else {"pk": run.pk}
    added = {name: F(name) + value for name, value in counters.items()}
    if not Run.objects.filter(**condition).update(**changes, **added) and while_running:
        raise RunNotRunning(f"run {run.code} is no longer running")
    step.wire = step_wire(step, score)
    step.save(force_insert=True)
    if score is not None:
        score.save(force_insert=True)
