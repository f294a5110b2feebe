"""The stepwise leaderboard: models x criteria, each cell the mean and spread over tasks, per judge
and for the judges' mean, from the judgments of MLR-Bench's stepwise ideas and proposals.

Definitions (also printed with every export):
- an item is one model's idea (or proposal) for one task; its score on a criterion is a judge's
  integer score, and for the judges' mean the mean of the judges that scored it;
- a cell is the mean over the model's items, its spread the sample standard deviation over them
  (how much the model varies from task to task), n the number of items scored;
- only succeeded judgments count: failed ones are counted and shown, never scored.

The scores are read with one query that extracts each criterion's integer inside the database
(JSON key transforms), not the reviews' justifications: 4,824 reviews are about 20 MB of text that
a leaderboard never shows.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from django.db.models import Count, FloatField
from django.db.models.fields.json import KeyTextTransform, KeyTransform
from django.db.models.functions import Cast

from benchmark.csv_tables import CsvDictWriter
from benchmark.models import Artifact, ResearchRun
from benchmark.text_tables import latex_escape
from judge.models import Judgment, Rubric

if TYPE_CHECKING:
    import numpy as np

STAGES = ("idea", "proposal")
MEAN_VIEW = "judges' mean"
NOTE = (
    "Cell = mean over the model's tasks (spread: sample SD over tasks; n: items scored). Items: one model's "
    "{stage} per task; judges' mean: the mean of the judges that scored an item. Only succeeded judgments count."
)


@dataclass
class Cell:
    mean: float | None
    sd: float | None
    n: int

    def as_dict(self) -> dict[str, Any]:
        return {"mean": self.mean, "sd": self.sd, "n": self.n}


@dataclass
class ModelRow:
    model: str
    items: int  # the model's items of this stage (judged or not)
    cells: dict[str, dict[str, Cell]]  # view -> criterion key -> cell

    def rank_key(self, criterion: str, view: str = MEAN_VIEW) -> float:
        cell = self.cells.get(view, {}).get(criterion)
        return -(cell.mean if cell and cell.mean is not None else -math.inf)


@dataclass
class Leaderboard:
    stage: str
    rubric: Rubric | None
    criteria: list[tuple[str, str]]  # (key, name)
    judges: list[str]
    views: list[str]
    rows: list[ModelRow]
    unscored: dict[str, int] = field(default_factory=dict)  # judge -> failed/truncated judgments
    items: int = 0
    per_task: dict[str, Any] = field(default_factory=dict)  # for the task list: slug -> model -> judges' mean overall

    @property
    def note(self) -> str:
        return NOTE.format(stage=self.stage)

    @property
    def rank_by(self) -> str:
        """The criterion rows are ranked by: Overall when the rubric has it, else its first."""
        keys = [k for k, _ in self.criteria]
        return "overall" if "overall" in keys else (keys[0] if keys else "")

    def grid(self) -> list[dict[str, Any]]:
        """Per view, the rows with their cells in criterion order (what a template can loop over),
        each view's table ranked by its own scores: a judge's table read in the judges' mean order
        looked unsorted."""
        return [
            {
                "view": view,
                "rows": [
                    {
                        "model": r.model,
                        "items": r.items,
                        "cells": [r.cells.get(view, {}).get(k) for k, _ in self.criteria],
                    }
                    for r in sorted(self.rows, key=lambda r: (r.rank_key(self.rank_by, view), r.model))
                ],
            }
            for view in self.views
        ]


def stepwise_rubrics(stage: str) -> list[Rubric]:
    """Rubric versions with judgments of stepwise items of this stage, newest first."""
    return list(
        Rubric.objects.filter(
            stage=stage,
            judgments__artifact__research_run__source=ResearchRun.Source.STEPWISE,
            judgments__experiment__isnull=True,
        ).distinct().order_by("-version")
    )  # fmt: skip


def stepwise_judgments(stage: str, rubric: Rubric) -> Any:
    """The stepwise judgments of `stage` under `rubric`, on the models' own items (not given inputs)."""
    return Judgment.objects.filter(
        rubric=rubric,
        experiment__isnull=True,  # judge experiments' re-runs are read by the judge lab, not the leaderboard
        artifact__stage=stage,
        artifact__research_run__source=ResearchRun.Source.STEPWISE,
        artifact__research_run__stages=[stage],  # the run's own stage: given inputs are never judged here
    )


def _score_rows(stage: str, rubric: Rubric, keys: list[str]) -> list[tuple]:
    annotations = {f"s_{k}": Cast(KeyTextTransform("score", KeyTransform(k, "scores")), FloatField()) for k in keys}
    return list(
        stepwise_judgments(stage, rubric)
        .filter(status=Judgment.Status.SUCCEEDED)
        .annotate(**annotations)
        .values_list(
            "artifact_id",
            "artifact__research_run__backbone",
            "artifact__research_run__task__slug",
            "judge_model",
            *annotations,
        )  # fmt: skip
    )


def _cells(values: np.ndarray) -> dict[int, Cell]:
    """values: (items, criteria) with NaN -> per criterion index, the cell."""
    import numpy as np  # at call time: the URL conf imports this module

    out = {}
    for c in range(values.shape[1]):
        v = values[:, c]
        v = v[~np.isnan(v)]
        mean = float(v.mean()) if len(v) else None
        sd = float(v.std(ddof=1)) if len(v) > 1 else None
        out[c] = Cell(mean=mean, sd=sd, n=len(v))
    return out


@dataclass
class ScoreMatrix:
    """Every judge's score of every stepwise item of one stage, as arrays (leaderboard and agreement)."""

    stage: str
    rubric: Rubric
    criteria: list[tuple[str, str]]  # (key, name)
    scales: list[tuple[float, float]]  # per criterion (min, max)
    judges: list[str]
    artifact_ids: list[int]
    models: list[str]  # per item: the model that wrote it
    tasks: list[str]  # per item: the task slug
    S: np.ndarray  # (items, judges, criteria), NaN where a judge gave no score
    lengths: list[int] = field(default_factory=list)  # per item: words of the text (length probes)

    def judges_mean(self) -> np.ndarray:
        """(items, criteria): the mean of the judges that scored each item (NaN where none did)."""
        import numpy as np  # at call time: the URL conf imports this module

        with np.errstate(invalid="ignore", divide="ignore"):
            ok = ~np.isnan(self.S)
            return np.where(ok, self.S, 0.0).sum(axis=1) / ok.sum(axis=1)


def stepwise_matrix(stage: str, rubric: Rubric, *, with_lengths: bool = False) -> ScoreMatrix:
    import numpy as np  # at call time: the URL conf imports this module

    dims = rubric.score_dimensions
    criteria = [(d["key"], d.get("name", d["key"])) for d in dims]
    scales = [(float(d.get("min", 1)), float(d.get("max", 10))) for d in dims]
    keys = [k for k, _ in criteria]
    rows = _score_rows(stage, rubric, keys)
    judges = sorted({r[3] for r in rows})
    artifacts = sorted({r[0] for r in rows})
    index = {a: i for i, a in enumerate(artifacts)}
    S = np.full((len(artifacts), max(len(judges), 1), len(keys)), np.nan)
    model_of: dict[int, str] = {}
    task_of: dict[int, str] = {}
    for artifact_id, model, slug, judge, *scores in rows:
        S[index[artifact_id], judges.index(judge)] = [np.nan if v is None else v for v in scores]
        model_of[artifact_id], task_of[artifact_id] = model, slug
    lengths: list[int] = []
    if with_lengths:
        words = {
            pk: len(text.split()) for pk, text in Artifact.objects.filter(pk__in=artifacts).values_list("pk", "content")
        }
        lengths = [words.get(a, 0) for a in artifacts]
    return ScoreMatrix(
        stage=stage, rubric=rubric, criteria=criteria, scales=scales, judges=judges, artifact_ids=artifacts,
        models=[model_of[a] for a in artifacts], tasks=[task_of[a] for a in artifacts], S=S, lengths=lengths,
    )  # fmt: skip


def default_rubric(stage: str) -> Rubric | None:
    versions = stepwise_rubrics(stage)
    return versions[0] if versions else None


def stepwise_leaderboard(stage: str, rubric: Rubric | None = None) -> Leaderboard:
    """The leaderboard of one stage under one rubric version (default: the newest one with judgments)."""
    import numpy as np  # at call time: the URL conf imports this module

    rubric = rubric or default_rubric(stage)
    if rubric is None:
        return Leaderboard(stage=stage, rubric=None, criteria=[], judges=[], views=[], rows=[])
    m = stepwise_matrix(stage, rubric)
    keys = [k for k, _ in m.criteria]
    mean = m.judges_mean()
    items_per_model: dict[str, int] = {}
    for (model,) in (
        Artifact.objects.filter(research_run__source=ResearchRun.Source.STEPWISE, research_run__stages=[stage], stage=stage)
        .values_list("research_run__backbone")
    ):  # fmt: skip
        items_per_model[model] = items_per_model.get(model, 0) + 1
    views = [*m.judges, MEAN_VIEW] if len(m.judges) > 1 else m.judges
    models = np.array(m.models, dtype=object)
    out_rows = []
    for model in sorted(items_per_model):
        sel = models == model
        cells: dict[str, dict[str, Cell]] = {}
        for k, judge in enumerate(m.judges):
            by = _cells(m.S[sel, k, :])
            cells[judge] = {keys[c]: by[c] for c in by}
        if len(m.judges) > 1:
            by = _cells(mean[sel])
            cells[MEAN_VIEW] = {keys[c]: by[c] for c in by}
        out_rows.append(ModelRow(model=model, items=items_per_model[model], cells=cells))
    rank_by = "overall" if "overall" in keys else (keys[0] if keys else "")
    out_rows.sort(key=lambda r: (r.rank_key(rank_by), r.model))
    unscored = dict(
        stepwise_judgments(stage, rubric)
        .filter(status__in=Judgment.UNSCORED)
        .values_list("judge_model")
        .annotate(n=Count("id"))
    )
    per_task: dict[str, dict[str, float | None]] = {}
    o = keys.index(rank_by) if rank_by else 0
    for i, slug in enumerate(m.tasks):
        value = mean[i, o] if keys else np.nan
        per_task.setdefault(slug, {})[m.models[i]] = None if np.isnan(value) else float(value)
    return Leaderboard(
        stage=stage,
        rubric=rubric,
        criteria=m.criteria,
        judges=m.judges,
        views=views,
        rows=out_rows,
        unscored=unscored,
        items=len(m.artifact_ids),
        per_task=dict(sorted(per_task.items())),
    )


def leaderboard_records(board: Leaderboard) -> list[dict[str, Any]]:
    """Long format: one record per (model, view, criterion) - the CSV and JSON rows."""
    return [
        {
            "stage": board.stage,
            "rubric": f"{board.rubric.stage} v{board.rubric.version}" if board.rubric else "",
            "model": row.model,
            "view": view,
            "criterion": key,
            **row.cells.get(view, {}).get(key, Cell(None, None, 0)).as_dict(),
        }
        for row in board.rows
        for view in board.views
        for key, _ in board.criteria
    ]


# --- exports -----------------------------------------------------------------------------------


def _fmt(cell: Cell | None, digits: int = 2) -> str:
    if cell is None or cell.mean is None:
        return "-"
    sd = f" ± {cell.sd:.{digits}f}" if cell.sd is not None else ""
    return f"{cell.mean:.{digits}f}{sd}"


def to_csv(board: Leaderboard) -> str:
    out = io.StringIO()
    writer = CsvDictWriter(out, fieldnames=["stage", "rubric", "model", "view", "criterion", "mean", "sd", "n"])
    writer.writeheader()
    for record in leaderboard_records(board):
        writer.writerow({k: ("" if v is None else v) for k, v in record.items()})
    return out.getvalue()


def to_json(board: Leaderboard, attribution: str) -> dict[str, Any]:
    return {
        "stage": board.stage,
        "rubric": {"stage": board.rubric.stage, "version": board.rubric.version, "code": str(board.rubric.code)}
        if board.rubric
        else None,
        "criteria": [{"key": k, "name": n} for k, n in board.criteria],
        "judges": board.judges,
        "views": board.views,
        "items_scored": board.items,
        "unscored_judgments": board.unscored,
        "definition": board.note,
        "attribution": attribution,
        "rows": leaderboard_records(board),
    }


def _table(board: Leaderboard, view: str) -> tuple[list[str], list[list[str]]]:
    head = ["Model", *[name for _, name in board.criteria], "n"]
    body = []
    for row in board.rows:
        cells = row.cells.get(view, {})
        n = max((c.n for c in cells.values()), default=0)
        body.append([row.model, *[_fmt(cells.get(k)) for k, _ in board.criteria], str(n)])
    return head, body


def to_markdown(board: Leaderboard, attribution: str) -> str:
    parts = [f"# MLR-Bench stepwise leaderboard: {board.stage}", ""]
    for view in board.views:
        head, body = _table(board, view)
        parts += [f"## {view}", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        parts += ["| " + " | ".join(r) + " |" for r in body]
        parts.append("")
    parts += [board.note, "", attribution, ""]
    return "\n".join(parts)


def to_latex(board: Leaderboard, attribution: str) -> str:
    parts = [f"% MLR-Bench stepwise leaderboard: {board.stage}. {board.note}", f"% {attribution}"]
    for view in board.views:
        head, body = _table(board, view)
        parts += [
            r"\begin{table}[t]",
            r"\centering",
            r"\begin{tabular}{l" + "c" * (len(head) - 1) + "}",
            r"\toprule",
            " & ".join(latex_escape(h) for h in head) + r" \\",
            r"\midrule",
        ]
        parts += [" & ".join(latex_escape(c).replace("±", r"$\pm$") for c in r) + r" \\" for r in body]
        parts += [
            r"\bottomrule",
            r"\end{tabular}",
            r"\caption{" + latex_escape(f"MLR-Bench stepwise {board.stage}s, {view}: mean") + r" $\pm$ SD over tasks}",
            r"\end{table}",
            "",
        ]
    return "\n".join(parts)
