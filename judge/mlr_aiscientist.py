"""Import the judges' reviews of the AI Scientist v2 papers (ai_scientist_v2_papers/<backbone>/<task>/).

- review_<judge>.json: an end-to-end review (end-to-end rubric, version 1), as MLR-Agent's papers got.
- review_hallucination_<judge>.json: a hallucination review, `{has_hallucination, hallucinations:
  [{type, description, evidence}], overall_assessment, confidence}`, kept under the hallucination
  rubric (version 1) as its findings: the released types are the rubric's four kinds under other names
  (RELEASED_TYPES). The release gives no integrity score, so the judgment has none (nothing is made up);
  the verdict, the overall assessment and the confidence stay in the stored reply. A finding of an
  unknown type or without evidence makes the judgment failed, with the item named; a verdict that
  contradicts its own list is reported.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, TextIO

from django.db import transaction
from django.utils import timezone

from benchmark.models import Artifact
from benchmark.research.aiscientist import ai_scientist_root, find_ai_scientist_papers
from judge.mlr_reviews import ReviewImportReport, judge_label, relative_source, rubric_v1, store_judgment
from judge.models import Judgment, Rubric

_END2END = re.compile(r"^review_(?!hallucination_)(?P<judge>.+)\.json$")
_HALLUCINATION = re.compile(r"^review_hallucination_(?P<judge>.+)\.json$")
RELEASED_TYPES = {
    "faked experimental results": "faked_results",
    "hallucinated methodology": "hallucinated_methodology",
    "nonexistent citations": "incorrect_citation",
    "incorrect citations": "incorrect_citation",
    "mathematical errors": "math_error",
}


def import_ai_scientist_reviews(root: Path | str, *, stdout: TextIO | None = None) -> ReviewImportReport:
    """Import both kinds of review file of every imported AI Scientist v2 paper; report what does not fit."""
    root = Path(root)
    report = ReviewImportReport()
    base = ai_scientist_root(root)
    if not base.is_dir():
        report.problems.append(f"{base}: no such folder")
        return _finish(report, stdout)
    papers = find_ai_scientist_papers()
    if not papers:
        report.problems.append("no imported AI Scientist v2 papers to attach reviews to: import them first")
        return _finish(report, stdout)
    rubrics = {stage: rubric_v1(stage) for stage in (Rubric.Stage.END_TO_END, Rubric.Stage.HALLUCINATION)}
    release_root = base.parent
    for (slug, backbone), paper in sorted(papers.items()):
        folder = base / backbone / slug
        files = sorted(folder.glob("review_*.json")) if folder.is_dir() else []
        if not files:
            report.problems.append(f"{folder}: no review_<judge>.json files")
        for path in files:
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                report.problems.append(f"{path}: unreadable: {exc}")
                continue
            hallucination = _HALLUCINATION.match(path.name)
            if hallucination:
                report.count("hallucination")
                _store_hallucination(
                    paper=paper, rubric=rubrics[Rubric.Stage.HALLUCINATION],
                    judge_model=judge_label(hallucination["judge"]), path=path, root=release_root, text=text,
                    report=report,
                )  # fmt: skip
                continue
            match = _END2END.match(path.name)
            report.count("end2end")
            store_judgment(
                artifact=paper, rubric=rubrics[Rubric.Stage.END_TO_END], judge_model=judge_label(match["judge"]),
                path=path, root=release_root, text=text, with_supplementary=True, report=report,
            )  # fmt: skip
    return _finish(report, stdout)


def hallucination_findings(text: str) -> tuple[list[dict[str, Any]], list[str]]:
    """(findings in the rubric's terms, notes); raises ValueError naming the item that does not fit."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"not JSON: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("hallucinations"), list):
        raise ValueError("expected an object with a 'hallucinations' list")
    findings = []
    for index, item in enumerate(data["hallucinations"], start=1):
        if not isinstance(item, dict):
            raise ValueError(f"hallucinations[{index}]: not an object")
        kind = RELEASED_TYPES.get(str(item.get("type", "")).strip().lower())
        if kind is None:
            raise ValueError(f"hallucinations[{index}]: type {item.get('type')!r} is none of {sorted(RELEASED_TYPES)}")
        evidence = str(item.get("evidence") or "").strip()
        if not evidence:
            raise ValueError(f"hallucinations[{index}]: no evidence")
        findings.append(
            {"type": kind, "evidence": evidence, "location": "", "description": str(item.get("description") or "")}
        )
    notes = ["read MLR-Bench's hallucination review: released types as the rubric's kinds; no integrity score given"]
    verdict = data.get("has_hallucination")
    if verdict is not bool(findings):
        notes.append(f"has_hallucination is {json.dumps(verdict)} with {len(findings)} finding(s)")
    return findings, notes


def _store_hallucination(
    *, paper: Artifact, rubric: Rubric, judge_model: str, path: Path, root: Path, text: str, report: ReviewImportReport
) -> None:
    try:
        findings, notes = hallucination_findings(text)
        values: dict[str, Any] = {
            "status": Judgment.Status.SUCCEEDED,
            "findings": findings,
            "repairs": notes,
            "error": "",
        }
        if len(notes) > 1:
            report.problems.append(f"{path}: {notes[1]}; kept as released")
    except ValueError as exc:
        values = {"status": Judgment.Status.FAILED, "findings": [], "repairs": [], "error": str(exc)}
        report.failed += 1
        report.problems.append(f"{path}: kept as a failed judgment: {exc}")
    values.update(scores={}, raw_reply=text, source_path=relative_source(path, root), temperature=0.0, attempts=1)
    key = {"artifact": paper, "rubric": rubric, "judge_model": judge_model, "source": Judgment.Source.MLRBENCH}
    with transaction.atomic():
        existing = Judgment.objects.select_for_update().filter(**key, experiment__isnull=True).first()
        if existing is None:
            Judgment.objects.create(**key, with_supplementary=True, finished_at=timezone.now(), **values)
            report.created += 1
        elif all(getattr(existing, name) == value for name, value in values.items()):
            report.unchanged += 1
        else:
            for name, value in values.items():
                setattr(existing, name, value)
            existing.save()
            report.updated += 1


def _finish(report: ReviewImportReport, stdout: TextIO | None) -> ReviewImportReport:
    if stdout is not None:
        stdout.write(
            f"AI Scientist v2 reviews: {report.created} created, {report.updated} updated, {report.unchanged} "
            f"unchanged ({', '.join(f'{k} {n}' for k, n in sorted(report.per_stage.items())) or 'none read'}), "
            f"{report.failed} kept as failed, {len(report.problems)} problem(s)\n"
        )
        for problem in report.problems:
            stdout.write(f"  ! {problem}\n")
    return report
