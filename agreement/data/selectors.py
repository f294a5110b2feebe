"""Build an `AgreementData` from a review campaign and the judge's judgments of its items.

Items are the campaign's items; an item's system is its research run's backbone. Human scores
come from SUBMITTED reviews only (drafts are an unfinished opinion); judge scores from SUCCEEDED
judgments of the same artifacts under one rubric version - the campaign's own by default, or
another one (MLR-Bench's imported judgments are under the end-to-end v1 rubric while a campaign
may use a later version). Criteria are the campaign rubric's score dimensions that the judged
rubric also has (matched by key, else by name). Everything that does not fit - a failed
judgment, a judge that re-judged an item, a score off the scale, an import fault - becomes a
`Fault` shown with the results, never a silent drop.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from typing import Any, NamedTuple

import numpy as np

from agreement.data.containers import AgreementData, Fault
from judge.models import Judgment, Rubric
from review.models import Campaign, Review


class _Item(NamedTuple):
    """What the analysis reads of a campaign item (CampaignItem.system is the run's backbone)."""

    pk: int
    target_id: int  # what the judge judged: the artifact, or the agent run of a trajectory item
    code: str
    slug: str
    system: str


# (display name, human key, judge key, scale) of one criterion both rubrics score.
Criterion = tuple[str, str, str, tuple[float, float]]


class CampaignDataError(ValueError):
    """The campaign cannot be analysed at all under the chosen rubric (no shared criterion)."""


def _target(campaign: Campaign) -> str:
    """The field of items and judgments that names what is judged: the run in a trajectory campaign."""
    return "run_id" if campaign.is_trajectory else "artifact_id"


def _score_dims(rubric: Rubric) -> list[dict[str, Any]]:
    return [d for d in rubric.dimensions if d.get("kind", "score") == "score"]


def rubric_choices(*, campaign: Campaign) -> list[Rubric]:
    """The campaign's rubric, then every other rubric version with succeeded judgments of its items."""
    target = _target(campaign)
    judged = (
        Rubric.objects.filter(
            **{f"judgments__{target}__in": campaign.items.values(target)},
            judgments__status=Judgment.Status.SUCCEEDED,
            judgments__experiment__isnull=True,
        )
        .exclude(pk=campaign.rubric_id)
        .distinct()
        .order_by("stage", "-version")
    )
    return [campaign.rubric, *judged]


def _criteria(campaign_rubric: Rubric, judged_rubric: Rubric) -> list[Criterion]:
    """(display name, human key, judge key, scale) for each shared score dimension."""
    judged = _score_dims(judged_rubric)
    by_key = {d["key"]: d for d in judged}
    by_name = {str(d.get("name", "")).lower(): d for d in judged}
    out = []
    for dim in _score_dims(campaign_rubric):
        other = by_key.get(dim["key"]) or by_name.get(str(dim.get("name", "")).lower())
        if other is not None:
            scale = (float(dim.get("min", 1)), float(dim.get("max", 10)))
            out.append((str(dim.get("name") or dim["key"]), dim["key"], other["key"], scale))
    return out


def _value(entry: Any, scale: tuple[float, float], where: str, faults: list[Fault]) -> float:
    score = entry.get("score") if isinstance(entry, dict) else entry
    if score is None:
        faults.append(Fault("missing_score", where, "no score: treated as missing"))
        return np.nan
    if isinstance(score, bool) or not isinstance(score, int | float) or not np.isfinite(score):
        faults.append(Fault("bad_value", where, f"{score!r} is not a number: treated as missing"))
        return np.nan
    if not scale[0] <= score <= scale[1]:
        faults.append(Fault("bad_value", where, f"{score} is outside {scale[0]:g}-{scale[1]:g}: treated as missing"))
        return np.nan
    return float(score)


class _HumanRows(NamedTuple):
    """One row per submitted review: the item's index, the reviewer, where it came from, its scores."""

    item: list[int]
    reviewer: list[str]
    where: list[str]
    values: list[list[float]]


def _shared_criteria(campaign: Campaign, judged_rubric: Rubric) -> list[Criterion]:
    """The criteria both rubrics score; none at all is an error, since nothing could be compared."""
    crits = _criteria(campaign.rubric, judged_rubric)
    if not crits:
        raise CampaignDataError(
            f"the campaign's rubric ({campaign.rubric}) and {judged_rubric} share no score dimension"
        )
    return crits


def _import_faults(campaign: Campaign) -> list[Fault]:
    """The faults the campaign's import recorded, listed first so that they show with the results."""
    return [
        Fault(f"import:{f.get('kind', '?')}", str(f.get("where", "")), str(f.get("detail", "")))
        for f in campaign.import_faults or []
    ]


def _items(campaign: Campaign, artifact_ids: set[int] | None) -> list[_Item]:
    """The campaign's items in id order (a gold set's only when `artifact_ids` is given); a trajectory
    campaign's system is the agent's model, a paper campaign's the research run's backbone."""
    campaign_items = campaign.items.order_by("id")
    if artifact_ids is not None:
        campaign_items = campaign_items.filter(artifact_id__in=artifact_ids)
    columns = (
        ("id", "run_id", "code", "run__task__slug", "run__agent__model")
        if campaign.is_trajectory
        else ("id", "artifact_id", "code", "artifact__research_run__task__slug", "artifact__research_run__backbone")
    )
    return [_Item(*row) for row in campaign_items.values_list(*columns)]


def _human_rows(
    campaign: Campaign,
    artifact_ids: set[int] | None,
    index: dict[int, int],
    labels: tuple[str, ...],
    crits: list[Criterion],
    faults: list[Fault],
) -> _HumanRows:
    """One row per submitted review, in slot order within an item (the import keeps the released
    file's order that way, so reviewer 1 vs 2 statistics match the file command). Rows as tuples,
    not model instances: a 1,000-item campaign has 3,000 reviews and 2,000 judgments, and building
    their model objects was most of the page's load time."""
    reviews = Review.objects.submitted_in(campaign)
    if artifact_ids is not None:
        reviews = reviews.filter(assignment__item__artifact_id__in=artifact_ids)
    reviews = reviews.order_by("assignment__item_id", "assignment__slot", "assignment_id").values_list(
        "assignment__item_id", "assignment__reviewer_id", "assignment__code", "scores"
    )
    rows = _HumanRows([], [], [], [])
    for item_id, reviewer_id, acode, scores in reviews:
        where = f"review {acode} of {labels[index[item_id]]}"
        rows.item.append(index[item_id])
        rows.reviewer.append(str(reviewer_id))
        rows.where.append(where)
        rows.values.append(
            [_value((scores or {}).get(hk), scale, f"{where}: {name}", faults) for name, hk, _, scale in crits]
        )
    return rows


def _latest_judgments(
    campaign: Campaign,
    judgments: Any,
    judged_rubric: Rubric,
    judge_models: tuple[str, ...],
    items: list[_Item],
    by_target: dict[int, int],
    labels: tuple[str, ...],
    faults: list[Fault],
) -> tuple[dict[tuple[int, str], dict[str, Any]], dict[str, set[str]]]:
    """The latest succeeded judgment's scores per (judged target, judge model), and each model's
    prompt hashes. A failed, pending or repeated judgment becomes a fault, never a silent drop."""
    target = _target(campaign)
    if judgments is None:
        judgments = Judgment.objects.filter(experiment__isnull=True)
    judgments = judgments.filter(**{f"{target}__in": [it.target_id for it in items]}, rubric=judged_rubric).order_by(
        target, "judge_model", "-created_at", "-id"
    )
    if judge_models:
        judgments = judgments.filter(judge_model__in=judge_models)
    latest: dict[tuple[int, str], dict[str, Any]] = {}
    hashes: dict[str, set[str]] = defaultdict(set)
    for target_id, model, status, error, scores, prompt_hash in judgments.values_list(
        target, "judge_model", "status", "error", "scores", "prompt_hash"
    ):
        label = labels[by_target[target_id]]
        if status != Judgment.Status.SUCCEEDED:
            if status in Judgment.UNSCORED:
                faults.append(Fault(f"{status}_judgment", label, f"{model}: {(error or '')[:200] or status}"))
            else:
                faults.append(Fault("pending_judgment", label, f"{model}: {status}, not counted"))
            continue
        key = (target_id, model)
        if key in latest:
            faults.append(Fault("repeated_judgment", label, f"{model} judged it again: the latest judgment is used"))
            continue
        latest[key] = scores or {}
        hashes[model].add(prompt_hash or "")
    return latest, hashes


def _judge_scores(
    latest: dict[tuple[int, str], dict[str, Any]],
    judges: tuple[str, ...],
    n_items: int,
    by_target: dict[int, int],
    labels: tuple[str, ...],
    crits: list[Criterion],
    faults: list[Fault],
) -> np.ndarray:
    """The (item, judge, criterion) score array; NaN where a judge did not score (at least one judge
    column, so that an unjudged campaign still has the shape the statistics expect)."""
    scores_array = np.full((n_items, max(len(judges), 1), len(crits)), np.nan)
    for (target_id, model), scores in latest.items():
        i, k = by_target[target_id], judges.index(model)
        where = f"{model} on {labels[i]}"
        scores_array[i, k] = [_value(scores.get(jk), scale, f"{where}: {name}", faults) for name, _, jk, scale in crits]
    return scores_array


def _fingerprint(human_item: np.ndarray, human_scores: np.ndarray, judge_scores: np.ndarray) -> str:
    """A hash of the numbers the analysis reads, so that a report names exactly what it was computed from."""
    fingerprint = hashlib.sha256()
    for arr in (human_item, human_scores, judge_scores):
        fingerprint.update(np.ascontiguousarray(arr).tobytes())
    return fingerprint.hexdigest()


def _meta(
    campaign: Campaign,
    judged_rubric: Rubric,
    judges: tuple[str, ...],
    hashes: dict[str, set[str]],
    crits: list[Criterion],
    items: list[_Item],
    fingerprint: str,
) -> dict[str, Any]:
    """Where the data came from, as the report prints it: rubric versions, judges, prompt hashes, scales."""
    return {
        "campaign": f"{campaign.name} ({campaign.code})",
        "rubric_version": (
            f"humans: {campaign.rubric} ({campaign.rubric.code}); judges: {judged_rubric} ({judged_rubric.code})"
        ),
        "judge_models": list(judges),
        "prompt_hashes": [
            f"{m}: {', '.join(sorted(h or 'not recorded (imported)' for h in hashes[m]))}" for m in judges
        ]
        or ["no judgment"],
        "scale": [list(scale) for *_, scale in crits],
        "criterion_keys": [hk for _, hk, _, _ in crits],
        "judge_criterion_keys": [jk for _, _, jk, _ in crits],
        "item_codes": [it.code for it in items],
        "sources_sha256": {f"campaign {campaign.code} scores (human rows, judge scores)": fingerprint},
    }


def campaign_agreement_data(
    *,
    campaign: Campaign,
    rubric: Rubric | None = None,
    judge_models: tuple[str, ...] = (),
    judgments: Any = None,
    artifact_ids: set[int] | None = None,
) -> AgreementData:
    """The neutral data of one campaign; `judge_models` restricts the judges (empty: all).

    The judge lab passes `judgments` (a judge experiment's, instead of the items' own) and
    `artifact_ids` (a gold set's items, of all the campaign's). Faults keep their order: the
    import's, then the reviews', then the judgments'.
    """
    judged_rubric = rubric or campaign.rubric
    crits = _shared_criteria(campaign, judged_rubric)
    faults = _import_faults(campaign)
    items = _items(campaign, artifact_ids)
    index = {item.pk: i for i, item in enumerate(items)}
    labels = tuple(f"{it.slug}/{it.system} ({it.code})" for it in items)
    humans = _human_rows(campaign, artifact_ids, index, labels, crits, faults)
    by_target = {it.target_id: index[it.pk] for it in items}
    latest, hashes = _latest_judgments(
        campaign, judgments, judged_rubric, judge_models, items, by_target, labels, faults
    )
    judges = tuple(sorted({m for _, m in latest}))
    if not judges:
        faults.append(Fault("no_judgment", str(judged_rubric), "no succeeded judgment of any campaign item"))
    judge_scores = _judge_scores(latest, judges, len(items), by_target, labels, crits, faults)
    human_item = np.asarray(humans.item, dtype=np.int64)
    human_scores = np.asarray(humans.values, dtype=float).reshape(len(humans.item), len(crits))
    return AgreementData(
        criteria=tuple(name for name, *_ in crits),
        items=labels,
        item_system=tuple(it.system for it in items),
        human_item=human_item,
        human_reviewer=np.asarray(humans.reviewer, dtype=str),
        human_scores=human_scores,
        human_where=tuple(humans.where),
        judges=judges or ("no judge",),
        judge_scores=judge_scores,
        judge_is_mean=False,
        meta=_meta(
            campaign, judged_rubric, judges, hashes, crits, items, _fingerprint(human_item, human_scores, judge_scores)
        ),
        faults=faults,
    )
