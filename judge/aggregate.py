"""Several judges on one artifact: per-judge scores side by side, and per dimension the mean and spread.

Only succeeded judgments enter a mean; failed, queued and running ones are shown as such.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

from judge.models import Judgment, Rubric


@dataclass
class Cell:
    judgment: Judgment
    score: float | None
    justification: str = ""
    extra: dict[str, list[str]] = field(default_factory=dict)


@dataclass
class DimensionRow:
    dimension: dict[str, Any]
    cells: list[Cell]
    n: int = 0
    mean: float | None = None
    low: float | None = None
    high: float | None = None
    sd: float | None = None  # sample standard deviation; None with fewer than two judges

    @property
    def kind(self) -> str:
        return self.dimension.get("kind", "score")

    @property
    def spread(self) -> float | None:
        return None if self.low is None or self.high is None else self.high - self.low


@dataclass
class RubricPanel:
    rubric: Rubric
    judgments: list[Judgment]
    rows: list[DimensionRow]

    @property
    def succeeded(self) -> list[Judgment]:
        return [j for j in self.judgments if j.status == Judgment.Status.SUCCEEDED]

    @property
    def failed(self) -> list[Judgment]:
        return [j for j in self.judgments if j.status in Judgment.UNSCORED]

    @property
    def cost(self) -> float:
        return sum(j.cost for j in self.judgments)


def _row(dimension: dict[str, Any], judgments: list[Judgment]) -> DimensionRow:
    cells = []
    values = []
    for judgment in judgments:
        entry = (judgment.scores or {}).get(dimension["key"]) if judgment.status == Judgment.Status.SUCCEEDED else None
        score = judgment.score_of(dimension["key"]) if entry is not None else None
        extra = {k: entry[k] for k in ("strengths", "weaknesses") if isinstance(entry, dict) and entry.get(k)}
        justification = entry.get("justification", "") if isinstance(entry, dict) else ""
        cells.append(Cell(judgment=judgment, score=score, justification=justification, extra=extra))
        if score is not None:
            values.append(score)
    row = DimensionRow(dimension=dimension, cells=cells, n=len(values))
    if values:
        row.mean = statistics.fmean(values)
        row.low, row.high = min(values), max(values)
        row.sd = statistics.stdev(values) if len(values) > 1 else None
    return row


def rubric_panel(*, rubric: Rubric, judgments: list[Judgment]) -> RubricPanel:
    rows = [_row(d, judgments) for d in rubric.dimensions if d.get("kind", "score") != "findings"]
    return RubricPanel(rubric=rubric, judgments=judgments, rows=rows)


def judgment_panels(*, artifact: Any) -> list[RubricPanel]:
    """One panel per rubric version used on the artifact, newest version of each stage first."""
    judgments = list(
        Judgment.objects.filter(artifact=artifact, experiment__isnull=True)
        .select_related("rubric")
        .order_by("judge_model", "created_at")
    )
    by_rubric: dict[int, list[Judgment]] = {}
    rubrics: dict[int, Rubric] = {}
    for judgment in judgments:
        by_rubric.setdefault(judgment.rubric_id, []).append(judgment)
        rubrics[judgment.rubric_id] = judgment.rubric
    ordered = sorted(rubrics.values(), key=lambda r: (r.stage, -r.version))
    return [rubric_panel(rubric=r, judgments=by_rubric[r.pk]) for r in ordered]
