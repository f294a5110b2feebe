"""Research runs: launch, resume and execute, one Artifact per stage (benchmark.research.pipeline).

`research_execute` walks the run's stages in order and skips those already done, so running it
again after a failure resumes at the first stage not done. Stepwise mode runs one stage from
inputs given at launch (stored as artifacts marked `given`). Tokens and cost are kept per stage
and summed on the run; every stage change is published to `research_<code>` for the run page.
Jobs are enqueued by their dotted path, so this module and benchmark.research.jobs do not import
each other.
"""

from __future__ import annotations

import logging
from pathlib import PurePosixPath
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Sum
from django.utils import timezone

from benchmark.models import Artifact, ModelEndpoint, ResearchRun, Task
from benchmark.research.experiment import ExperimentInterrupted
from benchmark.research.files import IMAGE_SUFFIXES, file_store, is_image
from benchmark.research.pipeline import STAGE_FUNCTIONS, STAGES, Context, StageError, StageResult
from benchmark.research.progress import research_send

log = logging.getLogger(__name__)

# The job, by its dotted path (benchmark.research.jobs imports this module).
EXECUTE_JOB = "benchmark.research.jobs.execute_research"


def research_enqueue(run: ResearchRun) -> None:
    """Enqueue after the surrounding transaction commits: the worker must find the row."""
    import django_rq

    run_id = run.pk
    transaction.on_commit(lambda: django_rq.get_queue("runs").enqueue(EXECUTE_JOB, run_id, job_timeout=12 * 3600))


def research_inputs_problem(stages: list[str], given: dict[str, str]) -> str | None:
    """What a run of `stages` (in pipeline order) lacks among the earlier stages' outputs, or None."""
    first = STAGES.index(stages[0])
    needed = [s for s in STAGES[:first] if not (given.get(s) or "").strip()]
    if needed:
        return f"running from the {stages[0]} stage needs the output of: {', '.join(needed)}"
    return None


def research_launch(
    *,
    owner: AbstractBaseUser,
    task: Task,
    backbone: str,
    endpoint: ModelEndpoint | None = None,
    stages: list[str] | None = None,
    settings: dict[str, Any] | None = None,
    given: dict[str, str] | None = None,
    given_files: dict[str, bytes] | None = None,
) -> ResearchRun:
    """A research run of `stages` (all five: end to end) on `task`; `given` holds earlier stages' outputs."""
    stages = list(stages or STAGES)
    unknown = [s for s in stages if s not in STAGES]
    if unknown or not stages:
        raise ValueError(f"unknown stages: {unknown}" if unknown else "choose at least one stage")
    stages = [s for s in STAGES if s in stages]  # pipeline order
    given = {k: v for k, v in (given or {}).items() if v and v.strip()}
    problem = research_inputs_problem(stages, given)
    if problem:
        raise ValueError(problem)
    mode = ResearchRun.Mode.END_TO_END if stages == STAGES else ResearchRun.Mode.STEPWISE
    with transaction.atomic():
        run = ResearchRun.objects.create(
            task=task,
            owner=owner,
            backbone=backbone,
            endpoint=endpoint,
            mode=mode,
            stages=stages,
            settings=settings or {},
        )
        for stage, text in given.items():
            if stage in stages:
                continue  # a stage that runs does not take a given output
            artifact = Artifact.objects.create(
                research_run=run, stage=stage, status=Artifact.Status.DONE, content=text, data={"given": True}
            )
            if stage == Artifact.Stage.EXPERIMENT and given_files:
                artifact.files = [file_store(artifact=artifact, relative=p, data=b) for p, b in given_files.items()]
                artifact.data = {"given": True, "figures": sorted(f for f in artifact.files if is_image(f))}
                artifact.save(update_fields=["files", "data"])
        research_enqueue(run)
    return run


def research_resume(*, run: ResearchRun) -> bool:
    """Queue a failed or interrupted run again; it continues at the first stage not done."""
    with transaction.atomic():
        updated = ResearchRun.objects.filter(
            pk=run.pk,
            status__in=(ResearchRun.Status.FAILED, ResearchRun.Status.INTERRUPTED, ResearchRun.Status.CANCELLED),
        ).update(status=ResearchRun.Status.QUEUED, error="", finished_at=None)
        if updated:
            research_enqueue(run)
    run.refresh_from_db()
    return bool(updated)


def _totals(run: ResearchRun) -> None:
    sums = run.artifacts.aggregate(s=Sum("tokens_sent"), r=Sum("tokens_received"), c=Sum("cost"))
    run.tokens_sent, run.tokens_received, run.cost = sums["s"] or 0, sums["r"] or 0, sums["c"] or 0.0


def _store_result(artifact: Artifact, result: StageResult, *, status: str | None = None, error: str = "") -> None:
    stored = []
    for relative, data in result.files.items():
        try:
            stored.append(file_store(artifact=artifact, relative=relative, data=data))
        except ValueError as exc:
            result.data.setdefault("rejected_files", []).append(str(exc))
    artifact.status = Artifact.Status.DONE if status is None else status
    artifact.content = result.content
    artifact.data = result.data
    artifact.files = stored
    artifact.tokens_sent, artifact.tokens_received, artifact.cost = (
        result.tokens_sent, result.tokens_received, result.cost,
    )  # fmt: skip
    artifact.experiment_run = result.experiment_run
    artifact.error = error
    artifact.save()


def research_stage_run(*, run: ResearchRun, stage: str) -> Artifact:
    """Run one stage now and store its artifact (done or failed, with the reason)."""
    artifacts = {a.stage: a for a in run.artifacts.all()}
    artifact, _ = Artifact.objects.update_or_create(
        research_run=run,
        stage=stage,
        defaults={"status": Artifact.Status.RUNNING, "error": "", "content": "", "data": {}, "files": []},
    )
    _publish(run)
    try:
        result = STAGE_FUNCTIONS[stage](Context(run=run, artifacts=artifacts))
        _store_result(artifact, result)
    except ExperimentInterrupted as exc:
        artifact.status, artifact.error, artifact.experiment_run = Artifact.Status.INTERRUPTED, str(exc), exc.run
        artifact.save(update_fields=["status", "error", "experiment_run"])
    except StageError as exc:
        if exc.partial is not None:  # the agent run and logs that explain the failure stay linked
            _store_result(artifact, exc.partial, status=Artifact.Status.FAILED, error=str(exc))
        else:
            artifact.status, artifact.error = Artifact.Status.FAILED, str(exc)
            artifact.save(update_fields=["status", "error"])
    except Exception as exc:  # a bug or an outage fails the stage visibly; the worker lives on
        log.exception("stage %s of research run %s crashed", stage, run.code)
        artifact.status, artifact.error = Artifact.Status.FAILED, f"{type(exc).__name__}: {exc}"
        artifact.save(update_fields=["status", "error"])
    return artifact


def research_execute(*, research_run_id: int) -> ResearchRun | None:
    """Claim a queued run and run its stages in order, from the first one not done."""
    claimed = ResearchRun.objects.filter(pk=research_run_id, status=ResearchRun.Status.QUEUED).update(
        status=ResearchRun.Status.RUNNING
    )
    if not claimed:
        return None
    run = ResearchRun.objects.select_related("task").get(pk=research_run_id)
    _publish(run)
    error = ""
    for stage in run.stages:
        done = run.artifacts.filter(stage=stage, status=Artifact.Status.DONE).exists()
        if done:
            continue
        if ResearchRun.objects.filter(pk=run.pk).values_list("status", flat=True).first() != ResearchRun.Status.RUNNING:
            return run  # cancelled between stages
        artifact = research_stage_run(run=run, stage=stage)
        _totals(run)
        ResearchRun.objects.filter(pk=run.pk).update(
            tokens_sent=run.tokens_sent, tokens_received=run.tokens_received, cost=run.cost
        )
        _publish(run)
        if artifact.status == Artifact.Status.INTERRUPTED:
            status, error = (
                ResearchRun.Status.INTERRUPTED,
                f"{Artifact.Stage(stage).label} interrupted: {artifact.error}",
            )
            break
        if artifact.status != Artifact.Status.DONE:
            status, error = ResearchRun.Status.FAILED, f"{Artifact.Stage(stage).label} failed: {artifact.error}"
            break
    else:
        status = ResearchRun.Status.FINISHED
    ResearchRun.objects.filter(pk=run.pk, status=ResearchRun.Status.RUNNING).update(
        status=status,
        error=error,
        finished_at=timezone.now(),
    )
    _publish(run)
    return run


def _publish(run: ResearchRun) -> None:
    run.refresh_from_db()
    try:
        research_send(run)
    except Exception:  # a viewer missing one update reloads the state on reconnect; the run goes on
        log.exception("could not publish research run %s", run.code)


def paper_figure_url_map(artifact: Artifact) -> dict[str, str]:
    """Image reference in the paper -> stored relative path, for rendering."""
    mapping = dict((artifact.data or {}).get("figure_map") or {})
    for relative in artifact.files or []:
        if PurePosixPath(relative).suffix.lower() in IMAGE_SUFFIXES:
            mapping.setdefault(relative, relative)
    return mapping
