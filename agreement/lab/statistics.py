"""The judge lab's expensive statistics, each as (key, task): the key fingerprints the data the
statistics read (counts, id sums, latest timestamps of its rows, plus the parameters), the task is
what the job runs to compute them (cache.cached_or_queued). Pages read the result from the
agreement cache; a change of the data gives a new key and so a new computation.

The pages, and what they read:
- judges per stage: every stepwise judgment of the stage (judge vs judge, self-preference);
- hallucination: the human labels and the judges' hallucination-audit and experiment judgments;
- fabrication: the faked-results labels and the stored audits of their papers;
- an experiment's probes: its judgments and its gold set's reviews (lab.experiment_report_key);
- the lab report: all of these, for every finished experiment, and the comparisons.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.db.models import Count, IntegerField, Max, Sum
from django.db.models.fields.json import KT
from django.db.models.functions import Cast
from django.template.loader import render_to_string

from agreement.lab import context
from agreement.lab import judge_pair as jp
from agreement.lab.flags import fabrication_comparison, hallucination_comparison
from agreement.lab.probes import self_preference_judges
from agreement.lab.services import experiment_report, experiment_report_compute, experiment_report_key
from benchmark.models import Artifact
from benchmark.research.fabrication import AUDIT_VERSION
from judge.leaderboard import default_rubric, stepwise_matrix
from judge.models import JudgeExperiment, Judgment
from review.models import HallucinationLabel, JudgeComparison

TASKS = __name__  # cache.statistics_compute runs only functions of this module


def _digest(state: Any) -> str:
    return hashlib.sha256(json.dumps(state, default=str, sort_keys=True).encode()).hexdigest()[:24]


# --- judge vs judge on the stepwise data ------------------------------------------------------


def judges_key(*, stage: str) -> str:
    rubric = default_rubric(stage)
    state = jp._state(stage, rubric) if rubric is not None else "none"
    return f"lab:judges:{stage}:{rubric.pk if rubric else 0}:{state}"


def judges_compute(*, stage: str) -> dict[str, Any]:
    """The page's two analyses, judge A vs judge B and the judges' self-preference, with their HTML
    (rendered here once from templates/agreement/lab/: a cached page then costs a read, not tens of
    milliseconds of tables)."""
    try:
        pair = jp.judge_pair_analysis(stage=stage)
    except jp.JudgePairError as exc:
        return {"pair": {"error": str(exc)}}
    self_preference = self_preference_judges(stepwise_matrix(stage, default_rubric(stage)))
    return {
        "pair": pair,
        "self_preference": self_preference,
        "html": render_to_string("agreement/lab/_two_rater.html", {"pair": context.two_rater(pair)}),
        "self_preference_html": render_to_string(
            "agreement/lab/_self_preference.html",
            {"self_preference": context.self_preference_judges(self_preference)},
        ),
    }


# --- hallucination labels and the fabrication audit --------------------------------------------


def _labels_state(labels: Any) -> dict[str, Any]:
    return labels.aggregate(n=Count("id"), ids=Sum("id"), arts=Sum("artifact_id"), at=Max("imported_at"))


def hallucination_key() -> str:
    judged = Judgment.objects.filter(rubric__stage__in=("hallucination", "experiment"), experiment__isnull=True)
    j = sorted(
        judged.values_list("status").annotate(
            n=Count("id"), ids=Sum("id"), done=Max("finished_at"), made=Max("created_at")
        )
    )
    return "lab:hallucination:" + _digest([_labels_state(HallucinationLabel.objects.all()), j])


def hallucination_compute() -> dict[str, Any]:
    return hallucination_comparison()


def fabrication_key(*, min_flags: int) -> str:
    labels = HallucinationLabel.objects.filter(kind=HallucinationLabel.Kind.FAKED_RESULTS, artifact__isnull=False)
    audits = Artifact.objects.filter(pk__in=labels.values("artifact_id")).aggregate(
        audited=Max(KT("data__fabrication_audit__audited_at")),
        versions=Count(KT("data__fabrication_audit__version")),
        claims=Sum(Cast(KT("data__fabrication_audit__claims"), IntegerField())),
        flagged=Sum(Cast(KT("data__fabrication_audit__flagged"), IntegerField())),
    )
    released = Artifact.objects.filter(stage=Artifact.Stage.PAPER).aggregate(n=Count("id"), ids=Sum("id"))
    state = [_labels_state(labels), audits, released, AUDIT_VERSION]
    return f"lab:fabrication:{min_flags}:{_digest(state)}"


def fabrication_compute(*, min_flags: int) -> dict[str, Any]:
    return fabrication_comparison(min_flags=min_flags)


# --- an experiment's probes and the whole lab report -------------------------------------------


def experiment_key(*, experiment: JudgeExperiment) -> str:
    return experiment_report_key(experiment)


def experiment_compute(*, experiment_id: int) -> dict[str, Any]:
    experiment = JudgeExperiment.objects.select_related("config__rubric", "gold_set").get(pk=experiment_id)
    return experiment_report_compute(experiment)


def _finished_experiments() -> list[JudgeExperiment]:
    return list(
        JudgeExperiment.objects.select_related("config__rubric", "gold_set")
        .filter(status=JudgeExperiment.Status.FINISHED)
        .order_by("created_at")
    )


def report_key() -> str:
    comparisons = sorted(
        JudgeComparison.objects.values_list("status").annotate(
            n=Count("id"), ids=Sum("id"), done=Max("finished_at"), made=Max("created_at")
        )
    )
    state = [
        [experiment_report_key(e) for e in _finished_experiments()],
        comparisons,
        hallucination_key(),
        fabrication_key(min_flags=1),
    ]
    return "lab:report:" + _digest(state)


def report_compute() -> dict[str, Any]:
    """The judge lab's part of the agreement report: probes, comparisons, flags."""
    return {
        "experiments": [experiment_report(e) for e in _finished_experiments()],
        "comparisons": [
            {"code": str(c.code), "status": c.status, "error": c.error, **c.result}
            for c in JudgeComparison.objects.order_by("created_at")
        ],
        "hallucination": hallucination_comparison(),
        "fabrication": fabrication_comparison(),
    }
