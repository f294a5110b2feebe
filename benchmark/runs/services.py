"""Run flows that span models and touch RQ, the sandbox and the channel layer."""

from __future__ import annotations

import difflib
import logging
import os
import threading
import time
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from benchmark.agent.environment import Environment, Observation
from benchmark.agent.loop import Cancelled, Decision, ExitStatus, Outcome, Usage, run_loop
from benchmark.agent.policies import LLMPolicy, ModelSettings, baseline_policy, replay_policy
from benchmark.agent.prompt import TASK_TEMPLATE, system_message
from benchmark.models import AgentConfig, Run, RunGroup, RunShare, Score, Step, Task
from benchmark.runs import attempts, fork_steps, gpus, heartbeat, progress, provenance, queueing, slurm
from benchmark.runs.resume import committed_steps, policy_restore, prior_usage, workspace_replay
from benchmark.runs.timeouts import command_timeout_of
from config.db import reconnecting
from sandbox.conf import host_id

log = logging.getLogger(__name__)

DEFAULT_MAX_TOKENS = 4096


@dataclass(frozen=True)
class Limits:
    """Per-launch overrides of the agent config's limits (None = the config's value)."""

    max_steps: int | None = None
    cost_limit: float | None = None
    command_timeout: int | None = None

    def as_params(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


# -- launch ---------------------------------------------------------------------------------------
class LaunchError(Exception):
    """Runs could not be put on the queue; the message says which and why (for the user)."""


def run_launch(
    *,
    owner: AbstractBaseUser,
    tasks: Sequence[Task],
    agent: AgentConfig,
    n_runs: int = 1,
    limits: Limits | None = None,
    replay_of: Run | None = None,
    fork_of: Run | None = None,
    fork_step: int | None = None,
    name: str = "",
    title: str = "",
    note: str = "",
) -> list[Run]:
    """One Run row and one RQ job per (task, repetition)."""
    if not tasks:
        raise ValueError("choose at least one task")
    if not 1 <= n_runs <= 100:
        raise ValueError("the number of runs must be between 1 and 100")
    limits = limits or Limits()
    try:
        queueing.queue_check()  # Redis down: say so, and create nothing
    except queueing.QueueDown as exc:
        raise LaunchError(str(exc)) from exc
    # A GPU task with no GPU worker live: create nothing (Slurm's own sbatch judges its GPU tasks).
    refusal = gpus.launch_refusal([task for task in tasks if slurm.executor_of_task(task) == Run.Executor.RQ])
    if refusal:
        raise LaunchError(refusal)
    runs: list[Run] = []
    failed: list[Run] = []
    with transaction.atomic():
        group = RunGroup.objects.create(
            name=name or title or f"{agent.name} on {len(tasks)} task(s) x {n_runs}",
            title=title.strip(),
            note=note.strip(),
            owner=owner,
        )
        for task in tasks:
            for repetition in range(n_runs):
                run = Run.objects.create(
                    task=task,
                    agent=agent,
                    group=group,
                    owner=owner,
                    method=agent.name,
                    replay_of=replay_of,
                    fork_of=fork_of,
                    fork_step=fork_step,
                    params={**limits.as_params(), "repetition": repetition},
                )
                if fork_of is not None:  # its first steps are the parent's (benchmark.runs.forks)
                    fork_steps.steps_copy(parent=fork_of, fork=run, upto=fork_step or 0)
                runs.append(run)
        queueing.enqueue_after_commit(runs, failed=failed)
    if failed:  # Redis went away between the check and the commit, or sbatch refused: their pages say so
        why = failed[0].error.removeprefix("Not started: ").removesuffix(" Launch it again.")
        raise LaunchError(
            f"{len(failed)} of {len(runs)} run(s) could not be queued: {why} "
            "They are marked failed (not queued); launch them again once that is fixed."
        )
    return runs


def run_resume(*, run: Run, by: Any = None) -> bool:
    """Queue an interrupted run again; the worker replays its committed steps into a fresh sandbox
    and the agent goes on from the next step (benchmark.runs.resume). False if it is not interrupted."""
    try:
        queueing.queue_check()
    except queueing.QueueDown as exc:
        raise LaunchError(str(exc).replace("launched", "resumed")) from exc
    with transaction.atomic():
        run = Run.objects.select_for_update().get(pk=run.pk)
        if run.status != Run.Status.INTERRUPTED or run.source != Run.Source.REFEREE:
            return False
        resumes = [
            *run.params.get("resumes", []),
            {
                "after_step": run.step_count,
                "at": timezone.now().isoformat(),
                "by": by.get_username() if by is not None else "",
                "interrupted_by": run.error,
            },
        ]
        run.params = {**run.params, "resumes": resumes}
        Run.objects.filter(pk=run.pk).update(
            status=Run.Status.QUEUED, exit_status="", error="", finished_at=None, params=run.params
        )
        failed: list[Run] = []
        interrupted_by = run.error
        queueing.enqueue_after_commit(
            [run], failed=failed, on_failure=lambda r, why: _resume_undo(r, interrupted_by, why)
        )
    if failed:
        why = failed[0].params.get("not_resumed", "the job queue stopped answering")
        raise LaunchError(f"The run could not be queued again ({why}); it stays interrupted.")
    progress.run_status_send(Run.objects.get(pk=run.pk))
    return True


def run_cancel(*, run: Run) -> bool:
    """Stop a queued or running run. A queued one is cancelled at once (no worker will claim it); a
    running one becomes `cancelling`: its worker commits no further step, interrupts the command in
    flight (CancelWatch), records the costs of its model calls, and sets `cancelled` itself, after
    its last step, so that a viewer's last message is the final state. False if it was not active."""
    now = timezone.now()
    updated = Run.objects.filter(pk=run.pk, status=Run.Status.QUEUED).update(
        status=Run.Status.CANCELLED, exit_status=ExitStatus.EXIT_CANCELLED, finished_at=now
    )
    if not updated:
        updated = Run.objects.filter(pk=run.pk, status=Run.Status.RUNNING).update(status=Run.Status.CANCELLING)
    run.refresh_from_db()
    if updated:
        slurm.cancel_asked(run)  # a queued job is scancelled; a running one gets the reaper's grace
        progress.run_status_send(run)
    return bool(updated)


def run_share(*, run: Run, user: AbstractBaseUser, by: Any = None) -> RunShare:
    """Give `user` read access to `run` (the live share if there is one already)."""
    with transaction.atomic():
        share = RunShare.objects.filter(run=run, user=user, revoked_at__isnull=True).first()
        if share is None:
            try:
                with transaction.atomic():
                    share = RunShare.objects.create(run=run, user=user, shared_by=by)
            except IntegrityError:  # a concurrent share of the same pair won: use it
                share = RunShare.objects.get(run=run, user=user, revoked_at__isnull=True)
    return share


def run_share_revoke(*, run: Run, user: AbstractBaseUser, by: Any = None) -> bool:
    """Withdraw `user`'s read access; their open run pages lose the stream at once (see
    benchmark.signals: the save announces the change to the run's websocket group)."""
    share = RunShare.objects.filter(run=run, user=user, revoked_at__isnull=True).first()
    if share is None:
        return False
    share.revoked_at, share.revoked_by = timezone.now(), by
    share.save(update_fields=["revoked_at", "revoked_by"])
    return True


def _resume_undo(run: Run, error: str, why: str = "") -> None:
    """A resume whose job the queue did not take: the run is interrupted again, resumable later."""
    run.params = {**run.params, "resumes": run.params.get("resumes", [])[:-1], "not_resumed": why}
    Run.objects.filter(pk=run.pk, status=Run.Status.QUEUED).update(
        status=Run.Status.INTERRUPTED,
        exit_status="interrupted",
        error=error,
        finished_at=timezone.now(),
        params=run.params,
    )


# -- execution ----------------------------------------------------------------------------------
@dataclass
class RunRecorder:
    """Persists each step as it happens; for replays, also compares outputs with the original."""

    run: Run
    usage: Usage = field(default_factory=Usage)
    original: list[Step] = field(default_factory=list)
    differences: list[int] = field(default_factory=list)
    harness_seconds: list[float] = field(default_factory=list)

    def cancelled(self) -> bool:
        status = reconnecting(
            lambda: Run.objects.filter(pk=self.run.pk).values_list("status", flat=True).first(),
            what=f"the cancel check of run {self.run.code}",
        )
        return status != Run.Status.RUNNING

    def step(self, *, decision: Decision, observation: Observation, state: dict[str, Any], harness: float) -> None:
        """Commit and publish the step, or raise Cancelled (nothing written) if the run is no
        longer running: a step never lands after the cancel that the viewers were told of."""
        state = dict(state)
        if self.original:
            state["replay"] = self._compare(observation.text)
        score_kind = {"validate": Score.Kind.VALIDATE, "submit": Score.Kind.SUBMIT}.get(observation.kind)
        try:
            self._append(decision, observation, state, score_kind)
        except progress.RunNotRunning:
            raise Cancelled from None
        self.usage.add(decision.usage)
        self.harness_seconds.append(harness)

    def _append(self, decision: Decision, observation: Observation, state: dict[str, Any], score_kind: Any) -> None:
        progress.step_append(
            run=self.run,
            while_running=True,
            thought=decision.thought,
            action=decision.action,
            observation=observation.text,
            raw_response=decision.raw,
            state=state,
            execution_time=observation.duration,
            tokens_sent=decision.usage.tokens_sent,
            tokens_received=decision.usage.tokens_received,
            cost=decision.usage.cost,
            score_kind=score_kind,
            score=observation.score,
        )

    def _compare(self, text: str) -> dict[str, Any]:
        position = self.run.step_count  # index of the original step this one replays (0-based)
        if position >= len(self.original):
            return {"original_index": None, "same": False, "diff": "(no original step at this position)"}
        original = self.original[position]
        same = original.observation.strip() == text.strip()
        diff = ""
        if not same:
            self.differences.append(position + 1)
            lines = difflib.unified_diff(
                original.observation.splitlines(), text.splitlines(), "original", "replay", lineterm="", n=1
            )
            diff = "\n".join(list(lines)[:200])
        return {"original_index": original.index, "same": same, "diff": diff}


class PreflightError(Exception):
    """The run's model endpoint failed its check: the message names the URL and the provider's words."""


def run_preflight(*, run: Run) -> tuple[Any, str]:
    """(endpoint, model name) of an LLM run, after one cheap call proved it answers; else PreflightError.

    Runs before the sandbox opens, so a wrong key or a dead server fails the run in seconds instead
    of after a sandbox start. The check is recorded in run.params["preflight"] (its few tokens are
    counted there, not in the agent's cost).
    """
    from benchmark.llm import ConfigurationError
    from benchmark.llm.check import endpoint_check
    from benchmark.llm.endpoints import connection_for

    try:
        connection, name = connection_for(endpoint=run.agent.endpoint, model=run.agent.model, user=run.owner)
    except ConfigurationError as exc:
        _params_update(run, preflight={"ok": False, "message": str(exc)})
        raise PreflightError(f"the model endpoint cannot be used: {exc}") from None
    result = endpoint_check(connection, name)
    _params_update(run, preflight=result.as_dict())
    if not result.ok:
        raise PreflightError(result.message)
    return connection, name


def _params_update(run: Run, **values: Any) -> None:
    run.params = {**run.params, **values}
    Run.objects.filter(pk=run.pk).update(params=run.params)


def _model_settings(agent: AgentConfig, run: Run, connection: Any) -> ModelSettings:
    prices = None
    if agent.price_input_per_mtok or agent.price_output_per_mtok:
        from benchmark.llm import Prices

        prices = Prices(input_per_mtok=agent.price_input_per_mtok, output_per_mtok=agent.price_output_per_mtok)
    return ModelSettings(
        model=agent.model,
        temperature=agent.temperature,
        top_p=agent.top_p,
        max_tokens=int(agent.extra.get("max_tokens", DEFAULT_MAX_TOKENS)),
        cost_limit=float(run.params.get("cost_limit", agent.cost_limit)),
        history_window=agent.history_window,
        endpoint=connection,
        prices=prices,
    )


def _literature() -> Any:
    """The literature provider when one is configured, else None (the agent is told so)."""
    from django.conf import settings

    if not getattr(settings, "LITERATURE_PROVIDER", ""):
        return None
    try:
        from benchmark.research.literature import agent_tool  # provided by the research pipeline
    except ImportError:
        return None
    return agent_tool


def _policy(
    run: Run, env: Environment, max_steps: int, command_timeout: int, recorder: RunRecorder, connection: Any = None
) -> Any:
    agent = run.agent
    if agent.kind == AgentConfig.Kind.BASELINE:
        # Here, not at the top: the baselines module is for baseline runs only (a Slurm job's
        # process starts cold, and every import before the first step is on the user's clock).
        from benchmark.tasks.baselines import baseline_command

        return baseline_policy(baseline_command=baseline_command(run.task))
    if agent.kind == AgentConfig.Kind.REPLAY:
        if run.replay_of is None:
            raise ValueError("a replay run needs the run it replays (replay_of)")
        recorder.original = list(run.replay_of.steps.order_by("index"))
        return replay_policy(steps=recorder.original)
    system = system_message(available=env.available_tools, max_steps=max_steps, command_timeout=command_timeout)
    task_message = TASK_TEMPLATE.format(
        description=run.task.description,
        max_steps=max_steps,
        open_file="n/a",
        working_dir=env.state.working_dir,
    )
    run.params = {**run.params, "prompt": {"system": system, "task": task_message}}
    Run.objects.filter(pk=run.pk).update(params=run.params)
    if connection is None:  # the preflight runs first in run_execute; this is for direct callers
        connection, _ = run_preflight(run=run)
    return LLMPolicy(settings=_model_settings(agent, run, connection), system=system, task_message=task_message)


def endpoint_of(agent: AgentConfig) -> str:
    """The endpoint and URL a model agent's calls go to, for error messages (never a key)."""
    from benchmark.llm.base import public_url

    endpoint = agent.endpoint
    if endpoint is None:
        return f"{agent.model} (no model endpoint)"
    return f"{endpoint.name} at {endpoint.base_url or public_url(endpoint.provider)}"


def worker_claim_name() -> str:
    """Who drives a run: the RQ worker's name inside a job, else host id:pid (the reaper's evidence)."""
    try:
        from rq import get_current_job

        job = get_current_job()
        if job is not None and getattr(job, "worker_name", None):
            return str(job.worker_name)
    except Exception:  # outside a worker
        pass
    return f"{host_id()}:{os.getpid()}"


INTERRUPTED = "interrupted"  # exit status of a run stopped by a fault, not by its agent
CANCEL_POLL_SECONDS = 1.0  # how often a running command checks for a cancel: it stops within about this


class CancelWatch:
    """While a worker drives a run, a thread reads the run's status every CANCEL_POLL_SECONDS and,
    once it is no longer `running` (a cancel), interrupts the sandbox command in flight: a long
    command (training, `sleep 300`) stops within seconds instead of running to its timeout. The
    loop itself checks before each model call and before each command; this covers the command."""

    def __init__(self, *, run_id: int, session: Any, every: float = CANCEL_POLL_SECONDS) -> None:
        self.run_id = run_id
        self.session = session
        self.every = every
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._loop, name=f"cancel-watch-{run_id}", daemon=True)

    def __enter__(self) -> CancelWatch:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self.thread.join(timeout=10)

    def _loop(self) -> None:
        from django.db import connection

        try:
            while not self.stopping.wait(self.every):
                try:
                    status = Run.objects.filter(pk=self.run_id).values_list("status", flat=True).first()
                except Exception as exc:  # the database blinked: the loop's own checks still hold
                    log.warning("cancel watch of run %s could not read its status: %s", self.run_id, exc)
                    connection.close()
                    continue
                if status != Run.Status.RUNNING and self.session.interrupt():
                    log.info("run %s cancelled: its command in flight was interrupted", self.run_id)
        finally:
            connection.close()  # this thread's own connection


def run_execute(*, run_id: int) -> Run | None:
    """Claim a queued run and drive it to its end; every step is committed as it happens.

    A heartbeat key lives as long as this process drives the run (benchmark.runs.heartbeat); it
    stops only after the final status is committed, so the reaper never mistakes a finishing run
    for a dead one."""
    now = timezone.now()
    claimed = Run.objects.filter(pk=run_id, status=Run.Status.QUEUED).update(
        status=Run.Status.RUNNING,
        started_at=Coalesce("started_at", Value(now)),  # a resumed run's wall time counts both parts
        worker_name=worker_claim_name(),
        heartbeat_at=now,
    )
    if not claimed:
        return None  # cancelled before it started, or claimed by another worker
    run = Run.objects.select_related("task", "agent", "replay_of").get(pk=run_id)
    with heartbeat.beating(run.code):
        return _run_drive(run)


def _run_drive(run: Run) -> Run:
    recorder = RunRecorder(run=run)
    outcome = Outcome(ExitStatus.EXIT_ERROR)
    error = ""
    policy = None
    session = None
    leases = ExitStack()
    started = time.perf_counter()
    try:
        from benchmark.tasks import evaluation
        from benchmark.tasks.resources import task_gpus
        from sandbox import open_session

        progress.run_status_send(run, patient=True)
        max_steps = int(run.params.get("max_steps", run.agent.max_steps))
        command_timeout = command_timeout_of(run)
        connection = None
        if run.agent.kind == AgentConfig.Kind.MODEL:
            connection, _ = run_preflight(run=run)  # fail fast, before any sandbox starts
        evaluation.task_image_ensure(run.task)  # its image variant, built on its first run (sandbox.variants)
        devices = leases.enter_context(gpus.gpus_leased(task_gpus(run.task)))  # [] for a CPU task
        session = open_session(
            evaluation.agent_sandbox_spec(task=run.task, run_code=str(run.code), gpus=[gpu.id for gpu in devices])
        )
        provenance.environment_record(
            run=run, environment=provenance.run_environment(task=run.task, session=session, gpus=devices)
        )
        evaluation.workspace_prepare(task=run.task, session=session)

        def evaluate(split: str) -> Any:
            # A validated attempt is kept, to be scored on the test split after the run (runs.attempts).
            kept = attempts.attempt_take(task=run.task, session=session) if split == "dev" else None
            result = evaluation.submission_evaluate(task=run.task, session=session, split=split)
            if kept is not None and result.ok:
                attempts.attempt_keep(run=run, step_index=run.step_count + 1, artifacts=kept)
            return result

        env = Environment(
            session=session,
            evaluate=evaluate,
            command_timeout=command_timeout,
            literature=_literature(),
            baseline_scores=run.task.baseline_scores,
        )
        policy = _policy(run, env, max_steps, command_timeout, recorder, connection)
        first, observation = _resume_point(run, env, policy, recorder, max_steps)
        with CancelWatch(run_id=run.pk, session=session):
            outcome = run_loop(
                env=env, policy=policy, recorder=recorder, max_steps=max_steps, first=first, observation=observation
            )
    except gpus.GpuUnavailable as exc:
        outcome = Outcome(ExitStatus.EXIT_ERROR, str(exc), failed=True)
    except PreflightError as exc:
        # The endpoint never answered its check: the same outcome as a model that never answered
        # in the loop (failed, exit_api, unscored), found before a sandbox was started.
        outcome = Outcome(ExitStatus.EXIT_API, str(exc), failed=True)
    except progress.LiveChannelDown as exc:
        # Every step so far is committed; the run can be resumed once Redis is back.
        log.warning("run %s interrupted: %s", run.code, exc)
        outcome = Outcome(INTERRUPTED, f"{exc}. Every step up to {run.step_count} is kept; Resume continues it.")
    except Exception as exc:  # the run fails visibly; the worker lives on
        log.exception("run %s failed", run.code)
        error = f"{type(exc).__name__}: {exc}"
    finally:
        if session is not None:
            try:
                session.close()
            except Exception:
                log.exception("closing the sandbox of run %s", run.code)
        leases.close()  # the GPUs go back once the sandbox that held them is gone
        provenance.gpu_hours_record(run=run, wall_seconds=time.perf_counter() - started)
    return _run_finish(
        run=run, outcome=outcome, error=error, policy=policy, recorder=recorder, wall=time.perf_counter() - started
    )


def _resume_point(
    run: Run, env: Environment, policy: Any, recorder: RunRecorder, max_steps: int
) -> tuple[int, str | None]:
    """(first step number, the observation the agent sees first): 1 and None for a fresh run; for a
    resumed one, the committed steps are replayed into `env` and the policy's history rebuilt."""
    steps = committed_steps(run) if run.step_count else []
    if not steps:
        return 1, None
    usage = prior_usage(run, steps)
    recorder.usage = Usage()
    recorder.usage.add(usage)
    policy_restore(policy, steps, max_steps=max_steps, usage=usage)
    differing = workspace_replay(env, steps)
    if run.fork_of_id and not run.params.get("resumes"):  # a fork's first start: its parent's steps
        _params_update(run, fork={"replayed": len(steps), "replay_differs": differing})
    else:
        resumes = list(run.params.get("resumes") or [{"after_step": len(steps)}])
        resumes[-1] = {**resumes[-1], "replayed": len(steps), "replay_differs": differing}
        _params_update(run, resumes=resumes)
    if isinstance(policy, LLMPolicy) and policy.pending_reply is None:
        return steps[-1].index + 1, None  # no step came from the model: it starts from the task message
    return steps[-1].index + 1, steps[-1].observation


def _run_finish(*, run: Run, outcome: Outcome, error: str, policy: Any, recorder: RunRecorder, wall: float) -> Run:
    usage = policy.usage if policy is not None and policy.usage.api_calls else recorder.usage
    params = dict(run.params)
    if recorder.original:
        params["replay"] = {
            "compared": min(run.step_count, len(recorder.original)),
            "differing_steps": recorder.differences,
        }
    if recorder.harness_seconds:
        ordered = sorted(recorder.harness_seconds)
        params["harness_ms_p50"] = round(1000 * ordered[len(ordered) // 2], 3)
    if error:
        status, exit_status = Run.Status.FAILED, ExitStatus.EXIT_ERROR
    elif outcome.exit_status == INTERRUPTED:
        status, exit_status, error = Run.Status.INTERRUPTED, INTERRUPTED, outcome.detail
    elif outcome.failed:
        # No model call ever succeeded: nothing the agent did can be scored (no autosubmission
        # ran), and the run is kept off leaderboards. Say which endpoint and what it answered.
        status, exit_status = Run.Status.FAILED, outcome.exit_status
        error = f"the model never answered: {endpoint_of(run.agent)} failed with: {outcome.detail}"
    elif outcome.exit_status == ExitStatus.EXIT_CANCELLED:
        status, exit_status = Run.Status.CANCELLED, outcome.exit_status
    else:
        status, exit_status = Run.Status.FINISHED, outcome.exit_status
    if outcome.detail and not error:
        params["exit_detail"] = outcome.detail
    if outcome.exit_status == ExitStatus.EXIT_CANCELLED and params.get("attempts_kept"):
        # A validate whose step the cancel kept out of the trajectory: its attempt is not ranked.
        params["attempts_kept"] = [a for a in params["attempts_kept"] if a["step"] <= run.step_count]
    if outcome.unrecorded is not None and (outcome.unrecorded.api_calls or outcome.unrecorded.cost):
        # Paid for, in the run's totals, in no step: the run page says so beside the cost.
        params["cancel_unrecorded"] = {
            "api_calls": outcome.unrecorded.api_calls,
            "tokens_sent": outcome.unrecorded.tokens_sent,
            "tokens_received": outcome.unrecorded.tokens_received,
            "cost": outcome.unrecorded.cost,
        }

    def finish() -> None:
        # Only a run still driven by this worker is finished here (running, or cancelling: the
        # cancel asked it to stop, and its last step and costs are recorded now); the reaper, or a
        # cancel of a queued run, keeps its say.
        Run.objects.filter(pk=run.pk, status__in=(Run.Status.RUNNING, Run.Status.CANCELLING)).update(
            status=status,
            exit_status=exit_status,
            error=error,
            finished_at=timezone.now(),
            tokens_sent=usage.tokens_sent,
            tokens_received=usage.tokens_received,
            cost=usage.cost,
            api_calls=usage.api_calls,
            params=params,
        )
        Run.objects.filter(pk=run.pk).update(params=params)
        run.refresh_from_db()

    reconnecting(finish, what=f"the end of run {run.code}")  # the same on a second try
    attempts.attempts_enqueue(run)  # its validated attempts, scored on the test split (runs.attempts)
    progress.run_status_send(run)  # one try: the status is committed, a reconnecting viewer reads it
    log.info("run %s ended: %s %s after %.1fs", run.code, run.status, run.exit_status, wall)
    return run
