"""Import MLR-Bench's human hallucination check (human_eval/Hallucination Check.csv) as labels.

One row per (system, workshop): `LLM` (the agent: "MLR Agent", "AI Scientist V2"), `Workshop_name`
(the task slug), and four Yes / No / Not Sure columns: faked experimental results, hallucinated
methodology, incorrect citations, mathematical errors. Each cell becomes a HallucinationLabel.

Linking a label to a paper: the CSV names the agent, not the backbone, and the release has three
MLR-Agent papers per task (claude, gemini, o4-mini backbones). The importer never guesses: MLR
Agent rows are linked to the papers of the backbone given with `backbone`; without it they are
reported, and labels an admin linked before keep their link (make up re-imports without one).
AI Scientist V2 rows are linked to the imported AI Scientist v2 paper of the task (the release
has one backbone of it; with several, the row is left unlinked and reported).

Faults are reported, not dropped: missing rows (the release lacks the MLR Agent row for
iclr2025_scope), duplicated rows (the first is kept), values other than Yes / No / Not Sure.
Idempotent: a label is found again by (system, workshop, kind).
"""

from __future__ import annotations

import csv
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from django.db import transaction

from benchmark.models import Artifact, ResearchRun
from benchmark.research.aiscientist import find_ai_scientist_papers
from review.models import HallucinationLabel

COLUMNS = {
    "is_Faked_Experimental_Result": HallucinationLabel.Kind.FAKED_RESULTS,
    "is_Hallucinated_Methodology": HallucinationLabel.Kind.HALLUCINATED_METHODOLOGY,
    "is_Incorrect_Citation": HallucinationLabel.Kind.INCORRECT_CITATION,
    "is_Mathematical_Error": HallucinationLabel.Kind.MATH_ERROR,
}
VALUES = {
    "yes": HallucinationLabel.Value.YES,
    "no": HallucinationLabel.Value.NO,
    "not sure": HallucinationLabel.Value.NOT_SURE,
}
MLR_AGENT = "MLR Agent"
AI_SCIENTIST = "AI Scientist V2"
BACKBONES = ("claude", "gemini", "o4-mini")


class LabelFileError(ValueError):
    """The file cannot be read as the hallucination check at all."""


@dataclass
class LabelImportReport:
    rows: int = 0
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    linked: int = 0
    unlinked: int = 0
    faults: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        return [
            f"hallucination labels: {self.rows} rows, {self.created} created, {self.updated} updated, "
            f"{self.unchanged} unchanged; {self.linked} linked to papers, {self.unlinked} not; "
            f"{len(self.faults)} fault(s)",
            *[f"  FAULT {f}" for f in self.faults],
        ]


def missing_rows(rows: list[tuple[str, str]]) -> list[str]:
    """Workshops a system has no row for, while another system has one (from the rows themselves)."""
    systems = sorted({s for s, _ in rows})
    by_workshop: dict[str, set[str]] = defaultdict(set)
    for system, workshop in rows:
        by_workshop[workshop].add(system)
    return [
        f"no {system} row for {workshop} (the other systems have one): its labels are missing, not 'No'"
        for workshop, present in sorted(by_workshop.items())
        for system in systems
        if system not in present
    ]


def import_hallucination_labels(
    path: str | Path, *, backbone: str | None = None, stdout: TextIO | None = None
) -> LabelImportReport:
    path = Path(path)
    if backbone is not None and backbone not in BACKBONES:
        raise LabelFileError(f"backbone must be one of {', '.join(BACKBONES)} (got {backbone!r})")
    header, rows = _read_rows(path)
    report = LabelImportReport(rows=len(rows))
    papers, scientist = _papers()
    seen: dict[tuple[str, str], int] = {}
    wanted: list[HallucinationLabel] = []
    keep_link: set[tuple[str, str]] = set()  # rows whose paper the file does not tell: an earlier link stays
    for line, row in enumerate(rows, start=2):
        system, workshop = (row.get("LLM") or "").strip(), (row.get("Workshop_name") or "").strip()
        where = f"{path.name}:{line}"
        if None in row or any(row.get(c) is None for c in header):  # csv's marks of a row too long or too short
            report.faults.append(
                f"{where}: {len(row) - (None in row) - sum(row.get(c) is None for c in header)} of "
                f"{len(header)} fields{' and extra ones' if None in row else ''}; row skipped (truncated or misquoted?)"
            )
            continue
        if not system or not workshop:
            report.faults.append(f"{where}: no system or workshop; row skipped")
            continue
        if (system, workshop) in seen:
            report.faults.append(
                f"{where}: duplicate of line {seen[(system, workshop)]} ({system}, {workshop}); first kept"
            )
            continue
        seen[(system, workshop)] = line
        paper = papers.get((workshop, backbone)) if system == MLR_AGENT and backbone else None
        if system == MLR_AGENT and backbone and paper is None:
            report.faults.append(f"{where}: no imported {backbone} paper for {workshop}; labels kept unlinked")
        if system == MLR_AGENT and not backbone:
            keep_link.add((system, workshop))
        if system == AI_SCIENTIST:
            candidates = scientist.get(workshop, [])
            paper = candidates[0] if len(candidates) == 1 else None
            if len(candidates) != 1:
                report.faults.append(
                    f"{where}: {len(candidates)} imported AI Scientist v2 papers for {workshop}; labels kept unlinked"
                )
        wanted += _row_labels(row, system=system, workshop=workshop, paper=paper, where=where, report=report)
    report.faults += _file_faults(path, seen=list(seen), backbone=backbone)
    _store(wanted, report, keep_link=keep_link)
    if stdout is not None:
        for text in report.lines():
            stdout.write(text + "\n")
    return report


def _read_rows(path: Path) -> tuple[list[str], list[dict[str, Any]]]:
    """(header, rows) of the CSV; an unreadable file or a missing column refuses the whole file."""
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle)
            header = reader.fieldnames or []
            rows = list(reader)
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise LabelFileError(f"{path}: unreadable: {exc}") from exc
    missing = [c for c in ("LLM", "Workshop_name", *COLUMNS) if c not in header]
    if missing:
        raise LabelFileError(f"{path}: missing column(s) {', '.join(missing)} (header: {', '.join(header)})")
    return header, rows


def _papers() -> tuple[dict[tuple[str, str], Artifact], dict[str, list[Artifact]]]:
    """The imported papers a label can link to: MLR-Bench's by (task, backbone), AI Scientist v2's by task."""
    papers = {
        (a.research_run.task.slug, a.research_run.backbone): a
        for a in Artifact.objects.filter(
            stage=Artifact.Stage.PAPER, research_run__source=ResearchRun.Source.MLRBENCH
        ).select_related("research_run__task")
    }
    scientist: dict[str, list[Artifact]] = defaultdict(list)
    for (slug, _backbone), paper in sorted(find_ai_scientist_papers().items()):
        scientist[slug].append(paper)
    return papers, scientist


def _row_labels(
    row: dict[str, Any], *, system: str, workshop: str, paper: Artifact | None, where: str, report: LabelImportReport
) -> list[HallucinationLabel]:
    """One label per column of the row; a value other than Yes / No / Not Sure skips that label only."""
    labels = []
    for column, kind in COLUMNS.items():
        raw = (row.get(column) or "").strip()
        value = VALUES.get(raw.lower())
        if value is None:
            report.faults.append(f"{where}: {column} = {raw!r} is not Yes / No / Not Sure; label skipped")
            continue
        labels.append(
            HallucinationLabel(system=system, workshop=workshop, kind=kind, value=value, artifact=paper, source=where)
        )
    return labels


def _file_faults(path: Path, *, seen: list[tuple[str, str]], backbone: str | None) -> list[str]:
    """What the file as a whole leaves out or cannot tell (rows missing, unlinked systems)."""
    faults = [f"{path.name}: {m}" for m in missing_rows(seen)]
    if MLR_AGENT in {s for s, _ in seen} and backbone is None:
        faults.append(
            f"{path.name}: the CSV names the agent ({MLR_AGENT}), not which backbone's paper it checked "
            f"({', '.join(BACKBONES)}): {MLR_AGENT} labels kept unlinked (links made before stay); pass --backbone to link them"
        )
    others = sorted({s for s, _ in seen} - {MLR_AGENT, AI_SCIENTIST})
    if others:
        faults.append(
            f"{path.name}: no paper of {', '.join(others)} in the release: their labels are kept, not compared"
        )
    return faults


def _store(wanted: list[HallucinationLabel], report: LabelImportReport, *, keep_link: set[tuple[str, str]]) -> None:
    existing = {(x.system, x.workshop, x.kind): x for x in HallucinationLabel.objects.all()}
    new, changed = [], []
    for label in wanted:
        old = existing.get((label.system, label.workshop, label.kind))
        if old is not None and (label.system, label.workshop) in keep_link:
            label.artifact_id = old.artifact_id  # the file does not say which paper: a link made before stays
        if label.artifact_id:
            report.linked += 1
        else:
            report.unlinked += 1
        if old is None:
            new.append(label)
        elif (old.value, old.artifact_id, old.source) != (label.value, label.artifact_id, label.source):
            old.value, old.artifact_id, old.source = label.value, label.artifact_id, label.source
            changed.append(old)
        else:
            report.unchanged += 1
    with transaction.atomic():
        HallucinationLabel.objects.bulk_create(new)
        HallucinationLabel.objects.bulk_update(changed, ["value", "artifact", "source"])
    report.created, report.updated = len(new), len(changed)
