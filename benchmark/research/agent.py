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


def research_experiment_run(request: ExperimentRequest) -> ExperimentOutcome:
    parts = _modules()
    research_run = request.research_run
    limits = request.limits or {}
    max_steps = int(limits.get("max_steps", 40))
    command_timeout = int(limits.get("command_timeout", 1800))
    agent = _agent_config(request)
    run = Run.objects.create(
        task=research_run.task,
        agent=agent,
        owner=research_run.owner,
        method=agent.name,
        status=Run.Status.RUNNING,
        started_at=timezone.now(),
        # Claimed like a queued run (benchmark.runs.services.run_execute), and beating below: the
        # run reaper otherwise takes a step that runs longer than RUN_HEARTBEAT_TTL for a dead worker.
        worker_name=parts["worker_claim_name"](),
        heartbeat_at=timezone.now(),
        params={"research_run": str(research_run.code), "stage": "experiment", "max_steps": max_steps},
    )
    with parts["beating"](run.code):  # stops once the final status below is committed
        spec = parts["SandboxSpec"](
            network=False,
            labels={"referee.run": str(run.code), "referee.task": research_run.task.slug, "referee.role": "research"},
            workdir=WORKDIR,
        )
        session = None
        policy = None
        error = ""
        interrupted = ""
        exit_status = "exit_error"
        results, files, problems = "", {}, []
        try:
            connection, _ = parts["run_preflight"](run=run)  # fail fast, with the provider's words, before the sandbox
            session = parts["open_session"](spec)
            for name, text in request.inputs.items():
                session.put_file(f"{WORKDIR}/{name}", text.encode("utf-8"))
            env = parts["Environment"](
                session=session, evaluate=lambda split: _NoScore(), command_timeout=command_timeout, literature=None
            )
            system = parts["system_message"](
                available=env.available_tools, max_steps=max_steps, command_timeout=command_timeout
            )
            task_message = TASK_MESSAGE.format(instructions=request.instructions, max_steps=max_steps, workdir=WORKDIR)
            run.params = {**run.params, "prompt": {"system": system, "task": task_message}}
            run.save(update_fields=["params"])
            policy = parts["LLMPolicy"](
                settings=parts["ModelSettings"](
                    model=research_run.backbone,
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
                env=env, policy=policy, recorder=_Recorder(run, parts["step_append"]), max_steps=max_steps
            )
            # With no evaluator every submit "fails" to score; what matters is how the loop ended.
            exit_status = "submitted" if "(submit)" in outcome.exit_status else outcome.exit_status
            results, files, problems = _collect(session)
        except ExperimentUnavailable:
            raise
        except parts["LiveChannelDown"] as exc:  # the runs' own outage limit (benchmark.runs.progress)
            log.warning("experiment of research run %s interrupted: %s", research_run.code, exc)
            interrupted = (
                f"{exc}. The agent run's {run.step_count} committed step(s) are kept; Resume runs the stage again."
            )
        except Exception as exc:  # the sandbox or the agent failed: recorded on the run and the stage
            log.exception("experiment of research run %s failed", research_run.code)
            error = f"{type(exc).__name__}: {exc}"
        finally:
            if session is not None:
                try:
                    session.close()
                except Exception:
                    log.exception("closing the experiment sandbox of %s", research_run.code)
        usage = policy.usage if policy is not None else None
        Run.objects.filter(pk=run.pk).update(
            status=Run.Status.INTERRUPTED if interrupted else Run.Status.FAILED if error else Run.Status.FINISHED,
            exit_status="interrupted" if interrupted else exit_status,
            error=interrupted or error,
            finished_at=timezone.now(),
            tokens_sent=usage.tokens_sent if usage else 0,
            tokens_received=usage.tokens_received if usage else 0,
            cost=usage.cost if usage else 0.0,
            api_calls=usage.api_calls if usage else 0,
        )
    run.refresh_from_db()
    if interrupted:
        raise ExperimentInterrupted(interrupted, run=run)
    if not error and not results.strip():
        error = f"the agent ended ({exit_status}) without writing results.md"
    return ExperimentOutcome(
        results_md=results,
        files=files,
        trace={
            "agent": "Referee agent",
            "run": str(run.code),
            "steps": run.step_count,
            "exit_status": exit_status,
            "collection_problems": problems,
        },
        run=run,
        tokens_sent=run.tokens_sent,
        tokens_received=run.tokens_received,
        cost=run.cost,
        error=error,
    )
