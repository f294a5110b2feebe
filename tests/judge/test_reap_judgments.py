"""The judgment reaper: abandoned judgments fail visibly; one a live worker is running is left alone."""

from __future__ import annotations

import django_rq
import pytest
from rq import SimpleWorker

from judge.management.commands.reap_judgments import DIED, Command
from judge.models import Judgment
from tests.judge.factories import make_artifact, make_research_run, rubric, valid_reply
from tests.llm_fakes import anthropic_body

CLAUDE = "anthropic:claude-test"


@pytest.fixture
def paper(db):
    return make_artifact(make_research_run(), "paper", "# Paper\n\nResults: 0.91.")


def _judgment(paper, status):
    return Judgment.objects.create(artifact=paper, rubric=rubric("end2end"), judge_model=CLAUDE, status=status)


def test_it_fails_a_running_judgment_that_no_worker_holds(paper, redis_client):
    abandoned = _judgment(paper, Judgment.Status.RUNNING)
    queued = _judgment(paper, Judgment.Status.QUEUED)
    reaped = Command().reap_once()
    assert [j.pk for j in reaped] == [abandoned.pk]
    abandoned.refresh_from_db()
    queued.refresh_from_db()
    assert abandoned.status == Judgment.Status.FAILED and abandoned.error == DIED and abandoned.scores == {}
    assert queued.status == Judgment.Status.QUEUED
    assert Command().reap_once() == []  # safe to run again


@pytest.mark.django_db(transaction=True)  # the queue takes the job on commit
def test_it_leaves_a_judgment_that_a_live_worker_is_running(paper, fake_llm, redis_client):
    """The reaper runs while the worker waits for the model: the judgment must survive and then succeed."""
    from benchmark.llm.transport import Response, override_transport

    judgment = _judgment(paper, Judgment.Status.QUEUED)
    seen: dict[str, object] = {}

    def reply_after_reaping(request):
        seen["reaped"] = Command().reap_once()
        seen["status"] = Judgment.objects.get(pk=judgment.pk).status
        return Response(200, json=anthropic_body(valid_reply(judgment.rubric)))

    queue = django_rq.get_queue("judge")
    queue.empty()
    queue.enqueue("judge.jobs.run_judgment", judgment.pk)
    with override_transport(reply_after_reaping):
        SimpleWorker([queue], connection=queue.connection).work(burst=True)
    judgment.refresh_from_db()
    assert seen == {"reaped": [], "status": Judgment.Status.RUNNING}, (judgment.status, judgment.error)
    judgment.refresh_from_db()
    assert judgment.status == Judgment.Status.SUCCEEDED


def test_it_fails_an_abandoned_experiment_judgment_and_pair_and_finishes_their_experiment(paper, redis_client):
    from judge.experiments import gold_set_create, judge_config_create
    from judge.models import JudgeExperiment, PairwiseJudgment

    other = make_artifact(make_research_run(task=paper.research_run.task, backbone="gemini"), "paper", "# Other")
    gold = gold_set_create(name="g", stage="paper", artifact_ids=[paper.pk, other.pk])
    config = judge_config_create(name="c", judge_model=CLAUDE, rubric=rubric("end2end"))
    rating = JudgeExperiment.objects.create(config=config, gold_set=gold, status="running")
    pairwise = JudgeExperiment.objects.create(config=config, gold_set=gold, status="running", kind="pairwise")
    done = Judgment.objects.create(artifact=other, rubric=config.rubric, judge_model=CLAUDE, experiment=rating,
                                   status="succeeded", scores={"novelty": {"score": 5, "justification": "x"}})  # fmt: skip
    stuck = Judgment.objects.create(
        artifact=paper, rubric=config.rubric, judge_model=CLAUDE, experiment=rating, status="running"
    )
    pair = PairwiseJudgment.objects.create(experiment=pairwise, first=paper, second=other, status="running")
    reaped = Command().reap_once()
    assert {type(r).__name__ for r in reaped} == {"Judgment", "PairwiseJudgment"}
    stuck.refresh_from_db()
    pair.refresh_from_db()
    assert stuck.status == pair.status == "failed" and stuck.error == DIED
    rating.refresh_from_db()
    pairwise.refresh_from_db()
    assert rating.status == "finished" and done.status == "succeeded"  # one judgment did succeed
    assert pairwise.status == "failed" and pairwise.error == "no judgment of the experiment succeeded"
