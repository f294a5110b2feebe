"""Import MLR-Bench's human study (human_eval/human_review.csv) as submitted reviews of a campaign.

Rows map onto the imported papers by workshop_name = task slug and model_name = backbone label.
Nothing is dropped silently: a duplicated (reviewer, paper) row, a paper with fewer reviews than
the campaign asks for, a row naming no imported paper, a bad score cell, an unknown column - each
becomes a fault naming file, line and column, printed and stored on the campaign.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from accounts.roles import REVIEWER
from accounts.services import roles_ensure
from benchmark.models import Artifact, ResearchRun
from judge.models import Rubric
from review.campaigns.services import campaign_add_items
from review.io.csvfile import CsvFileError, read_csv
from review.models import Assignment, Campaign, CampaignItem, CampaignReviewer, CampaignStatusChange, Review
from review.reviewing.forms import score_dimensions

KEY_COLUMNS = ("reviewer_id", "model_name", "workshop_name")
REVIEWER_PREFIX = "mlrbench-reviewer-"


class ImportError_(ValueError):
    """The file cannot be read at all (missing, no key columns, no rubric)."""


@dataclass
class ImportReport:
    rows: int = 0
    created: int = 0
    kept: int = 0  # already imported by an earlier run
    reviewers_created: int = 0
    faults: list[dict[str, str]] = field(default_factory=list)

    def fault(self, kind: str, where: str, detail: str) -> None:
        self.faults.append({"kind": kind, "where": where, "detail": detail})

    def count(self, kind: str) -> int:
        return sum(1 for f in self.faults if f["kind"] == kind)

    def summary(self) -> str:
        kinds = sorted({f["kind"] for f in self.faults})
        counts = ", ".join(f"{k}: {self.count(k)}" for k in kinds) or "none"
        return (
            f"{self.rows} rows: {self.created} reviews imported, {self.kept} already present, "
            f"{self.reviewers_created} reviewer accounts created; faults: {counts}"
        )


def _read(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    try:
        return read_csv(path, KEY_COLUMNS)
    except CsvFileError as exc:
        raise ImportError_(str(exc)) from None


def _campaign(name: str, *, k: int, named: set[tuple[str, str]]) -> Campaign:
    """The campaign, created with the imported papers the file names (workshop, model): the study's papers only."""
    campaign = Campaign.objects.filter(name=name).first()
    if campaign is not None:
        return campaign
    rubric = Rubric.objects.filter(stage=Rubric.Stage.END_TO_END).order_by("-version").first()
    if rubric is None:
        raise ImportError_("no end-to-end rubric loaded: load the judge's rubrics first")
    papers = Artifact.objects.filter(
        stage=Artifact.Stage.PAPER, research_run__source=ResearchRun.Source.MLRBENCH
    ).select_related("research_run__task")
    if not papers.exists():
        raise ImportError_("no imported MLR-Bench papers: import the MLR-Bench runs first")
    papers = [p for p in papers if (p.research_run.task.slug, p.research_run.backbone) in named]
    if not papers:
        raise ImportError_("the file names none of the imported MLR-Bench papers (workshop_name / model_name)")
    # The released study is finished: closed, so its synthetic reviewer accounts have nothing to do.
    campaign = Campaign.objects.create(
        name=name, rubric=rubric, reviewers_per_item=k, status=Campaign.Status.CLOSED, reclaim_after_hours=0
    )
    # The released CSV carries no dates: the import is when (and what) closed it, so that the pages
    # say "closed on <date> (imported)" and reopening has a close to follow.
    CampaignStatusChange.objects.create(
        campaign=campaign, from_status="", to_status=Campaign.Status.CLOSED, via=CampaignStatusChange.Via.IMPORT
    )
    campaign_add_items(campaign=campaign, artifacts=papers)
    return campaign


def _reviewer(reviewer_id: str, campaign: Campaign, report: ImportReport) -> Any:
    User = get_user_model()
    user, created = User.objects.get_or_create(username=f"{REVIEWER_PREFIX}{reviewer_id}")
    if created:
        user.set_unusable_password()  # stands for a person of the released study; nobody signs in as it
        user.save(update_fields=["password"])
        user.groups.add(roles_ensure()[REVIEWER])
        report.reviewers_created += 1
    CampaignReviewer.objects.get_or_create(campaign=campaign, reviewer=user, defaults={"active": False})
    return user


def import_human_reviews(
    path: str | Path, *, campaign_name: str, reviewers_per_item: int = 2, stdout: TextIO | None = None
) -> ImportReport:
    path = Path(path)
    header, rows = _read(path)
    report = ImportReport(rows=len(rows))
    with transaction.atomic():
        named = {((r.get("workshop_name") or "").strip(), (r.get("model_name") or "").strip()) for r in rows}
        campaign = _campaign(campaign_name, k=reviewers_per_item, named=named)
        items = {
            (i.artifact.research_run.task.slug, i.artifact.research_run.backbone): i
            for i in campaign.items.select_related("artifact__research_run__task")
        }
        rows_in = _Rows(
            file=path.name,
            header=header,
            campaign=campaign,
            columns=_score_columns(header, campaign, path.name, report),
            items=items,
            report=report,
        )
        for line, row in enumerate(rows, start=2):
            _import_row(rows_in, line, row)
        _report_coverage(campaign, report)
        campaign.import_faults = report.faults
        campaign.save(update_fields=["import_faults"])
    if stdout is not None:
        stdout.write(f"campaign {campaign.name}: {report.summary()}\n")
        for f in report.faults:
            stdout.write(f"  {f['kind']}: {f['where']}: {f['detail']}\n")
    return report


@dataclass
class _Rows:
    """What every row of one import is read against, and the (item, reviewer) pairs seen so far,
    with their line and scores, so that a duplicate can name the row it repeats."""

    file: str
    header: list[str]
    campaign: Campaign
    columns: dict[str, dict]
    items: dict[tuple[str, str], CampaignItem]
    report: ImportReport
    seen: dict[tuple[int, int], tuple[int, dict]] = field(default_factory=dict)
    now: datetime = field(default_factory=timezone.now)


def _score_columns(header: list[str], campaign: Campaign, file: str, report: ImportReport) -> dict[str, dict]:
    """The file's score columns by the rubric dimension they fill (by key or name, any case); a
    column that names none, and a dimension that no column fills, are faults."""
    dims = score_dimensions(campaign.rubric)
    by_label = {d["key"].lower(): d for d in dims} | {d["name"].lower(): d for d in dims}
    columns: dict[str, dict] = {}
    for col in header:
        if col in KEY_COLUMNS or not col:
            continue
        dim = by_label.get(col.lower())
        if dim is None:
            report.fault("unmatched_column", f"{file}:{col}", "no dimension of the rubric has this name: ignored")
        else:
            columns[col] = dim
    for dim in dims:
        if dim not in columns.values():
            report.fault("missing_column", f"{file}", f"no column for rubric dimension {dim['name']}")
    return columns


def _import_row(rows: _Rows, line: int, row: dict) -> None:
    where = f"{rows.file}:{line}"
    rid, model, workshop = ((row.get(c) or "").strip() for c in KEY_COLUMNS)
    item = _row_item(rows, where, row, (rid, model, workshop))
    if item is None:
        return
    scores = _row_scores(rows, where, row)
    user = _reviewer(rid, rows.campaign, rows.report)
    key = (item.pk, user.pk)
    if key in rows.seen:
        first_line, first_scores = rows.seen[key]
        same = (
            "identical scores"
            if first_scores == scores
            else f"different scores: kept [{_brief(first_scores)}], not stored [{_brief(scores)}]"
        )
        rows.report.fault(
            "duplicate_review",
            where,
            f"reviewer {rid} reviewed {workshop} / {model} again (first at line {first_line}, {same}): "
            "the first row is kept",
        )
        return
    rows.seen[key] = (line, scores)
    if Assignment.objects.filter(item=item, reviewer=user).exists():
        rows.report.kept += 1
        return
    _store_review(rows, item, user, scores)


def _row_item(rows: _Rows, where: str, row: dict, keys: tuple[str, str, str]) -> CampaignItem | None:
    """The campaign item the row reviews; None, with the fault that says why, for a row skipped."""
    rid, model, workshop = keys
    report = rows.report
    if row.get(None):  # more cells than the header names
        report.fault("extra_cells", where, f"{len(row[None])} cell(s) beyond the header: ignored")
    short = [c for c in rows.header if c and row.get(c) is None]
    if short:  # csv's mark of a row that ends early: its empty cells are not scores left blank
        report.fault(
            "truncated_row",
            where,
            f"{len(rows.header) - len(short)} of {len(rows.header)} cells (no {', '.join(short)}): row skipped",
        )
        return None
    if not (rid and model and workshop):
        report.fault("bad_row", where, "empty reviewer_id, model_name or workshop_name: row skipped")
        return None
    item = rows.items.get((workshop, model))
    if item is None:
        report.fault("unmatched_row", where, f"no imported paper for {workshop} / {model}: row skipped")
    return item


def _row_scores(rows: _Rows, where: str, row: dict) -> dict[str, dict[str, Any]]:
    """The row's scores by dimension key; a cell that is not an integer in the dimension's range is
    a fault and left out (the rest of the row is still imported)."""
    scores: dict[str, dict[str, Any]] = {}
    for col, dim in rows.columns.items():
        text = (row.get(col) or "").strip()
        low, high = int(dim.get("min", 1)), int(dim.get("max", 10))
        try:
            value = int(text)
            if not low <= value <= high:
                raise ValueError
        except ValueError:
            rows.report.fault("bad_score", f"{where}:{col}", f"{text!r} is not an integer {low}-{high}: left empty")
            continue
        scores[dim["key"]] = {"score": value, "justification": ""}
    return scores


def _store_review(rows: _Rows, item: CampaignItem, user: Any, scores: dict[str, dict[str, Any]]) -> None:
    slot = (item.assignments.aggregate(m=Max("slot"))["m"] or 0) + 1
    assignment = Assignment.objects.create(
        campaign=rows.campaign, item=item, reviewer=user, slot=slot, status=Assignment.Status.SUBMITTED,
        last_activity=rows.now,
    )  # fmt: skip
    Review.objects.create(
        assignment=assignment, scores=scores, status=Review.Status.SUBMITTED, source=Review.Source.IMPORTED,
        submitted_at=rows.now, revision=1,
    )  # fmt: skip
    rows.report.created += 1


def _brief(scores: dict[str, dict[str, Any]]) -> str:
    return ", ".join(f"{key} {entry['score']}" for key, entry in scores.items())


def _report_coverage(campaign: Campaign, report: ImportReport) -> None:
    k = campaign.reviewers_per_item
    items: list[CampaignItem] = list(campaign.items.select_related("artifact__research_run__task").order_by("id"))
    for item in items:
        n = item.assignments.filter(review__status=Review.Status.SUBMITTED).count()
        run = item.artifact.research_run
        label = f"{run.task.slug} / {run.backbone} ({item.code})"
        if n < k:
            hint = (
                " (a duplicated row elsewhere may have been meant for it)" if report.count("duplicate_review") else ""
            )
            report.fault("missing_review", label, f"{n} of {k} reviews{hint}")
        elif n > k:
            report.fault("extra_review", label, f"{n} reviews where {k} were planned (a mislabeled row?)")
