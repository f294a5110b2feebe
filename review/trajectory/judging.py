"""The judge's judgments of a trajectory campaign's runs, under the campaign's rubric: what the
control room's "Judge the trajectories" button and `manage.py judge_trajectories` ask for, so that
the agreement page can compare the judge with the reviewers on the same runs.

Each (run, judge model) pair is asked once: a pair with a succeeded judgment, or one still queued or
running, is not asked again; a pair whose last judgments all failed or were cut off is asked again.
The judgments themselves are judge.services.judgment_request's (queued, run by judge.jobs).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count

from judge.models import Judgment, Rubric
from judge.services import JudgeSpec, judges_resolve, judgment_request
from review.models import Campaign

PENDING = {Judgment.Status.QUEUED.value, Judgment.Status.RUNNING.value}  # plain strings: compared with values_list rows


@dataclass
class CampaignJudging:
    runs: int = 0
    queued: list[Judgment] = field(default_factory=list)
    judged: int = 0  # (run, judge) pairs with a succeeded judgment: not asked again
    pending: int = 0  # pairs with a judgment still queued or running: not asked twice
    retried: int = 0  # of the queued, pairs whose earlier judgments all failed or were cut off
    refused: list[tuple[str, str]] = field(default_factory=list)  # (item code, why judgment_request refused it)


def _refuse_campaign(campaign: Campaign) -> None:
    if not campaign.is_trajectory:
        raise ValidationError(
            f"{campaign} reviews {campaign.get_stage_display()} items, not agent trajectories: "
            "its items are judged from each artifact's judgments page"
        )
    if campaign.rubric.stage != Rubric.Stage.TRAJECTORY:
        raise ValidationError(f"{campaign}'s rubric {campaign.rubric} is not a trajectory rubric")


def campaign_judge_trajectories(
    *, campaign: Campaign, judge_models: Sequence[JudgeSpec], requested_by: Any = None
) -> CampaignJudging:
    """Queue a judgment of every run of the campaign per judge model not yet asked. ValidationError
    when nothing can be asked (not a trajectory campaign, no item, no usable judge); an item the
    judge service refuses is reported in `refused` and the others are still queued."""
    _refuse_campaign(campaign)
    judges = judges_resolve(judge_models)
    if not judges:
        raise ValidationError("choose at least one judge model")
    result = CampaignJudging()
    with transaction.atomic():
        # Two admins pressing the button at once: the second waits and finds the first's judgments pending.
        Campaign.objects.select_for_update().filter(pk=campaign.pk).first()
        items = list(campaign.items.select_related("run").order_by("id"))
        if not items:
            raise ValidationError(f"{campaign} holds no trajectory item yet: add runs first")
        result.runs = len(items)
        states: dict[tuple[int, str], set[str]] = defaultdict(set)
        for run_id, model, status in Judgment.objects.filter(
            run_id__in=[i.run_id for i in items], rubric=campaign.rubric, experiment__isnull=True
        ).values_list("run_id", "judge_model", "status"):
            states[run_id, model].add(status)
        for item in items:
            wanted, retries = [], 0
            for endpoint, model in judges:
                seen = states.get((item.run_id, model), set())
                if Judgment.Status.SUCCEEDED.value in seen:
                    result.judged += 1
                elif seen & PENDING:
                    result.pending += 1
                else:
                    retries += bool(seen)
                    wanted.append((endpoint, model))
            if not wanted:
                continue
            try:
                result.queued += judgment_request(
                    run=item.run,
                    rubric=campaign.rubric,
                    judge_models=wanted,
                    with_supplementary=False,
                    requested_by=requested_by,
                )
            except ValidationError as exc:
                result.refused.append((item.code, " ".join(exc.messages)))
            else:
                result.retried += retries
    return result


def campaign_judgment_summary(campaign: Campaign) -> dict[str, Any]:
    """What the control room shows of the judge's work on the campaign's runs: per judge model the
    count of each status, and the failed or cut-off judgments (newest first) with their error."""
    if not campaign.is_trajectory:
        return {}
    judgments = Judgment.objects.filter(
        run__campaign_items__campaign=campaign, rubric=campaign.rubric, experiment__isnull=True
    )
    per_judge: dict[str, dict[str, int]] = defaultdict(lambda: {"succeeded": 0, "pending": 0, "unscored": 0})
    for row in judgments.values("judge_model", "status").annotate(n=Count("id")).order_by("judge_model"):
        status = row["status"]
        column = "succeeded" if status == Judgment.Status.SUCCEEDED else "pending" if status in PENDING else "unscored"
        per_judge[row["judge_model"]][column] += row["n"]
    failures = list(
        judgments.filter(status__in=Judgment.UNSCORED).select_related("run").order_by("-created_at", "-id")[:20]
    )
    codes = dict(campaign.items.filter(run__isnull=False).values_list("run_id", "code"))
    for judgment in failures:
        judgment.item_code = codes.get(judgment.run_id, "")
    return {
        "per_judge": [{"judge": judge, **counts} for judge, counts in per_judge.items()],
        "failures": failures,
        "failed": sum(counts["unscored"] for counts in per_judge.values()),
    }
