"""Small factories for judge tests: an MLR task, a research run with its stage artifacts."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from benchmark.models import Artifact, ResearchRun, Task
from judge.models import Judgment, Rubric
from judge.rubrics import rubric_load_defaults


def make_task(slug: str = "iclr2025_toy") -> Task:
    return Task.objects.create(
        slug=slug,
        version_hash=hashlib.sha256(slug.encode()).hexdigest(),
        kind=Task.Kind.MLR,
        title=f"Workshop {slug}",
        description=f"# {slug}\n\nThe workshop calls for papers on robust toy models.",
        venue="iclr",
        year=2025,
        source="mlrbench",
    )


def make_research_run(
    *, owner: Any = None, task: Task | None = None, backbone: str = "claude", **extra: Any
) -> ResearchRun:
    return ResearchRun.objects.create(
        task=task or make_task(), owner=owner, backbone=backbone, status=ResearchRun.Status.FINISHED, **extra
    )


def make_artifact(run: ResearchRun, stage: str = "paper", content: str | None = None, **extra: Any) -> Artifact:
    return Artifact.objects.create(
        research_run=run, stage=stage, content=content if content is not None else f"The {stage} text.", **extra
    )


def rubric(stage: str = "end2end") -> Rubric:
    rubric_load_defaults()
    return Rubric.objects.get(stage=stage, version=1)


def valid_reply(rubric: Rubric, score: int = 7, **overrides: int) -> str:
    """A well-formed JSON reply to the rubric, every score `score` unless overridden per key."""
    body: dict[str, Any] = {}
    for dim in rubric.dimensions:
        kind = dim.get("kind", "score")
        if kind == "findings":
            body[dim["key"]] = []
        elif kind == "flag":
            body[dim["key"]] = {"score": overrides.get(dim["key"], 0), "justification": "all backed by the trace"}
        elif kind == "confidence":
            body[dim["key"]] = {"score": overrides.get(dim["key"], 4), "justification": "checked"}
        else:
            body[dim["key"]] = {"score": overrides.get(dim["key"], score), "justification": f"{dim['name']} reasons"}
    return json.dumps(body)


def make_judgment(
    artifact: Artifact, rubric: Rubric, judge_model: str, scores: dict[str, int] | None, **extra: Any
) -> Judgment:
    """A finished judgment: succeeded with these scores, or failed when scores is None."""
    if scores is None:
        return Judgment.objects.create(
            artifact=artifact, rubric=rubric, judge_model=judge_model, status=Judgment.Status.FAILED,
            error=extra.pop("error", "invalid JSON at line 1"), raw_reply=extra.pop("raw_reply", "not json"), **extra,
        )  # fmt: skip
    return Judgment.objects.create(
        artifact=artifact,
        rubric=rubric,
        judge_model=judge_model,
        status=Judgment.Status.SUCCEEDED,
        scores={k: {"score": v, "justification": f"{k} by {judge_model}"} for k, v in scores.items()},
        **extra,
    )


def make_stepwise_item(task: Task, model: str, stage: str = "idea", content: str | None = None) -> Artifact:
    """A model's idea or proposal as the stepwise import stores it: its own run, the stage as the run's stage."""
    run = ResearchRun.objects.create(
        task=task, backbone=model, source=ResearchRun.Source.STEPWISE, mode=ResearchRun.Mode.STEPWISE,
        stages=[stage], status=ResearchRun.Status.FINISHED,
    )  # fmt: skip
    return Artifact.objects.create(
        research_run=run,
        stage=stage,
        content=content if content is not None else f"# {model}'s {stage} for {task.slug}",
    )
