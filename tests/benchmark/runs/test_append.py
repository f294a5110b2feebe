"""step_append's writes through the ORM: the run's counters added in the database, the running
check as a compare-and-set, the step's stored text and its score."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from benchmark.models import Run, Score, Step
from benchmark.runs import progress
from tests.benchmark.runs_support import make_run

pytestmark = pytest.mark.django_db(transaction=True)


def test_it_adds_a_steps_tokens_and_cost_to_what_the_database_holds(researcher):
    run = make_run(owner=researcher, status=Run.Status.RUNNING)
    # Another writer (a cancel recording an unfinished model call) added to the stored row meanwhile.
    Run.objects.filter(pk=run.pk).update(cost=0.5, tokens_sent=100)
    progress.step_append(run=run, thought="t", action="ls", observation="o", tokens_sent=7, cost=0.25, publish=False)
    stored = Run.objects.get(pk=run.pk)
    assert (stored.step_count, stored.tokens_sent, stored.cost) == (1, 107, 0.75)
    assert stored.heartbeat_at == run.heartbeat_at is not None


def test_it_writes_nothing_when_the_run_stopped_running(researcher):
    run = make_run(owner=researcher, status=Run.Status.RUNNING)
    Run.objects.filter(pk=run.pk).update(status=Run.Status.CANCELLED)  # the cancel, committed first
    with pytest.raises(progress.RunNotRunning):
        progress.step_append(run=run, thought="t", action="ls", observation="o", publish=False, while_running=True)
    assert not Step.objects.filter(run=run).exists()
    assert Run.objects.get(pk=run.pk).step_count == 0
    assert run.step_count == 0


def test_a_scored_step_is_stored_with_its_score_and_its_encoded_text(researcher):
    run = make_run(owner=researcher, status=Run.Status.RUNNING)
    result = SimpleNamespace(primary=0.8, metrics={"acc": 0.8}, error="")
    step = progress.step_append(
        run=run, thought="t\x00", action="validate", observation="ok", score_kind=Score.Kind.VALIDATE, score=result,
        publish=False, while_running=True,
    )  # fmt: skip
    score = Score.objects.get(step=step)
    assert (score.run_id, score.kind, score.primary, score.metrics) == (run.pk, "validate", 0.8, {"acc": 0.8})
    assert score.created_at is not None  # auto_now_add: the ORM's pre_save ran
    stored = Step.objects.get(pk=step.pk)
    assert json.loads(stored.wire) == json.loads(progress.step_wire(stored, score))
    assert json.loads(stored.wire)["thought"] == "t\u2400"
    assert Run.objects.get(pk=run.pk).best_attempt == 0.8 == run.best_attempt
