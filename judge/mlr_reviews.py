"""Import MLR-Bench's released end-to-end reviews as judgments of the imported papers.

Layout (the MLR-Bench repository's, also ../shared/mlrbench):
    agent_reviews/subset_reviews_<judge>/<task>/review_<backbone>.json
Each file is validated against the end-to-end rubric, version 1 (whose dimensions follow the
paper's review form). A file that does not validate is kept as a failed judgment with its text and
the error; a file with no imported paper to attach to, or a paper with no review file, is reported.
Re-running changes nothing that is already in place.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from django.db import transaction
from django.utils import timezone

from benchmark.models import Artifact, ResearchRun
from judge.models import Judgment, Rubric
from judge.parsing import ReplyError, reply_parse
from judge.rubrics import rubric_load_defaults

REVIEWS_DIR = "agent_reviews"
_SUBSET = re.compile(r"^subset_reviews_(?P<judge>.+)$")
_REVIEW = re.compile(r"^review_(?P<backbone>.+)\.json$")
# Provider prefixes for the released judges' labels; the label itself is kept exactly as released.
_PROVIDERS = (
    ("claude", "anthropic"),
    ("gemini", "google"),
    ("gpt", "openai"),
    ("o1", "openai"),
    ("o3", "openai"),
    ("o4", "openai"),
)


@dataclass
class ReviewImportReport:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    failed: int = 0  # files kept as failed judgments (malformed or invalid)
    problems: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return self.created + self.updated + self.unchanged


def judge_label(folder_judge: str) -> str:
    """'claude-3-7-sonnet-20250219' -> 'anthropic:claude-3-7-sonnet-20250219' (the released name, kept whole)."""
    lowered = folder_judge.lower()
    for prefix, provider in _PROVIDERS:
        if lowered.startswith(prefix):
            return f"{provider}:{folder_judge}"
    return f"unknown:{folder_judge}"


def _paper_index() -> dict[tuple[str, str], Artifact]:
    """(task slug, backbone) -> paper artifact of the imported MLR-Bench runs."""
    papers = Artifact.objects.filter(
        stage=Artifact.Stage.PAPER, research_run__source=ResearchRun.Source.MLRBENCH
    ).select_related("research_run__task")
    index: dict[tuple[str, str], Artifact] = {}
    for paper in papers:
        run = paper.research_run
        slug = run.task.slug
        for key in {slug, slug.replace("-", "_")}:
            index[(key, run.backbone)] = paper
    return index


def _store(
    *, artifact: Artifact, rubric: Rubric, judge_model: str, path: Path, text: str, report: ReviewImportReport
) -> None:
    try:
        parsed = reply_parse(text, rubric)
        values = {
            "status": Judgment.Status.SUCCEEDED,
            "scores": parsed.scores,
            "findings": parsed.findings,
            "repairs": parsed.repairs,
            "error": "",
        }
    except ReplyError as exc:
        values = {"status": Judgment.Status.FAILED, "scores": {}, "findings": [], "repairs": [], "error": str(exc)}
        report.failed += 1
        report.problems.append(f"{path}: kept as a failed judgment: {exc}")
    values.update(
        raw_reply=text,
        source_path=str(path),
        with_supplementary=True,  # MLR-Bench's judges were given the code with the paper
        temperature=0.0,
        attempts=1,
    )
    existing = Judgment.objects.filter(
        artifact=artifact, rubric=rubric, judge_model=judge_model, source=Judgment.Source.MLRBENCH
    ).first()
    if existing is None:
        Judgment.objects.create(
            artifact=artifact,
            rubric=rubric,
            judge_model=judge_model,
            source=Judgment.Source.MLRBENCH,
            finished_at=timezone.now(),
            **values,
        )
        report.created += 1
        return
    if all(getattr(existing, name) == value for name, value in values.items()):
        report.unchanged += 1
        return
    for name, value in values.items():
        setattr(existing, name, value)
    existing.save()
    report.updated += 1


def import_mlr_reviews(root: Path | str, *, stdout: TextIO | None = None) -> ReviewImportReport:
    """Import every review file under root/agent_reviews; report what could not be imported."""
    root = Path(root)
    report = ReviewImportReport()
    reviews = root / REVIEWS_DIR
    if not reviews.is_dir():
        report.problems.append(f"{reviews}: no such folder (expected agent_reviews/subset_reviews_<judge>/...)")
        return _finish(report, stdout)
    rubric = Rubric.objects.filter(stage=Rubric.Stage.END_TO_END, version=1).first()
    if rubric is None:
        rubric_load_defaults()
        rubric = Rubric.objects.get(stage=Rubric.Stage.END_TO_END, version=1)
    papers = _paper_index()
    if not papers:
        report.problems.append("no imported MLR-Bench papers to attach reviews to: run the results import first")
    judge_dirs = sorted(p for p in reviews.iterdir() if p.is_dir() and _SUBSET.match(p.name))
    if not judge_dirs:
        report.problems.append(f"{reviews}: no subset_reviews_<judge> folders")
    for judge_dir in judge_dirs:
        judge_model = judge_label(_SUBSET.match(judge_dir.name)["judge"])
        seen: set[tuple[str, str]] = set()
        for task_dir in sorted(p for p in judge_dir.iterdir() if p.is_dir()):
            for path in sorted(task_dir.iterdir()):
                match = _REVIEW.match(path.name)
                if not match or not path.is_file():
                    report.problems.append(f"{path}: not a review_<backbone>.json file, skipped")
                    continue
                key = (task_dir.name, match["backbone"])
                seen.add(key)
                artifact = papers.get(key)
                if artifact is None:
                    report.problems.append(
                        f"{path}: no imported paper for task {key[0]!r}, backbone {key[1]!r}; not imported"
                    )
                    continue
                try:
                    text = path.read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError) as exc:
                    report.problems.append(f"{path}: unreadable: {exc}")
                    continue
                with transaction.atomic():
                    _store(
                        artifact=artifact, rubric=rubric, judge_model=judge_model, path=path, text=text, report=report
                    )
        expected = {(a.research_run.task.slug.replace("-", "_"), a.research_run.backbone) for a in papers.values()}
        for task, backbone in sorted(expected - {(t.replace("-", "_"), b) for t, b in seen}):
            report.problems.append(
                f"{judge_dir}/{task}/review_{backbone}.json: missing (the paper has no review by this judge)"
            )
    return _finish(report, stdout)


def _finish(report: ReviewImportReport, stdout: TextIO | None) -> ReviewImportReport:
    if stdout is not None:
        stdout.write(
            f"reviews: {report.created} created, {report.updated} updated, {report.unchanged} unchanged, "
            f"{report.failed} kept as failed, {len(report.problems)} problem(s)\n"
        )
        for problem in report.problems:
            stdout.write(f"  ! {problem}\n")
    return report
