"""Referee's own agent running a research experiment in a sandbox (the experiment stage's default agent).

The agent is the MLGym-style loop of benchmark.agent (LLMPolicy, Environment, run_loop); every
step is an ordinary `Step` of an ordinary `Run`, so the full trace is kept and streams live on
the run page like any agent run. The workspace holds task.md, idea.md, related_work.md and
proposal.md; afterwards results.md, logs, data files and figures are read back from it. There
is no evaluator: `submit` ends the experiment and nothing is scored.

The agent and sandbox modules are imported when the stage runs; if they are missing, the stage
fails and says so (see research_experiment.ExperimentUnavailable).
"""

from __future__ import annotations

import logging
import shlex
from dataclasses import dataclass, field
from typing import Any

from django.utils import timezone

from benchmark.models import AgentConfig, Run
from benchmark.research.experiment import (
    ExperimentInterrupted,
    ExperimentOutcome,
    ExperimentRequest,
    ExperimentUnavailable,
)
from benchmark.research.files import IMAGE_SUFFIXES, TEXT_SUFFIXES

log = logging.getLogger(__name__)

WORKDIR = "/workspace"
MAX_COLLECT_BYTES = 5 * 1024 * 1024
MAX_COLLECT_FILES = 60
NO_EVALUATOR = (
    "no evaluator: a research experiment is not scored here. `submit` ends the experiment; "
    "your results.md, logs and figures are collected as they are."
)
TASK_MESSAGE = """We're running the experiments of a research project.

{instructions}
When results.md is written and the figures are saved, run `submit` to end the experiment.

(Current Step: 0, Remaining Steps: {max_steps})
(Open file: n/a)
(Current directory: {workdir})
bash-$"""


@dataclass
class _NoScore:
    error: str = NO_EVALUATOR
    metrics: dict[str, Any] = field(default_factory=dict)
    primary: float | None = None
    output: str = ""


class _Recorder:
    """Persists each step of the experiment run (and publishes it); scores are never recorded."""

    def __init__(self, run: Run, step_append: Any) -> None:
        self.run = run
        self.step_append = step_append

    def cancelled(self) -> bool:
        return Run.objects.filter(pk=self.run.pk).values_list("status", flat=True).first() != Run.Status.RUNNING

    def step(self, *, decision: Any, observation: Any, state: dict[str, Any], harness: float) -> None:
        self.step_append(
            run=self.run,
            thought=decision.thought,
            action=decision.action,
            observation=observation.text,
            raw_response=decision.raw,
            state=dict(state),
            execution_time=observation.duration,
            tokens_sent=decision.usage.tokens_sent,
            tokens_received=decision.usage.tokens_received,
            cost=decision.usage.cost,
        )


def _modules() -> dict[str, Any]:
    try:
        from benchmark.agent.environment import Environment
        from benchmark.agent.loop import run_loop
        from benchmark.agent.policies import LLMPolicy, ModelSettings
        from benchmark.agent.prompt import system_message
        from benchmark.runs import heartbeat, progress
        from benchmark.runs.services import run_preflight, worker_claim_name
        from sandbox import SandboxSpec, open_session
    except ImportError as exc:
        raise ExperimentUnavailable(
            f"Referee's agent or sandbox is not installed on this deployment ({exc}), "
            "so no experiment was run and no results exist for this stage."
        ) from exc
    return {
        "step_append": progress.step_append,
        "beating": heartbeat.beating,
        "worker_claim_name": worker_claim_name,
        "LiveChannelDown": progress.LiveChannelDown,
        "Environment": Environment,
        "run_loop": run_loop,
        "LLMPolicy": LLMPolicy,
        "ModelSettings": ModelSettings,
        "system_message": system_message,
        "SandboxSpec": SandboxSpec,
        "open_session": open_session,
        "run_preflight": run_preflight,
    }


def _agent_config(request: ExperimentRequest) -> AgentConfig:
    settings = request.research_run.settings
    config, _ = AgentConfig.objects.get_or_create(
        name=f"MLR-Agent experiment ({request.research_run.backbone})",
        model=request.research_run.backbone,
        endpoint=request.research_run.endpoint,
        kind=AgentConfig.Kind.MODEL,
        defaults={"temperature": float(settings.get("temperature", 0.0)), "created_by": request.research_run.owner},
    )
    return config


def _collect(session: Any) -> tuple[str, dict[str, bytes], list[str]]:
    """results.md, then the figures, logs and data files the agent left (size- and count-capped)."""
    problems: list[str] = []
    suffixes = sorted(IMAGE_SUFFIXES | TEXT_SUFFIXES)
    pattern = " -o ".join(f"-iname {shlex.quote('*' + s)}" for s in suffixes)
    listing = session.run(
        f"cd {WORKDIR} && find . -maxdepth 4 -type f \\( {pattern} \\) -size -{MAX_COLLECT_BYTES // 1024}k | sort",
        timeout=60,
    )
    files: dict[str, bytes] = {}
    inputs = {"./task.md", "./idea.md", "./related_work.md", "./proposal.md"}
    for line in listing.output.splitlines():
        path = line.strip()
        if not path.startswith("./") or path in inputs:
            continue
        if len(files) >= MAX_COLLECT_FILES:
            problems.append(f"more than {MAX_COLLECT_FILES} result files; the rest were not collected")
            break
        try:
            files[path[2:]] = session.get_file(f"{WORKDIR}/{path[2:]}", max_bytes=MAX_COLLECT_BYTES)
        except Exception as exc:  # one unreadable file does not lose the others
            problems.append(f"{path[2:]}: not collected ({exc})")
    results = files.pop("results.md", b"").decode("utf-8", errors="replace")
    return results, files, problems


@dataclass
class _Attempt:
    """What one drive of the agent left: its sandbox and policy (closed and billed afterwards),
    how the loop ended, what was collected, and the failure or interruption if any."""

    session: Any = None
    policy: Any = None
    exit_status: str = "exit_error"
    results: str = ""
    files: dict[str, bytes] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    error: str = ""
    interrupted: str = ""


def _start_run(request: ExperimentRequest, parts: dict[str, Any], agent: AgentConfig, max_steps: int) -> Run:
    """The agent run the stage's steps are recorded on, already RUNNING and claimed like a queued
    run (benchmark.runs.services.run_execute): the run reaper otherwise takes a step that runs
    longer than RUN_HEARTBEAT_TTL for a dead worker."""
    research_run = request.research_run
    return Run.objects.create(
        task=research_run.task,
        agent=agent,
        owner=research_run.owner,
        method=agent.name,
        status=Run.Status.RUNNING,
        started_at=timezone.now(),
        worker_name=parts["worker_claim_name"](),
        heartbeat_at=timezone.now(),
        params={"research_run": str(research_run.code), "stage": "experiment", "max_steps": max_steps},
    )


def _open_sandbox(request: ExperimentRequest, parts: dict[str, Any], run: Run) -> Any:
    """A sandbox without network, labelled with the run, holding the stage's input files."""
    spec = parts["SandboxSpec"](
        network=False,
        labels={
            "referee.run": str(run.code),
            "referee.task": request.research_run.task.slug,
            "referee.role": "research",
        },
        workdir=WORKDIR,
    )
    session = parts["open_session"](spec)
    for name, text in request.inputs.items():
        session.put_file(f"{WORKDIR}/{name}", text.encode("utf-8"))
    return session


def _drive(
    request: ExperimentRequest,
    parts: dict[str, Any],
    run: Run,
    agent: AgentConfig,
    attempt: _Attempt,
    max_steps: int,
    command_timeout: int,
) -> None:
    """Preflight, sandbox, prompt, policy and the agent loop, then the results collected; fills
    `attempt` as it goes so that the caller can close the sandbox and bill the policy whatever fails."""
    limits = request.limits or {}
    connection, _ = parts["run_preflight"](run=run)  # fail fast, with the provider's words, before the sandbox
    attempt.session = _open_sandbox(request, parts, run)
    env = parts["Environment"](
        session=attempt.session, evaluate=lambda split: _NoScore(), command_timeout=command_timeout, literature=None
    )
    system = parts["system_message"](
        available=env.available_tools, max_steps=max_steps, command_timeout=command_timeout
    )
    task_message = TASK_MESSAGE.format(instructions=request.instructions, max_steps=max_steps, workdir=WORKDIR)
    run.params = {**run.params, "prompt": {"system": system, "task": task_message}}
    run.save(update_fields=["params"])
    attempt.policy = parts["LLMPolicy"](
        settings=parts["ModelSettings"](
            model=request.research_run.backbone,
            temperature=agent.temperature,
            top_p=agent.top_p,
            max_tokens=4096,
            cost_limit=float(limits.get("cost_limit", agent.cost_limit)),
            history_window=agent.history_window,
            endpoint=connection,
        ),
        system=system,
        task_message=task_message,
    )
    outcome = parts["run_loop"](
        env=env, policy=attempt.policy, recorder=_Recorder(run, parts["step_append"]), max_steps=max_steps
    )
    # With no evaluator every submit "fails" to score; what matters is how the loop ended.
    attempt.exit_status = "submitted" if "(submit)" in outcome.exit_status else outcome.exit_status
    attempt.results, attempt.files, attempt.problems = _collect(attempt.session)


def _close_sandbox(request: ExperimentRequest, attempt: _Attempt) -> None:
    """Closes the sandbox if one was opened; a failure to close is logged, never raised over the result."""
    if attempt.session is not None:
        try:
            attempt.session.close()
        except Exception:
            log.exception("closing the experiment sandbox of %s", request.research_run.code)


def _finish_run(run: Run, attempt: _Attempt) -> None:
    """The run's final status, error and costs in one UPDATE, committed while the heartbeat still
    beats so that the reaper never sees a live run without a beat."""
    usage = attempt.policy.usage if attempt.policy is not None else None
    Run.objects.filter(pk=run.pk).update(
        status=(
            Run.Status.INTERRUPTED
            if attempt.interrupted
            else Run.Status.FAILED
            if attempt.error
            else Run.Status.FINISHED
        ),
        exit_status="interrupted" if attempt.interrupted else attempt.exit_status,
        error=attempt.interrupted or attempt.error,
        finished_at=timezone.now(),
        tokens_sent=usage.tokens_sent if usage else 0,
        tokens_received=usage.tokens_received if usage else 0,
        cost=usage.cost if usage else 0.0,
        api_calls=usage.api_calls if usage else 0,
    )


def _outcome(run: Run, attempt: _Attempt) -> ExperimentOutcome:
    """The stage's outcome from the finished run; an agent that wrote no results.md is an error."""
    error = attempt.error
    if not error and not attempt.results.strip():
        error = f"the agent ended ({attempt.exit_status}) without writing results.md"
    return ExperimentOutcome(
        results_md=attempt.results,
        files=attempt.files,
        trace={
            "agent": "Referee agent",
            "run": str(run.code),
            "steps": run.step_count,
            "exit_status": attempt.exit_status,
            "collection_problems": attempt.problems,
        },
        run=run,
        tokens_sent=run.tokens_sent,
        tokens_received=run.tokens_received,
        cost=run.cost,
        error=error,
    )


def research_experiment_run(request: ExperimentRequest) -> ExperimentOutcome:
    parts = _modules()
    research_run = request.research_run
    limits = request.limits or {}
    max_steps = int(limits.get("max_steps", 40))
    command_timeout = int(limits.get("command_timeout", 1800))
    agent = _agent_config(request)
    run = _start_run(request, parts, agent, max_steps)
    attempt = _Attempt()
    with parts["beating"](run.code):  # stops once the final status below is committed
        try:
            _drive(request, parts, run, agent, attempt, max_steps, command_timeout)
        except ExperimentUnavailable:
            raise
        except parts["LiveChannelDown"] as exc:  # the runs' own outage limit (benchmark.runs.progress)
            log.warning("experiment of research run %s interrupted: %s", research_run.code, exc)
            attempt.interrupted = (
                f"{exc}. The agent run's {run.step_count} committed step(s) are kept; Resume runs the stage again."
            )
        except Exception as exc:  # the sandbox or the agent failed: recorded on the run and the stage
            log.exception("experiment of research run %s failed", research_run.code)
            attempt.error = f"{type(exc).__name__}: {exc}"
        finally:
            _close_sandbox(request, attempt)
        _finish_run(run, attempt)
    run.refresh_from_db()
    if attempt.interrupted:
        raise ExperimentInterrupted(attempt.interrupted, run=run)
    return _outcome(run, attempt)
