"""The disagreement workbench (admins only): per criterion, the items where the judge and the
reviewers' mean are furthest apart; each item side by side with the judge's justification and
the reviewers' scores and comments; the admin's diagnoses of the cause
(DisagreementTag) are read with the report (agreement/report/selectors.py).
"""

from __future__ import annotations

import math
from typing import Any

from agreement.report.selectors import Analysis
from judge.models import Judgment, Rubric
from review.models import CampaignItem, Review


def disagreement_rows(analysis: Analysis, criterion: int, view: str) -> list[dict[str, Any]]:
    """Items with a human mean and a judge score on `criterion`, largest |judge - human mean| first."""
    t = analysis.items
    if view == "judges_mean" or view not in [f"judge:{j}" for j in t["judges"]]:
        judge = t["judges_mean"][:, criterion]
    else:
        judge = t["judge"][:, t["judges"].index(view[6:]), criterion]
    rows = []
    for i, code in enumerate(t["codes"]):
        hm, jv = float(t["human_mean"][i, criterion]), float(judge[i])
        if math.isnan(hm) or math.isnan(jv):
            continue
        rows.append(
            {
                "code": code,
                "label": t["labels"][i],
                "system": t["systems"][i],
                "human_mean": hm,
                "reviews": int(t["human_count"][i, criterion]),
                "judge": jv,
                "difference": jv - hm,
                "gap": abs(jv - hm),
            }
        )
    rows.sort(key=lambda r: (-r["gap"], r["label"]))
    return rows


def item_evidence(*, item: CampaignItem, rubric: Rubric, human_key: str, judge_key: str) -> dict[str, Any]:
    """The judge's and the reviewers' scores and words on one item and criterion."""
    judgments = []
    # The run's judgments for a trajectory item (artifact=None would match every run judgment).
    target = {"run_id": item.run_id} if item.run_id else {"artifact_id": item.artifact_id}
    judged = Judgment.objects.filter(**target, rubric=rubric, experiment__isnull=True)
    for j in judged.order_by("judge_model", "-created_at"):
        entry = (j.scores or {}).get(judge_key)
        judgments.append(
            {
                "model": j.judge_model,
                "status": j.get_status_display(),
                "score": entry.get("score") if isinstance(entry, dict) else entry,
                "justification": entry.get("justification", "") if isinstance(entry, dict) else "",
                "error": j.error,
            }
        )
    reviews = []
    for r in (
        Review.objects.filter(assignment__item=item, status=Review.Status.SUBMITTED)
        .select_related("assignment__reviewer")
        .order_by("assignment__slot", "id")
    ):
        entry = (r.scores or {}).get(human_key)
        reviews.append(
            {
                "reviewer": r.assignment.reviewer.get_username(),
                "slot": r.assignment.slot,
                "score": entry.get("score") if isinstance(entry, dict) else None,
                "justification": entry.get("justification", "") if isinstance(entry, dict) else "",
                "confidence": r.confidence,
            }
        )
    return {"judgments": judgments, "reviews": reviews}


# END
