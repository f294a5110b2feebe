"""What the agreement page and its downloads read: a campaign's analysis, cached per (campaign
state, settings) so that the page and its three downloads compute it once, and the disagreement tags.

The campaign state is a fingerprint of everything the analysis reads, taken with a few aggregate
queries (counts, id sums, latest timestamps; no rows, no score JSON): the campaign's rubric,
status and import faults, its items, its submitted reviews (slots, last save) and the judgments
of its items (per status, finish time). A new review, judgment or status change gives a new key,
so a cached result is not served stale (agreement/cache.py holds the cache itself).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from django.db.models import Count, Max, Sum

from agreement.cache import _get, _set, computed
from agreement.data.pairing import pair
from agreement.data.selectors import campaign_agreement_data
from agreement.report.charts import chart_payload
from agreement.stats.suite import _nanmean, analyse
from judge.models import Judgment, Rubric
from review.models import Campaign, DisagreementTag, Review

CAUSES = dict(DisagreementTag.Cause.choices)


@dataclass
class Analysis:
    """One cached analysis: the result, its charts, the workbench's per-item table, progress."""

    key: str
    result: dict[str, Any]
    charts: list[dict[str, Any]]
    items: dict[str, Any]
    progress: dict[str, Any]
    hit: bool = field(default=False, compare=False)


def campaign_state(*, campaign: Campaign, rubric: Rubric) -> tuple[str, dict[str, Any]]:
    """(fingerprint, progress) of what the analysis of `campaign` under `rubric` reads.

    Aggregates computed by the database (counts, id sums, latest timestamps), not rows: a
    cached page then costs a handful of small queries. Every way the app changes what the
    analysis reads moves one of them: a new or removed row changes a count and an id sum, a
    re-saved review its `updated_at` (drafts save with it, `auto_now` otherwise), a judgment
    that finishes its status counts and `finished_at`, a moved review its slot or item sum.
    """
    reviews = Review.objects.filter(assignment__campaign=campaign, status=Review.Status.SUBMITTED)
    items = campaign.items.aggregate(n=Count("id"), ids=Sum("id"), artifacts=Sum("artifact_id"))
    r = reviews.aggregate(
        n=Count("id"), ids=Sum("id"), latest=Max("updated_at"), slots=Sum("assignment__slot"),
        items=Sum("assignment__item_id"), reviewers=Sum("assignment__reviewer_id"),
    )  # fmt: skip
    # What the judge judged: the items' artifacts, or the agent runs of a trajectory campaign.
    target = "run" if campaign.is_trajectory else "artifact"
    judged = Judgment.objects.filter(
        **{f"{target}__campaign_items__campaign": campaign}, rubric=rubric, experiment__isnull=True
    )
    j = sorted(
        judged.values_list("status").annotate(
            n=Count("id"), ids=Sum("id"), done=Max("finished_at"), made=Max("created_at"), arts=Sum(f"{target}_id")
        )
    )
    k = campaign.reviewers_per_item
    fully = reviews.values("assignment__item_id").annotate(c=Count("id")).filter(c__gte=k).count()
    items_judged = judged.filter(status=Judgment.Status.SUCCEEDED).values(f"{target}_id").distinct().count()
    status = dict((row[0], row[1]) for row in j)
    state = [campaign.pk, campaign.rubric_id, rubric.pk, campaign.status, campaign.import_faults, items, r, j]
    progress = {
        "open": campaign.status != Campaign.Status.CLOSED,
        "items": items["n"],
        "reviews_submitted": r["n"],
        "reviews_expected": items["n"] * k,
        "items_fully_reviewed": fully,
        "items_judged": items_judged,
        "judgments_pending": status.get(Judgment.Status.QUEUED, 0) + status.get(Judgment.Status.RUNNING, 0),
    }
    return hashlib.sha256(json.dumps(state, default=str, sort_keys=True).encode()).hexdigest(), progress


def tags_state(*, campaign: Campaign) -> str:
    rows = list(DisagreementTag.objects.filter(campaign=campaign).order_by("id").values_list("id", "updated_at"))
    return hashlib.sha256(repr(rows).encode()).hexdigest()[:16]


def settings_key(settings: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _item_table(data: Any, codes: list[str]) -> dict[str, Any]:
    """Per item and criterion: human scores' mean and count, each judge's score (workbench)."""
    n_items, n_crit = len(data.items), len(data.criteria)
    sums = np.zeros((n_items, n_crit))
    counts = np.zeros((n_items, n_crit))
    ok = ~np.isnan(data.human_scores)
    np.add.at(sums, data.human_item, np.where(ok, data.human_scores, 0.0))
    np.add.at(counts, data.human_item, ok.astype(float))
    with np.errstate(invalid="ignore", divide="ignore"):
        human_mean = sums / counts
    return {
        "codes": codes,
        "labels": list(data.items),
        "systems": list(data.item_system),
        "criteria": list(data.criteria),
        "criterion_keys": list(data.meta.get("criterion_keys", [])),
        "judges": list(data.judges),
        "human_mean": human_mean,
        "human_count": counts.astype(int),
        "judge": data.judge_scores,  # (items, judges, criteria)
        "judges_mean": _nanmean(data.judge_scores, axis=1),
    }


def campaign_analysis(*, campaign: Campaign, rubric: Rubric, settings: dict[str, Any]) -> Analysis:
    """The analysis of `campaign` under `settings`, from the cache when the state is unchanged."""
    state, progress = campaign_state(campaign=campaign, rubric=rubric)
    key = f"analysis:{campaign.code}:{state[:24]}:{settings_key(settings)}"
    cached = _get(key)
    if cached is not None:
        cached.hit = True
        cached.progress = progress
        return cached
    computed["analysis"] += 1
    data = campaign_agreement_data(campaign=campaign, rubric=rubric)
    codes = data.meta.pop("item_codes", [])
    paired = pair(data, settings["pairing"])
    result = analyse(
        paired,
        n_boot=settings["bootstrap"],
        seed=settings["seed"],
        margin=settings["margin"],
        alpha=settings["alpha"],
        epsilon=settings["epsilon"],
        threshold=settings["threshold"],
        min_items=settings["min_items"],
    )
    analysis = Analysis(key, result, chart_payload(result, paired), _item_table(data, codes), progress)
    _set(key, analysis)
    return analysis


def cached_analysis(*, campaign: Campaign, rubric: Rubric, settings: dict[str, Any]) -> Analysis | None:
    """The analysis of `campaign`'s current state under `settings` if one is cached; never computes."""
    state, progress = campaign_state(campaign=campaign, rubric=rubric)
    cached = _get(f"analysis:{campaign.code}:{state[:24]}:{settings_key(settings)}")
    if cached is not None:
        cached.progress = progress
    return cached


def rendered(analysis: Analysis, fmt: str, tags_key: str, render: Callable[[], str]) -> tuple[bytes, bool]:
    """A download of `analysis` in `fmt` (including the tags as of `tags_key`), rendered once.
    Kept as UTF-8 bytes: a cached HTML report is ~5 MB, and bytes skip re-encoding per request."""
    key = f"{analysis.key}:{fmt}:{tags_key}"
    body = _get(key)
    if body is not None:
        return body, True
    computed[f"render:{fmt}"] += 1
    body = render().encode("utf-8")
    _set(key, body)
    return body, False


def tags_export(*, campaign: Campaign) -> list[dict[str, Any]]:
    names = {d["key"]: str(d.get("name") or d["key"]) for d in campaign.rubric.dimensions}
    return [
        {
            "item": t.item.code,
            "artifact": str(t.item.artifact.code) if t.item.artifact_id else "",
            "run": str(t.item.run.code) if t.item.run_id else "",
            "criterion": names.get(t.criterion, t.criterion),
            "criterion_key": t.criterion,
            "cause": t.cause,
            "cause_label": CAUSES.get(t.cause, t.cause),
            "note": t.note,
            "tagged_by": t.tagged_by.get_username() if t.tagged_by else "",
            "updated_at": t.updated_at.isoformat(timespec="seconds"),
        }
        for t in DisagreementTag.objects.filter(campaign=campaign)
        .select_related("item__artifact", "item__run", "tagged_by")
        .order_by("criterion", "item_id")
    ]


def tags_summary(*, campaign: Campaign, export: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    rows = export if export is not None else tags_export(campaign=campaign)
    by: dict[str, Counter] = {}
    for r in rows:
        by.setdefault(r["criterion"], Counter())[r["cause"]] += 1
    return {
        "total": len(rows),
        "causes": CAUSES,
        "by_criterion": {c: dict(n) for c, n in by.items()},
        "by_cause": dict(Counter(r["cause"] for r in rows)),
    }
