"""config.db.insert_row / update_row write what the ORM's save() and update() would."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import IntegrityError, transaction
from django.db.models import F

from benchmark.models import Run, Score, Step
from config.db import insert_row, update_row
from tests.benchmark.runs_support import make_run

pytestmark = pytest.mark.django_db(transaction=True)

COLUMNS = [f.attname for f in Step._meta.concrete_fields if f.attname not in ("id", "index")]


def _step(run: Run, index: int) -> Step:
    return Step(
        run=run,
        index=index,
        thought="think \x00 with a NUL",  # OutputTextField stores it as a visible symbol
        action="ls -la\n",
        observation="ünïcode ✓",
        state={"open_file": "a.py", "nested": {"nul": "x\x00y"}, "n": [1, 2.5, None]},
        execution_time=None,
        tokens_sent=12,
        tokens_received=34,
        cost=0.125,
        created_at=dt.datetime(2026, 12, 1, 10, 30, 5, 123456, tzinfo=dt.UTC),
        wire='{"index": 1}',
    )


def test_an_inserted_row_reads_back_as_the_orms_save_writes_it(researcher):
    run = make_run(owner=researcher)
    fast, orm = _step(run, 1), _step(run, 2)
    insert_row(fast)
    orm.save(force_insert=True)

    assert fast.pk is not None and fast.pk != orm.pk and not fast._state.adding
    stored = {s.index: s for s in Step.objects.filter(run=run)}
    assert {c: getattr(stored[1], c) for c in COLUMNS} == {c: getattr(stored[2], c) for c in COLUMNS}
    assert stored[1].thought == "think \u2400 with a NUL"


def test_a_score_is_inserted_against_the_step_just_inserted(researcher):
    run = make_run(owner=researcher)
    step = _step(run, 1)
    insert_row(step)
    score = Score(run=run, step=step, kind=Score.Kind.SUBMIT, metrics={"acc": 0.5}, primary=0.5, error="")
    score.step_id = step.pk
    insert_row(score)
    assert Score.objects.get(pk=score.pk).step_id == step.pk


def test_a_duplicate_step_is_refused_as_by_the_orm_and_rolls_back(researcher):
    run = make_run(owner=researcher)
    insert_row(_step(run, 1))
    with pytest.raises(IntegrityError), transaction.atomic():
        update_row(Run, run.pk, set={"step_count": 2}, add={})
        insert_row(_step(run, 1))
    assert Step.objects.filter(run=run).count() == 1
    assert Run.objects.get(pk=run.pk).step_count == 0  # the block's update went with it


def test_update_sets_and_adds_like_the_orms_update(researcher):
    run = make_run(owner=researcher, tokens_sent=5, cost=0.5)
    twin = make_run(owner=researcher, tokens_sent=5, cost=0.5)
    at = dt.datetime(2026, 12, 1, 11, 0, tzinfo=dt.UTC)
    changed = update_row(
        Run,
        run.pk,
        set={"step_count": 3, "heartbeat_at": at, "best_attempt": None},
        add={"tokens_sent": 7, "cost": 0.25},
    )
    Run.objects.filter(pk=twin.pk).update(
        step_count=3, heartbeat_at=at, best_attempt=None, tokens_sent=F("tokens_sent") + 7, cost=F("cost") + 0.25
    )
    assert changed == 1
    fields = ("step_count", "heartbeat_at", "best_attempt", "tokens_sent", "cost")
    fast, orm = Run.objects.get(pk=run.pk), Run.objects.get(pk=twin.pk)
    assert [getattr(fast, f) for f in fields] == [getattr(orm, f) for f in fields] == [3, at, None, 12, 0.75]
    assert update_row(Run, 10**9, set={"step_count": 1}, add={}) == 0
