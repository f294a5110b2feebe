"""Import the two judges' reviews of MLR-Bench's stepwise ideas and proposals as judgments.

Layout: agent_reviews/idea_proposal_reviews_<judge>/<task>/{idea,proposal}/<stage>_<model>.json,
2 judges x 2,412 files. Each file is validated against the stage's rubric, version 1 (idea:
consistency, clarity, novelty, feasibility, significance, overall; proposal: those and soundness).
The release calls the overall dimension `OverallAssessment`; that key is read as `overall` and the
renaming is recorded as a repair, while the stored reply stays the file's text. A file that does not
validate is kept as a failed judgment with its text and the error; a review with no imported
artifact, and an artifact with no review by a judge, are reported.

Idempotent and bulk: existing judgments are read in one query, new ones created and changed ones
updated in batches.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from django.db import transaction
from django.utils import timezone

from benchmark.models import Artifact, ResearchRun
from config.db import planner_statistics_refresh
from judge.mlr_reviews import judge_label, relative_source
from judge.models import Judgment, Rubric
from judge.parsing import ReplyError, reply_parse
from judge.rubrics import rubric_load_defaults

REVIEWS_DIR = "agent_reviews"
_JUDGE_DIR = re.compile(r"^idea_proposal_reviews_(?P<judge>.+)$")
_FILE = re.compile(r"^(?P<stage>idea|proposal)_(?P<model>.+)\.json$")
_OVERALL = re.compile(r'"OverallAssessment"(\s*):')
STAGES = ("idea", "proposal")
BATCH = 500


@dataclass
class StepwiseReviewReport:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    failed: int = 0
    per_judge: Counter = field(default_factory=Counter)  # judge model -> files read
    problems: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return self.created + self.updated + self.unchanged

    def lines(self) -> list[str]:
        judges = ", ".join(f"{judge} {n}" for judge, n in sorted(self.per_judge.items()))
        out = [
            f"stepwise reviews: {self.total} in place ({self.created} created, {self.updated} updated, "
            f"{self.unchanged} unchanged; {judges or 'no judge'}), {self.failed} kept as failed, "
            f"{len(self.problems)} problem(s)"
        ]
        return out + [f"  ! {p}" for p in self.problems]


def stepwise_artifacts() -> dict[tuple[str, str, str], Artifact]:
    """(task slug, model, stage) -> the model's own idea or proposal artifact of the stepwise import."""
    rows = (
        Artifact.objects.filter(research_run__source=ResearchRun.Source.STEPWISE, stage__in=STAGES)
        .select_related("research_run__task")
        .only("pk", "stage", "research_run__backbone", "research_run__stages", "research_run__task__slug")
    )  # the texts are not needed to attach reviews: 2,412 of them are megabytes
    out: dict[tuple[str, str, str], Artifact] = {}
    for artifact in rows:
        run = artifact.research_run
        if (run.stages or [""])[0] == artifact.stage:  # the run's own stage, not a given input
            out[(run.task.slug, run.backbone, artifact.stage)] = artifact
    return out


def _rubrics() -> dict[str, Rubric]:
    if Rubric.objects.filter(stage__in=STAGES, version=1).count() < len(STAGES):
        rubric_load_defaults()
    return {r.stage: r for r in Rubric.objects.filter(stage__in=STAGES, version=1)}


def _values(text: str, rubric: Rubric, path: Path, report: StepwiseReviewReport) -> dict[str, object]:
    renamed, n = _OVERALL.subn(r'"overall"\1:', text, count=1)
    try:
        parsed = reply_parse(renamed, rubric)
    except ReplyError as exc:
        report.failed += 1
        report.problems.append(f"{path}: kept as a failed judgment: {exc}")
        return {"status": Judgment.Status.FAILED, "scores": {}, "findings": [], "repairs": [], "error": str(exc)}
    repairs = [*parsed.repairs, *(["read MLR-Bench's OverallAssessment as rubric key 'overall'"] if n else [])]
    return {
        "status": Judgment.Status.SUCCEEDED,
        "scores": parsed.scores,
        "findings": parsed.findings,
        "repairs": repairs,
        "error": "",
    }


# Every field an import sets on a judgment: compared to find a changed review, and written when it changed.
FIELDS = (
    "status", "scores", "findings", "repairs", "error", "raw_reply", "source_path", "with_supplementary",
    "temperature", "attempts",
)  # fmt: skip


def import_stepwise_reviews(root: Path | str, *, stdout: TextIO | None = None) -> StepwiseReviewReport:
    """Import every file under root/agent_reviews/idea_proposal_reviews_<judge>/; report what does not fit."""
    root = Path(root)
    report = StepwiseReviewReport()
    judge_dirs = _judge_dirs(root)
    if not judge_dirs:
        report.problems.append(f"{_reviews_dir(root)}: no idea_proposal_reviews_<judge>/ folders")
        return _finish(report, stdout)
    artifacts = stepwise_artifacts()
    if not artifacts:
        report.problems.append("no imported stepwise ideas or proposals to attach reviews to: import them first")
        return _finish(report, stdout)
    rubrics = _rubrics()
    batch = _Batch(existing=_existing(rubrics), now=timezone.now())
    for judge_dir in judge_dirs:
        judge_model = judge_label(_JUDGE_DIR.match(judge_dir.name)["judge"])
        seen = _read_judge(judge_dir, judge_model, artifacts, rubrics, batch, report)
        for slug, model, stage in sorted(set(artifacts) - seen):
            report.problems.append(f"{judge_dir.name}/{slug}/{stage}/{stage}_{model}.json: missing (not reviewed)")
    _save(batch, report)
    return _finish(report, stdout)


def _reviews_dir(root: Path) -> Path:
    return root / REVIEWS_DIR if (root / REVIEWS_DIR).is_dir() else root


def _judge_dirs(root: Path) -> list[Path]:
    reviews = _reviews_dir(root)
    if not reviews.is_dir():
        return []
    return sorted(p for p in reviews.iterdir() if p.is_dir() and _JUDGE_DIR.match(p.name))


def _existing(rubrics: dict[str, Rubric]) -> dict[tuple[int, str], Judgment]:
    """(artifact id, judge model) -> the imported judgment already in place (one query)."""
    return {
        (j.artifact_id, j.judge_model): j
        for j in Judgment.objects.filter(
            source=Judgment.Source.MLRBENCH,
            rubric__in=list(rubrics.values()),
            artifact__research_run__source=ResearchRun.Source.STEPWISE,
            experiment__isnull=True,
        )
    }


@dataclass
class _Batch:
    existing: dict[tuple[int, str], Judgment]
    now: object
    new: list[Judgment] = field(default_factory=list)
    changed: list[Judgment] = field(default_factory=list)


def _review_files(task_dir: Path, report: StepwiseReviewReport):
    """(stage, model, path) of each review file of a task; every other entry is reported."""
    for stage in STAGES:
        stage_dir = task_dir / stage
        if not stage_dir.is_dir():
            report.problems.append(f"{stage_dir}: missing")
            continue
        for path in sorted(stage_dir.iterdir()):
            match = _FILE.match(path.name)
            if not match or match["stage"] != stage:
                report.problems.append(f"{path}: not a {stage}_<model>.json file, skipped")
                continue
            yield stage, match["model"], path


def _read_judge(
    judge_dir: Path,
    judge_model: str,
    artifacts: dict[tuple[str, str, str], Artifact],
    rubrics: dict[str, Rubric],
    batch: _Batch,
    report: StepwiseReviewReport,
) -> set[tuple[str, str, str]]:
    """Read one judge's files into the batch; returns the (task, model, stage) keys it reviewed."""
    seen: set[tuple[str, str, str]] = set()
    for task_dir in sorted(p for p in judge_dir.iterdir() if p.is_dir()):
        for stage, model, path in _review_files(task_dir, report):
            key = (task_dir.name, model, stage)
            artifact = artifacts.get(key)
            if artifact is None:
                report.problems.append(f"{path}: no imported {stage} of {model} on {key[0]}; not imported")
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                report.problems.append(f"{path}: unreadable: {exc}")
                continue
            seen.add(key)
            report.per_judge[judge_model] += 1
            values = {
                **_values(text, rubrics[stage], path, report),
                "raw_reply": text,
                "source_path": relative_source(path, judge_dir.parent.parent),  # the same from any clone
                "with_supplementary": False,  # ideas and proposals have no code or trace
                "temperature": 0.0,
                "attempts": 1,
            }
            _merge(
                batch, artifact=artifact, rubric=rubrics[stage], judge_model=judge_model, values=values, report=report
            )
    return seen


def _merge(
    batch: _Batch, *, artifact: Artifact, rubric: Rubric, judge_model: str, values: dict, report: StepwiseReviewReport
) -> None:
    """Queue a new judgment, a changed one, or count an unchanged one."""
    judgment = batch.existing.get((artifact.pk, judge_model))
    if judgment is None:
        batch.new.append(
            Judgment(
                artifact=artifact,
                rubric=rubric,
                judge_model=judge_model,
                source=Judgment.Source.MLRBENCH,
                finished_at=batch.now,
                **values,
            )  # fmt: skip
        )
    elif any(getattr(judgment, k) != v for k, v in values.items()):
        for k, v in values.items():
            setattr(judgment, k, v)
        batch.changed.append(judgment)
    else:
        report.unchanged += 1


def _save(batch: _Batch, report: StepwiseReviewReport) -> None:
    with transaction.atomic():
        Judgment.objects.bulk_create(batch.new, batch_size=BATCH)
        Judgment.objects.bulk_update(batch.changed, list(FIELDS), batch_size=BATCH)
    report.created, report.updated = len(batch.new), len(batch.changed)
    if batch.new:
        planner_statistics_refresh(Judgment)


def _finish(report: StepwiseReviewReport, stdout: TextIO | None) -> StepwiseReviewReport:
    if stdout is not None:
        for line in report.lines():
            stdout.write(line + "\n")
    return report
