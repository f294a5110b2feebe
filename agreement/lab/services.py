"""The judge lab's agreement side: gold sets from campaigns, a judge experiment against the humans,
and two experiments compared - every statistic of the suite, its change, a paired bootstrap CI of
the change, and the pass/fail gate an admin can require before a rubric version becomes the default.

- A gold set is the campaign items with at least one submitted review (the humans' scores are the
  campaign's submitted reviews, read when the analysis runs; the item list is pinned).
- An experiment's judge scores are its first run (repeat 0) of each item; its other runs feed the
  stability probe (probes.py).
- A comparison pairs the humans with each experiment under the strict policy, keeps the items both
  experiments scored, and resamples those items with replacement (the same draws for both
  configurations): each resample's change of each statistic is candidate minus baseline, and the
  interval is the 2.5 and 97.5 percentiles of those changes.
- The gate, per criterion, on one statistic with a margin: *equivalence* passes when the change's
  CI lies inside (-margin, +margin); *non-inferiority* when the CI's bound on the worse side does
  not pass the margin. The comparison passes when every criterion passes.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import time
from dataclasses import replace
from typing import Any

import numpy as np
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, Max, Sum
from django.utils import timezone

from agreement.data.containers import AgreementData, Paired
from agreement.data.pairing import _all_pair_diffs, pair
from agreement.data.selectors import campaign_agreement_data
from agreement.stats.suite import analyse
from judge.experiments import gold_set_create
from judge.models import GoldSet, JudgeExperiment
from judge.rubrics import GATE_STATISTICS
from review.models import Campaign, JudgeComparison, Review

log = logging.getLogger(__name__)
MAX_COMPARISON_BOOTSTRAP = 2000
MIN_VALID_SHARE = 0.8  # a change's CI needs the statistic defined in 80% of the resamples


def gold_set_from_campaign(*, campaign: Campaign, name: str, user: Any = None) -> GoldSet:
    """Pin the campaign's items that have at least one submitted review."""
    if campaign.is_trajectory:  # gold sets pin artifacts; judge experiments on runs are not built
        raise ValidationError(f"{campaign} reviews trajectories: the judge lab's gold sets hold artifacts only")
    ids = sorted(
        set(Review.objects.submitted_in(campaign).values_list("assignment__item__artifact_id", flat=True).distinct())
    )
    if not ids:
        raise ValidationError(f"{campaign} has no item with a submitted review")
    return gold_set_create(
        name=name,
        stage=campaign.stage,
        artifact_ids=ids,
        reference=str(campaign.code),
        reference_label=f"campaign {campaign.name} ({campaign.code})",
        created_by=user,
    )


def gold_campaign(gold: GoldSet) -> Campaign:
    campaign = Campaign.objects.select_related("rubric").filter(code=gold.reference).first() if gold.reference else None
    if campaign is None:
        raise ValidationError(f"the gold set {gold} names no campaign with its human reviews ({gold.reference!r})")
    return campaign


def experiment_data(experiment: JudgeExperiment, *, repeat: int | None = 0) -> AgreementData:
    """The humans of the gold set's campaign and the experiment's judge scores (repeat 0 by default)."""
    gold = experiment.gold_set
    judgments = experiment.judgments.all()
    if repeat is not None:
        judgments = judgments.filter(repeat=repeat)
    data = campaign_agreement_data(
        campaign=gold_campaign(gold),
        rubric=experiment.config.rubric,
        judgments=judgments,
        artifact_ids=set(gold.artifacts.values_list("pk", flat=True)),
    )
    data.meta["experiment"] = f"{experiment} ({experiment.code})"
    data.meta["judge_config"] = describe_config(experiment)
    return data


def describe_config(experiment: JudgeExperiment) -> dict[str, Any]:
    c = experiment.config
    return {
        "experiment": str(experiment.code),
        "config": str(c.code),
        "name": c.name,
        "judge_model": c.judge_model,
        "rubric": f"{c.rubric} ({c.rubric.code})",
        "rubric_code": str(c.rubric.code),
        "temperature": c.temperature,
        "max_tokens": c.max_tokens,
        "with_supplementary": c.with_supplementary,
        "prompt_note": c.prompt_note,
        "repeats": experiment.repeats,
    }


def subset(p: Paired, idx: np.ndarray, crit: list[int] | None = None) -> Paired:
    """The paired data restricted to (or resampled as) items `idx` and criteria `crit`."""
    crit = list(range(len(p.criteria))) if crit is None else crit
    H = p.H[idx][:, :, crit]
    return replace(
        p,
        criteria=tuple(p.criteria[c] for c in crit),
        items=tuple(p.items[i] for i in idx),
        item_system=tuple(p.item_system[i] for i in idx),
        H=H,
        J=p.J[idx][:, :, crit],
        hh_diffs=_all_pair_diffs(H),
        R=None if p.R is None else p.R[idx],
        items_total=len(idx),
        meta={**p.meta, "scale": _scale_subset(p.meta.get("scale"), crit)},
    )


def _scale_subset(scale: Any, crit: list[int]) -> Any:
    if scale and isinstance(scale[0], list | tuple):
        return [scale[c] for c in crit]
    return scale


def _flat(result: dict[str, Any]) -> dict[tuple[str, str], float]:
    """(criterion, statistic) -> estimate of the single judge view (a config has one judge model)."""
    view = result["views"][-1]
    return {
        (crit, stat): float(rec["estimate"]) if isinstance(rec.get("estimate"), int | float) else math.nan
        for crit, block in result["criteria"].items()
        for stat, rec in block["views"][view].items()
    }


def _aligned(a: Paired, b: Paired) -> tuple[Paired, Paired, dict[str, Any]]:
    """Both restricted to the items and criteria they share (same campaign items: same labels)."""
    common = [x for x in a.items if x in set(b.items)]
    ia = np.array([a.items.index(x) for x in common], dtype=int)
    ib = np.array([b.items.index(x) for x in common], dtype=int)
    crits = [c for c in a.criteria if c in b.criteria]
    ca = [a.criteria.index(c) for c in crits]
    cb = [b.criteria.index(c) for c in crits]
    left = {
        "baseline_only_items": len(a.items) - len(common),
        "candidate_only_items": len(b.items) - len(common),
        "criteria_not_shared": sorted(set(a.criteria) ^ set(b.criteria)),
    }
    return subset(a, ia, ca), subset(b, ib, cb), left


def gate_check(
    rows: list[dict[str, Any]], criteria: list[str], *, statistic: str, margin: float, mode: str
) -> dict[str, Any]:
    """Per criterion pass/fail of the change of `statistic` (see the module docstring)."""
    direction = GATE_STATISTICS.get(statistic, ("lower", statistic))[0]
    by = {(r["criterion"], r["statistic"]): r for r in rows}
    cells = []
    for crit in criteria:
        r = by.get((crit, statistic))
        lo, hi = (r["ci_low"], r["ci_high"]) if r else (math.nan, math.nan)
        if r is None or math.isnan(lo) or math.isnan(hi):
            cells.append({"criterion": crit, "passed": False, "reason": "the change's CI is undefined"})
            continue
        if mode == "equivalence":
            ok = -margin < lo and hi < margin
            reason = f"CI [{lo:.3f}, {hi:.3f}] {'inside' if ok else 'not inside'} (-{margin:g}, +{margin:g})"
        elif direction == "lower":
            ok = hi < margin
            reason = f"upper CI bound {hi:.3f} {'<' if ok else '>='} margin {margin:g} (lower is better)"
        else:
            ok = lo > -margin
            reason = f"lower CI bound {lo:.3f} {'>' if ok else '<='} -{margin:g} (higher is better)"
        cells.append({"criterion": crit, "passed": bool(ok), "reason": reason, "change": r["change"]})
    return {
        "statistic": statistic,
        "direction": direction,
        "margin": margin,
        "mode": mode,
        "criteria": cells,
        "passed": bool(cells) and all(c["passed"] for c in cells),
    }


def compare(baseline: Paired, candidate: Paired, *, n_boot: int, seed: int, gate: dict[str, Any]) -> dict[str, Any]:
    """Every statistic of both, its change and its paired-bootstrap CI; then the gate."""
    t0 = time.perf_counter()
    a, b, left = _aligned(baseline, candidate)
    n = len(a.items)
    if n < 3:
        raise ValidationError(
            f"the two experiments share {n} item(s) with two or more human reviews: at least 3 needed"
        )
    ea, eb = _flat(analyse(a)), _flat(analyse(b))
    keys = sorted(set(ea) & set(eb))
    rng = np.random.default_rng(seed)
    changes = np.full((n_boot, len(keys)), np.nan)
    for k in range(n_boot):
        idx = rng.integers(0, n, size=n)
        fa, fb = _flat(analyse(subset(a, idx))), _flat(analyse(subset(b, idx)))
        changes[k] = [fb.get(key, math.nan) - fa.get(key, math.nan) for key in keys]
    rows = []
    for j, (crit, stat) in enumerate(keys):
        col = changes[:, j]
        valid = col[np.isfinite(col)]
        ok = n_boot > 0 and len(valid) >= MIN_VALID_SHARE * n_boot
        lo, hi = np.percentile(valid, [2.5, 97.5]) if ok else (math.nan, math.nan)
        rows.append({
            "criterion": crit,
            "statistic": stat,
            "baseline": ea[(crit, stat)],
            "candidate": eb[(crit, stat)],
            "change": eb[(crit, stat)] - ea[(crit, stat)],
            "ci_low": float(lo),
            "ci_high": float(hi),
            "resamples_defined": int(len(valid)),
        })  # fmt: skip
    criteria = list(a.criteria)
    return {
        "items": n,
        "left_out": left,
        "criteria": criteria,
        "statistics": rows,
        "gate": gate_check(rows, criteria, **gate),
        "settings": {"bootstrap_resamples": n_boot, "seed": seed, "pairing": "strict", "judge_scores": "repeat 0"},
        "seconds": time.perf_counter() - t0,
    }


def comparison_create(
    *,
    baseline: JudgeExperiment,
    candidate: JudgeExperiment,
    user: Any,
    bootstrap: int = 200,
    seed: int = 0,
    gate_statistic: str = "mad_judge_human_mean",
    gate_margin: float = 0.5,
    gate_mode: str = "equivalence",
) -> JudgeComparison:
    from functools import partial

    import django_rq

    if baseline.pk == candidate.pk:
        raise ValidationError("compare two different experiments")
    if baseline.gold_set_id != candidate.gold_set_id:
        raise ValidationError("both experiments must run on the same gold set")
    if JudgeExperiment.Kind.PAIRWISE in (baseline.kind, candidate.kind):
        raise ValidationError("regression compares rating experiments, not pairwise ones")
    if not 0 <= bootstrap <= MAX_COMPARISON_BOOTSTRAP:
        raise ValidationError(f"bootstrap resamples: 0 to {MAX_COMPARISON_BOOTSTRAP}")
    if gate_statistic not in GATE_STATISTICS:
        raise ValidationError(f"the gate can use {', '.join(GATE_STATISTICS)}")
    with transaction.atomic():
        comparison = JudgeComparison.objects.create(
            baseline=baseline, candidate=candidate, bootstrap=bootstrap, seed=seed, gate_statistic=gate_statistic,
            gate_margin=gate_margin, gate_mode=gate_mode, created_by=user,
        )  # fmt: skip
        transaction.on_commit(
            partial(django_rq.get_queue("default").enqueue, "agreement.jobs.run_comparison", comparison.pk)
        )
    return comparison


def comparison_execute(*, comparison: JudgeComparison) -> JudgeComparison:
    claimed = JudgeComparison.objects.filter(pk=comparison.pk, status=JudgeComparison.Status.QUEUED).update(
        status=JudgeComparison.Status.RUNNING
    )
    comparison.refresh_from_db()
    if not claimed:
        return comparison
    try:
        pa = pair(experiment_data(comparison.baseline), "strict")
        pb = pair(experiment_data(comparison.candidate), "strict")
        result = compare(
            pa,
            pb,
            n_boot=comparison.bootstrap,
            seed=comparison.seed,
            gate={
                "statistic": comparison.gate_statistic,
                "margin": comparison.gate_margin,
                "mode": comparison.gate_mode,
            },
        )
        result["baseline"] = describe_config(comparison.baseline)
        result["candidate"] = describe_config(comparison.candidate)
        result["gold_set"] = {"name": comparison.baseline.gold_set.name, "code": str(comparison.baseline.gold_set.code)}
        result["faults"] = [f.as_dict() for f in (*pa.faults, *pb.faults)][:200]
        comparison.result = _clean(result)
        comparison.status = JudgeComparison.Status.FINISHED
    except ValidationError as exc:
        comparison.status, comparison.error = JudgeComparison.Status.FAILED, " ".join(exc.messages)
    except Exception as exc:  # a bug ends as a visible failure, not a row stuck in running
        log.exception("comparison %s failed", comparison.code)
        comparison.status, comparison.error = (
            JudgeComparison.Status.FAILED,
            f"internal error: {type(exc).__name__}: {exc}",
        )
    comparison.finished_at = timezone.now()
    comparison.save()
    return comparison


def _clean(obj: Any) -> Any:
    from agreement.report.exports import clean_json

    return clean_json(obj)


def gate_evidence(comparison: JudgeComparison) -> dict[str, Any]:
    """What the judge layer records when a comparison's candidate rubric becomes the default."""
    gate = comparison.result.get("gate") or {}
    return {
        "comparison": str(comparison.code),
        "candidate_rubric": comparison.result.get("candidate", {}).get("rubric_code"),
        "baseline_rubric": comparison.result.get("baseline", {}).get("rubric_code"),
        "statistic": gate.get("statistic"),
        "margin": gate.get("margin"),
        "mode": gate.get("mode"),
        "passed": gate.get("passed") is True and comparison.status == JudgeComparison.Status.FINISHED,
        "criteria": gate.get("criteria", []),
    }


def _lengths(data: AgreementData, p: Paired, campaign: Campaign) -> np.ndarray:
    """Words of each paired item's text (the length probe's x)."""
    from review.models import CampaignItem

    code_of = dict(zip(data.items, data.meta.get("item_codes", []), strict=False))
    words = {
        code: len(text.split())
        for code, text in CampaignItem.objects.filter(campaign=campaign, code__in=list(code_of.values())).values_list(
            "code", "artifact__content"
        )
    }
    return np.array([float(words.get(code_of.get(label, ""), np.nan)) for label in p.items], dtype=float)


def experiment_report_key(experiment: JudgeExperiment, *, seed: int = 0) -> str:
    """The fingerprint of what the experiment's probes read: its judgments, its gold set's reviews."""
    from judge.experiments import experiment_summary

    try:
        reviews = Review.objects.filter(
            assignment__campaign__code=experiment.gold_set.reference, status=Review.Status.SUBMITTED
        ).aggregate(n=Count("id"), ids=Sum("id"), latest=Max("updated_at"))
    except ValidationError:  # no campaign code: the report says so (gold_campaign)
        reviews = {}
    done = experiment.judgments.aggregate(done=Max("finished_at"), ids=Sum("id"))
    state = [str(experiment.code), experiment.status, experiment_summary(experiment), reviews, done, seed]
    return "lab_experiment:" + hashlib.sha256(json.dumps(state, default=str).encode()).hexdigest()[:24]


def experiment_report(experiment: JudgeExperiment, *, seed: int = 0) -> dict[str, Any]:
    """Every probe that applies to the experiment, as it stands (cached while its data is unchanged)."""
    from agreement.cache import _get, _set, computed

    key = experiment_report_key(experiment, seed=seed)
    cached = _get(key)
    if cached is not None:
        return cached
    computed["lab_experiment"] += 1
    report = experiment_report_compute(experiment, seed=seed)
    _set(key, report)  # NaN kept: the HTML tables show "-"; the JSON download cleans it to null
    return report


def experiment_report_compute(experiment: JudgeExperiment, *, seed: int = 0) -> dict[str, Any]:
    """Every probe that applies to the experiment, computed now (seconds: bootstrap intervals)."""
    from agreement.lab import probes
    from judge.experiments import experiment_summary

    gold = experiment.gold_set
    report: dict[str, Any] = {
        "experiment": describe_config(experiment),
        "status": experiment.status,
        "judgments": experiment_summary(experiment),
    }
    if experiment.kind == JudgeExperiment.Kind.PAIRWISE:
        report["position"] = probes.position(experiment)
    else:
        report["stability"] = probes.stability(experiment, seed=seed)
        try:
            campaign = gold_campaign(gold)
            data = experiment_data(experiment)
            p = pair(data, "strict")
            report["leniency"] = probes.leniency(p, seed=seed)
            report["length"] = probes.length(p, _lengths(data, p, campaign), seed=seed)
            report["self_preference"] = probes.self_preference(p, experiment.config.judge_model, seed=seed)
            report["items_with_humans"] = len(p.items)
            report["faults"] = [f.as_dict() for f in p.faults][:200]
        except ValidationError as exc:
            report["humans_note"] = " ".join(exc.messages)
    return report
