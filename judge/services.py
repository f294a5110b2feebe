"""Requesting and executing LLM judgments of research artifacts."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from functools import partial
from typing import Any

import django_rq
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from benchmark.llm import ConfigurationError, LLMError, complete, parse_model
from benchmark.llm.base import Completion, bare_model
from benchmark.llm.endpoints import connection_for, endpoint_default
from benchmark.models import Artifact, ModelEndpoint, Run
from judge.models import Judgment, Rubric
from judge.parsing import ParsedReply, ReplyError, ReplyTruncated, reply_parse
from judge.prompts import RenderedPrompt, prompt_render, trajectory_render
from judge.rubrics import STAGES_FOR_ARTIFACT

log = logging.getLogger(__name__)

JUDGE_QUEUE = "judge"
MAX_JUDGES = 6
RETRY_MESSAGE = (
    "Your reply could not be accepted: {error}\n\n"
    "Reply again with the corrected JSON object only, with every rubric key present and each score an "
    "integer inside its range."
)


def max_attempts() -> int:
    return int(getattr(settings, "JUDGE_MAX_ATTEMPTS", 3))


def judge_max_tokens() -> int:
    return int(getattr(settings, "JUDGE_MAX_TOKENS", 4096))


JudgeSpec = str | tuple[ModelEndpoint, str]


def judges_resolve(judge_models: Sequence[JudgeSpec]) -> list[tuple[ModelEndpoint, str]]:
    """(endpoint, provider:model) per judge. A bare provider:model string (scripts, tests, records from
    before endpoints) names the admin's default endpoint of its provider, pinned on the judgment now."""
    judges = []
    for spec in judge_models:
        if isinstance(spec, tuple):
            endpoint, name = spec
            judges.append((endpoint, f"{endpoint.provider}:{bare_model(name)}"))
            continue
        model = spec.strip()
        if not model:
            continue
        try:
            provider, _ = parse_model(model)
        except ConfigurationError as exc:
            raise ValidationError(str(exc)) from exc
        endpoint = endpoint_default(provider)
        if endpoint is None or not endpoint.offers_model(model.partition(":")[2]):
            raise ValidationError(f"no model endpoint serves {model}: an admin registers one on the Endpoints page")
        judges.append((endpoint, model))
    return list({(e.pk, m): (e, m) for e, m in judges}.values())  # the same judge twice is one judgment


def judge_max_tokens_cap() -> int:
    """The largest budget a cut reply is retried with (never below the first budget)."""
    return max(int(getattr(settings, "JUDGE_MAX_TOKENS_CAP", 16384)), judge_max_tokens())


def judgment_request(
    *,
    artifact: Artifact | None = None,
    rubric: Rubric,
    judge_models: Sequence[JudgeSpec],
    with_supplementary: bool,
    requested_by: Any = None,
    run: Run | None = None,
) -> list[Judgment]:
    """Queue one judgment per judge (endpoint and model) of an artifact, or of an agent run's
    trajectory (`run`, under a trajectory rubric); each runs as `judge.jobs.run_judgment` after the commit."""
    if (artifact is None) == (run is None):
        raise ValidationError("judge either an artifact or a run")
    if run is not None:
        if rubric.stage != Rubric.Stage.TRAJECTORY:
            raise ValidationError(f"a run's trajectory is judged under a trajectory rubric, not {rubric}")
        if run.status != Run.Status.FINISHED:
            raise ValidationError(f"run {run.code} is {run.status}: only a finished run's trajectory is judged")
    else:
        allowed = STAGES_FOR_ARTIFACT.get(artifact.stage, ())
        if rubric.stage not in allowed:
            raise ValidationError(
                f"a {rubric.get_stage_display()} rubric does not apply to a {artifact.get_stage_display()} artifact"
                + (f" (use: {', '.join(allowed)})" if allowed else "")
            )
    judges = judges_resolve(judge_models)
    if not judges:
        raise ValidationError("choose at least one judge model")
    if len(judges) > MAX_JUDGES:
        raise ValidationError(f"at most {MAX_JUDGES} judge models per request")
    judgments = []
    with transaction.atomic():
        for endpoint, model in judges:
            judgment = Judgment.objects.create(
                artifact=artifact,
                run=run,
                rubric=rubric,
                judge_model=model,
                endpoint=endpoint,
                temperature=0.0,
                with_supplementary=with_supplementary,
                requested_by=requested_by,
            )
            transaction.on_commit(partial(_enqueue, judgment.pk))
            judgments.append(judgment)
    return judgments


NOT_QUEUED = "Not started: the job queue (Redis) did not take its job ({error}). Request it again."


def _enqueue(judgment_id: int) -> None:
    """After the commit. A queue that does not take the job fails the judgment with the reason
    (it would stay "queued" forever, and the request that made it would answer 500)."""
    try:
        django_rq.get_queue(JUDGE_QUEUE).enqueue("judge.jobs.run_judgment", judgment_id)
    except Exception as exc:
        log.warning("judgment %s not queued: %s", judgment_id, exc)
        Judgment.objects.filter(pk=judgment_id, status=Judgment.Status.QUEUED).update(
            status=Judgment.Status.FAILED, error=NOT_QUEUED.format(error=type(exc).__name__), finished_at=timezone.now()
        )


def _fail(judgment: Judgment, error: str, status: str = Judgment.Status.FAILED) -> Judgment:
    judgment.status = status
    judgment.error = error
    judgment.scores = {}
    judgment.findings = []
    judgment.repairs = []
    judgment.finished_at = timezone.now()
    judgment.save()
    return judgment


def judgment_execute(*, judgment: Judgment) -> Judgment:
    """Ask the judge model, validate, re-ask with the validation error, and store scores or the failure.

    A judgment that never validates is stored as failed with its last reply and the error: no score
    is ever invented or carried over from a partial reply.
    """
    claimed = Judgment.objects.filter(pk=judgment.pk, status=Judgment.Status.QUEUED).update(
        status=Judgment.Status.RUNNING
    )
    judgment.refresh_from_db()
    if not claimed:  # another worker has it, or it already finished: running it twice would double the cost
        return judgment
    try:
        return _judge(judgment)
    except Exception as exc:  # an unexpected bug must end as a visible failure, not a row stuck in "running"
        return _fail(judgment, f"internal error: {type(exc).__name__}: {exc}")


def _judge(judgment: Judgment) -> Judgment:
    rubric = judgment.rubric
    config = judgment.experiment.config if judgment.experiment_id else None  # a judge experiment's settings
    try:
        prompt = _prompt(judgment, note=config.prompt_note if config else "")
    except (OSError, ValueError) as exc:  # an unreadable artifact file, a malformed stored trace
        return _fail(judgment, f"could not render the prompt: {type(exc).__name__}: {exc}")
    judgment.prompt_hash = prompt.hash
    try:
        connection, name = connection_for(
            endpoint=judgment.endpoint, model=judgment.judge_model, user=judgment.requested_by
        )
    except ConfigurationError as exc:
        return _fail(judgment, f"the judge's endpoint cannot be used: {exc}")
    messages: list[dict[str, Any]] = [{"role": "user", "content": prompt.user}]
    attempts_log: list[dict[str, Any]] = []
    error = ""
    budget = (config.max_tokens if config and config.max_tokens else None) or judge_max_tokens()
    cap = max(judge_max_tokens_cap(), budget)
    truncated, tried = False, budget
    for attempt in range(1, max_attempts() + 1):
        judgment.attempts = attempt
        try:
            completion = complete(
                endpoint=connection,
                model=name,
                system=prompt.system,
                messages=messages,
                temperature=judgment.temperature,
                max_tokens=budget,
            )
        except LLMError as exc:
            attempts_log.append({"attempt": attempt, "reply": exc.raw, "error": f"{type(exc).__name__}: {exc}"})
            judgment.attempt_log = attempts_log
            if exc.raw:
                judgment.raw_reply = exc.raw
            return _fail(judgment, f"model call failed on attempt {attempt}: {type(exc).__name__}: {exc}")
        entry = _reply_record(judgment, completion, attempt=attempt, budget=budget)
        try:
            parsed = reply_parse(completion.text, rubric, stop_reason=completion.stop_reason)
        except ReplyTruncated as exc:
            # Not a review, whatever it looks like: ask the same question with room to finish.
            truncated, tried = True, budget
            error = f"{exc} at the {budget}-token budget"
            attempts_log.append({**entry, "error": error, "truncated": True})
            if budget >= cap:
                break
            budget = min(budget * 2, cap)
            continue
        except ReplyError as exc:
            truncated = False
            error = str(exc)
            attempts_log.append({**entry, "error": error})
            messages = [
                *messages,
                {"role": "assistant", "content": completion.text or "(empty)"},
                {"role": "user", "content": RETRY_MESSAGE.format(error=error)},
            ]
            continue
        attempts_log.append({**entry, "error": ""})
        return _succeed(judgment, parsed, attempt_log=attempts_log)
    judgment.attempt_log = attempts_log
    if truncated:
        return _fail(
            judgment,
            f"truncated: the last reply, at a {tried}-token budget (cap {cap}, JUDGE_MAX_TOKENS_CAP), was cut off "
            f"at the token limit after {judgment.attempts} attempt(s); no review recorded",
            Judgment.Status.TRUNCATED,
        )
    return _fail(judgment, f"no valid reply after {judgment.attempts} attempt(s); last error: {error}")


def _prompt(judgment: Judgment, *, note: str) -> RenderedPrompt:
    """The judge's prompt: a run's trajectory, or an artifact (with its supplementary files if asked)."""
    if judgment.run_id:
        return trajectory_render(run=judgment.run, rubric=judgment.rubric, note=note)
    return prompt_render(
        artifact=judgment.artifact, rubric=judgment.rubric, with_supplementary=judgment.with_supplementary, note=note
    )


def _reply_record(judgment: Judgment, completion: Completion, *, attempt: int, budget: int) -> dict[str, Any]:
    """Count a reply's tokens and cost on the judgment (every reply is paid for, valid or not) and
    return its attempt-log entry, less the error."""
    judgment.tokens_sent += completion.tokens_in
    judgment.tokens_received += completion.tokens_out
    judgment.cost += completion.cost
    judgment.raw_reply = completion.text
    return {
        "attempt": attempt,
        "reply": completion.text,
        "tokens_in": completion.tokens_in,
        "tokens_out": completion.tokens_out,
        "cost": completion.cost,
        "priced": completion.priced,
        "stop_reason": completion.stop_reason,
        "max_tokens": budget,
    }


def _succeed(judgment: Judgment, parsed: ParsedReply, *, attempt_log: list[dict[str, Any]]) -> Judgment:
    """Store a validated reply's scores."""
    judgment.attempt_log = attempt_log
    judgment.status = Judgment.Status.SUCCEEDED
    judgment.scores = parsed.scores
    judgment.findings = parsed.findings
    judgment.repairs = parsed.repairs
    judgment.error = ""
    judgment.finished_at = timezone.now()
    judgment.save()
    return judgment
