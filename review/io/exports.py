"""Reviews of a campaign as CSV (one row per review, a score and a justification column per dimension) and JSON."""

from __future__ import annotations

import io
import json
from typing import Any

from benchmark.csv_tables import CsvWriter
from review.models import Campaign, Review
from review.reviewing.forms import score_dimensions
from review.trajectory.steps import step_tags_text


def _reviews(campaign: Campaign, include_drafts: bool) -> Any:
    qs = Review.objects.filter(assignment__campaign=campaign).select_related(
        "assignment__item__artifact__research_run__task",
        "assignment__item__run__task",
        "assignment__item__run__agent",
        "assignment__reviewer",
    )
    if not include_drafts:
        qs = qs.filter(status=Review.Status.SUBMITTED)
    return qs.order_by("assignment__item_id", "assignment__reviewer__username")


def review_records(campaign: Campaign, *, include_drafts: bool = False) -> list[dict[str, Any]]:
    records = []
    for review in _reviews(campaign, include_drafts):
        a = review.assignment
        item = a.item
        task = item.run.task if item.run_id else item.artifact.research_run.task
        records.append(
            {
                "item": item.code,
                "artifact": str(item.artifact.code) if item.artifact_id else "",
                "run": str(item.run.code) if item.run_id else "",
                "task": task.slug,
                "system": item.system,
                "reviewer": a.reviewer.get_username(),
                "assignment": a.code,
                "status": review.status,
                "source": review.source,
                "submitted_at": review.submitted_at.isoformat() if review.submitted_at else None,
                "confidence": review.confidence,
                "scores": review.scores,
                "step_tags": review.step_tags or [],
            }
        )
    return records


def reviews_json(campaign: Campaign, *, include_drafts: bool = False) -> str:
    return json.dumps(
        {
            "campaign": {"code": str(campaign.code), "name": campaign.name, "stage": campaign.stage},
            "rubric": {
                "stage": campaign.rubric.stage,
                "version": campaign.rubric.version,
                "dimensions": [d["key"] for d in score_dimensions(campaign.rubric)],
            },
            "reviews": review_records(campaign, include_drafts=include_drafts),
            "import_faults": campaign.import_faults,
        },
        indent=2,
    )


def reviews_csv(campaign: Campaign, *, include_drafts: bool = False) -> str:
    keys = [d["key"] for d in score_dimensions(campaign.rubric)]
    head = ["item", "artifact", "run", "task", "system", "reviewer", "assignment", "status", "source", "submitted_at"]
    out = io.StringIO()
    writer = CsvWriter(out)
    writer.writerow([*head, *keys, "confidence", *(f"{k}_justification" for k in keys), "step_tags"])
    for rec in review_records(campaign, include_drafts=include_drafts):
        scores = rec["scores"] or {}
        writer.writerow(
            [
                *(rec[h] if rec[h] is not None else "" for h in head),
                *((scores.get(k) or {}).get("score", "") for k in keys),
                rec["confidence"] if rec["confidence"] is not None else "",
                *((scores.get(k) or {}).get("justification", "") for k in keys),
                step_tags_text(rec["step_tags"]),
            ]
        )
    return out.getvalue()
