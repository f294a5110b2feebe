"""RQ jobs of the judge app (queue `judge`): thin, take ids, call one service."""

from __future__ import annotations

from judge.experiments import experiment_launch, experiment_refresh, pairwise_execute
from judge.models import JudgeExperiment, Judgment, PairwiseJudgment
from judge.services import judgment_execute


def run_judgment(judgment_id: int) -> str:
    judgment = (
        Judgment.objects.select_related("artifact__research_run__task", "rubric", "experiment__config")
        .filter(pk=judgment_id)
        .first()
    )
    if judgment is None:  # deleted with its artifact while queued
        return "gone"
    status = judgment_execute(judgment=judgment).status
    if judgment.experiment_id:
        experiment_refresh(experiment_id=judgment.experiment_id)
    return status


def run_experiment(experiment_id: int) -> str:
    experiment = JudgeExperiment.objects.select_related("config__rubric", "gold_set").filter(pk=experiment_id).first()
    if experiment is None:
        return "gone"
    return experiment_launch(experiment=experiment).status


def run_pairwise(pair_id: int) -> str:
    pair = (
        PairwiseJudgment.objects.select_related("experiment__config__rubric", "first__research_run__task", "second")
        .filter(pk=pair_id)
        .first()
    )
    if pair is None:
        return "gone"
    status = pairwise_execute(pair=pair).status
    experiment_refresh(experiment_id=pair.experiment_id)
    return status
