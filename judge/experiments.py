"""Judge experiments: run one judge configuration over a gold set, N times, as jobs.

An experiment is a set of ordinary judgments (or pairwise judgments) tied to it: each runs as its
own job on the `judge` queue through the same code as any judgment (validation, retries, the
token-limit rule), with the configuration's model, temperature, budget and prompt variant. The
experiment is finished when none of its judgments is queued or running. Comparing it with humans
(regression, leniency, length, self-preference) is the agreement layer's business
(agreement.lab.services); stability and position consistency need no humans but are reported there
too, with the rest.
"""

from __future__ import annotations

import itertools
import json
from functools import partial
from typing import Any

import django_rq
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from benchmark.llm import ConfigurationError, LLMError, complete, parse_model
from benchmark.llm.endpoints import connection_for
from benchmark.models import Artifact
from judge.models import GoldSet, JudgeConfig, JudgeExperiment, Judgment, PairwiseJudgment, Rubric
from judge.parsing import ReplyError, extract_json, is_length_stop
from judge.prompts import pairwise_render
from judge.rubrics import STAGES_FOR_ARTIFACT
from judge.services import JUDGE_QUEUE, judge_max_tokens, judge_max_tokens_cap, max_attempts

MAX_GOLD_ITEMS = 500  # a gold set is a few hundred items at most: each experiment re-judges every one
MAX_PAIRS = 200  # pairs per pairwise experiment (each asked in both orders)
ACTIVE = (Judgment.Status.QUEUED, Judgment.Status.RUNNING)


def judge_config_create(
    *,
    name: str,
    judge_model: str,
    rubric: Rubric,
    temperature: float = 0.0,
    max_tokens: int | None = None,
    with_supplementary: bool = True,
    prompt_note: str = "",
    created_by: Any = None,
) -> JudgeConfig:
    try:
        parse_model(judge_model)
    except ConfigurationError as exc:
        raise ValidationError(str(exc)) from exc
    if not 0.0 <= temperature <= 2.0:
        raise ValidationError("temperature must be between 0 and 2")
    if max_tokens is not None and not 256 <= max_tokens <= 64_000:
        raise ValidationError("max_tokens must be between 256 and 64,000")
    return JudgeConfig.objects.create(
        name=name.strip() or judge_model,
        judge_model=judge_model.strip(),
        rubric=rubric,
        temperature=temperature,
        max_tokens=max_tokens,
        with_supplementary=with_supplementary,
        prompt_note=prompt_note,
        created_by=created_by,
    )


def gold_set_create(
    *,
    name: str,
    stage: str,
    artifact_ids: list[int],
    reference: str = "",
    reference_label: str = "",
    created_by: Any = None,
) -> GoldSet:
    """Pin the items; they are never edited afterwards (a changed set is a new gold set)."""
    ids = sorted(set(artifact_ids))
    if not ids:
        raise ValidationError("a gold set needs at least one item")
    if len(ids) > MAX_GOLD_ITEMS:
        raise ValidationError(f"a gold set holds at most {MAX_GOLD_ITEMS} items (got {len(ids)})")
    if GoldSet.objects.filter(name=name).exists():
        raise ValidationError(f"a gold set named {name!r} exists already")
    found = Artifact.objects.filter(pk__in=ids, stage=stage).count()
    if found != len(ids):
        raise ValidationError(f"{len(ids) - found} of the items are not {stage} artifacts")
    with transaction.atomic():
        gold = GoldSet.objects.create(
            name=name, stage=stage, reference=reference, reference_label=reference_label, created_by=created_by
        )
        gold.artifacts.add(*ids)
    return gold


def experiment_start(
    *,
    config: JudgeConfig,
    gold_set: GoldSet,
    repeats: int = 1,
    kind: str = JudgeExperiment.Kind.RATING,
    user: Any = None,
) -> JudgeExperiment:
    """Create the experiment; its judgments are created and queued by `judge.jobs.run_experiment` after the commit."""
    if not 1 <= repeats <= JudgeExperiment.MAX_REPEATS:
        raise ValidationError(f"repeats must be 1 to {JudgeExperiment.MAX_REPEATS}")
    if config.rubric.stage not in STAGES_FOR_ARTIFACT.get(gold_set.stage, ()):
        raise ValidationError(f"a {config.rubric.get_stage_display()} rubric does not apply to {gold_set.stage} items")
    if kind == JudgeExperiment.Kind.PAIRWISE and repeats != 1:
        raise ValidationError("a pairwise experiment asks each pair once in each order (repeats = 1)")
    with transaction.atomic():
        experiment = JudgeExperiment.objects.create(
            kind=kind, config=config, gold_set=gold_set, repeats=repeats, created_by=user
        )
        transaction.on_commit(partial(_enqueue, "judge.jobs.run_experiment", experiment.pk))
    return experiment


def _enqueue(func: str, pk: int) -> None:
    django_rq.get_queue(JUDGE_QUEUE).enqueue(func, pk)


def experiment_pairs(items: list[Artifact]) -> list[tuple[Artifact, Artifact]]:
    """Pairs of items of the same task written by different systems (lower id first), at most MAX_PAIRS."""
    by_task: dict[int, list[Artifact]] = {}
    for a in sorted(items, key=lambda a: a.pk):
        by_task.setdefault(a.research_run.task_id, []).append(a)
    pairs = [
        (x, y)
        for group in by_task.values()
        for x, y in itertools.combinations(group, 2)
        if x.research_run.backbone != y.research_run.backbone
    ]
    return pairs[:MAX_PAIRS]


def experiment_launch(*, experiment: JudgeExperiment) -> JudgeExperiment:
    """Create the experiment's judgments (once) and queue each as its own job."""
    claimed = JudgeExperiment.objects.filter(pk=experiment.pk, status=JudgeExperiment.Status.QUEUED).update(
        status=JudgeExperiment.Status.RUNNING
    )
    experiment.refresh_from_db()
    if not claimed:  # launched already: a second launch would double the cost
        return experiment
    config = experiment.config
    items = list(experiment.gold_set.artifacts.select_related("research_run").order_by("pk"))
    with transaction.atomic():
        if experiment.kind == JudgeExperiment.Kind.PAIRWISE:
            pairs = experiment_pairs(items)
            rows = [
                PairwiseJudgment(experiment=experiment, first=a, second=b, swapped=swapped)
                for x, y in pairs
                for a, b, swapped in ((x, y, False), (y, x, True))
            ]
            created = PairwiseJudgment.objects.bulk_create(rows)
            func = "judge.jobs.run_pairwise"
        else:
            rows = [
                Judgment(
                    artifact=item,
                    rubric=config.rubric,
                    judge_model=config.judge_model,
                    temperature=config.temperature,
                    with_supplementary=config.with_supplementary,
                    requested_by=experiment.created_by,
                    experiment=experiment,
                    repeat=r,
                )  # fmt: skip
                for r in range(experiment.repeats)
                for item in items
            ]
            created = Judgment.objects.bulk_create(rows)
            func = "judge.jobs.run_judgment"
        if not created:
            experiment.status = JudgeExperiment.Status.FAILED
            experiment.error = "nothing to judge: the gold set has no items" + (
                " of the same task by different systems" if experiment.kind == JudgeExperiment.Kind.PAIRWISE else ""
            )
            experiment.finished_at = timezone.now()
            experiment.save()
            return experiment
        ids = [row.pk for row in created]
        transaction.on_commit(lambda: [_enqueue(func, pk) for pk in ids])
    return experiment


def experiment_refresh(*, experiment_id: int) -> JudgeExperiment | None:
    """Finish the experiment once none of its judgments is queued or running (called after each one)."""
    experiment = JudgeExperiment.objects.filter(pk=experiment_id).first()
    if experiment is None or experiment.status != JudgeExperiment.Status.RUNNING:
        return experiment
    rows = experiment.pairwise if experiment.kind == JudgeExperiment.Kind.PAIRWISE else experiment.judgments
    counts = rows.aggregate(
        active=Count("id", filter=Q(status__in=ACTIVE)), ok=Count("id", filter=Q(status="succeeded"))
    )
    if counts["active"]:
        return experiment
    done = JudgeExperiment.objects.filter(pk=experiment.pk, status=JudgeExperiment.Status.RUNNING).update(
        status=JudgeExperiment.Status.FINISHED if counts["ok"] else JudgeExperiment.Status.FAILED,
        error="" if counts["ok"] else "no judgment of the experiment succeeded",
        finished_at=timezone.now(),
    )
    if done:
        experiment.refresh_from_db()
    return experiment


def experiment_summary(experiment: JudgeExperiment) -> dict[str, Any]:
    """Counts by status, tokens and cost of an experiment's judgments."""
    rows = experiment.pairwise if experiment.kind == JudgeExperiment.Kind.PAIRWISE else experiment.judgments
    by_status = dict(rows.values_list("status").annotate(n=Count("id")))
    cost = sum(rows.values_list("cost", flat=True))
    return {"by_status": by_status, "total": sum(by_status.values()), "cost": cost}


# --- pairwise judging ---------------------------------------------------------------------------

_CHOICES = {
    "first": "first",
    "second": "second",
    "tie": "tie",
    "a": "first",
    "b": "second",
    "1": "first",
    "2": "second",
}


def _parse_pairwise(text: str) -> tuple[str, str]:
    data, _ = extract_json(text)
    raw = str(data.get("preferred", "")).strip().lower()
    if raw not in _CHOICES:
        raise ReplyError(f"preferred must be 'first', 'second' or 'tie' (got {json.dumps(data.get('preferred'))[:40]})")
    justification = str(data.get("justification") or "").strip()
    if not justification:
        raise ReplyError("justification is missing or empty")
    return _CHOICES[raw], justification


def pairwise_execute(*, pair: PairwiseJudgment) -> PairwiseJudgment:
    """Ask which of the two items is better, in the order stored; retry bad replies, never score a cut one."""
    claimed = PairwiseJudgment.objects.filter(pk=pair.pk, status=Judgment.Status.QUEUED).update(
        status=Judgment.Status.RUNNING
    )
    pair.refresh_from_db()
    if not claimed:
        return pair
    config = pair.experiment.config
    prompt = pairwise_render(first=pair.first, second=pair.second, rubric=config.rubric, note=config.prompt_note)
    pair.prompt_hash = prompt.hash
    budget = config.max_tokens or judge_max_tokens()
    cap = max(judge_max_tokens_cap(), budget)
    error, status = "", Judgment.Status.FAILED
    try:  # the config's provider:model goes to the admin's default endpoint of that provider, as a judgment's does
        connection, name = connection_for(endpoint=None, model=config.judge_model, user=pair.experiment.created_by)
    except ConfigurationError as exc:
        pair.status, pair.error, pair.finished_at = (
            status,
            f"the judge's endpoint cannot be used: {exc}",
            timezone.now(),
        )
        pair.save()
        return pair
    for attempt in range(1, max_attempts() + 1):
        pair.attempts = attempt
        try:
            completion = complete(
                endpoint=connection, model=name, system=prompt.system,
                messages=[{"role": "user", "content": prompt.user}], temperature=config.temperature, max_tokens=budget,
            )  # fmt: skip
        except LLMError as exc:
            error = f"model call failed on attempt {attempt}: {type(exc).__name__}: {exc}"
            break
        pair.tokens_sent += completion.tokens_in
        pair.tokens_received += completion.tokens_out
        pair.cost += completion.cost
        pair.raw_reply = completion.text
        entry = {"attempt": attempt, "stop_reason": completion.stop_reason, "max_tokens": budget}
        if is_length_stop(completion.stop_reason):
            error, status = (
                f"cut off at the token limit at a {budget}-token budget; not parsed",
                Judgment.Status.TRUNCATED,
            )
            pair.attempt_log = [*pair.attempt_log, {**entry, "error": error, "truncated": True}]
            if budget >= cap:
                break
            budget = min(budget * 2, cap)
            continue
        try:
            pair.preferred, pair.justification = _parse_pairwise(completion.text)
        except ReplyError as exc:
            error, status = str(exc), Judgment.Status.FAILED
            pair.attempt_log = [*pair.attempt_log, {**entry, "error": error}]
            continue
        pair.attempt_log = [*pair.attempt_log, {**entry, "error": ""}]
        pair.status, pair.error, pair.finished_at = Judgment.Status.SUCCEEDED, "", timezone.now()
        pair.save()
        return pair
    pair.status, pair.error, pair.finished_at = status, error, timezone.now()
    pair.preferred = ""
    pair.save()
    return pair
