"""config.db.insert_row / update_row write what the ORM's save() and update() would."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import IntegrityError, transaction
from django.db.models import F

from benchmark.models import Run, Score, Step
from config.db import insert_row, select_joined, update_row, update_rows
from review.models import Assignment, Campaign, CampaignItem
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


# -- select_joined: a select_related query with its SQL built once ---------------------------------


def _fields(obj) -> dict:  # type: ignore[no-untyped-def]
    return {f.attname: getattr(obj, f.attname) for f in obj._meta.concrete_fields}


PAGE = ("campaign__rubric", "item__artifact__research_run", "item__run__agent")


def _paper_and_trajectory_assignments(reviewer):  # type: ignore[no-untyped-def]
    from review.assignment.services import campaign_assign
    from review.campaigns.services import campaign_create
    from tests.review.factories import make_paper, make_rubric
    from tests.review.trajectory_factories import trajectory_campaign

    papers = campaign_create(
        name="papers", rubric=make_rubric(), artifacts=[make_paper()], reviewers=[reviewer], reviewers_per_item=1
    )
    campaign_assign(campaign=papers)
    trajectory_campaign([reviewer])
    return list(Assignment.objects.filter(reviewer=reviewer).order_by("pk"))


def test_it_loads_what_select_related_loads_and_caches_every_relation(reviewer, django_assert_num_queries):
    paper, trajectory = _paper_and_trajectory_assignments(reviewer)
    for mine in (paper, trajectory):
        orm = Assignment.objects.select_related(*PAGE).get(pk=mine.pk)
        with django_assert_num_queries(1):
            fast = select_joined(Assignment, "{root}.id = %s", [mine.pk], related=PAGE)[0]
        with django_assert_num_queries(0):  # every relation came in the one query
            pairs = [
                (fast, orm),
                (fast.campaign, orm.campaign),
                (fast.campaign.rubric, orm.campaign.rubric),
                (fast.item, orm.item),
            ]
            empty = [fast.item.artifact is None, fast.item.run is None]
            if fast.item.artifact is not None:
                pairs += [(fast.item.artifact, orm.item.artifact), (fast.item.artifact.research_run, orm.item.artifact.research_run)]  # fmt: skip
            if fast.item.run is not None:
                pairs += [(fast.item.run, orm.item.run), (fast.item.run.agent, orm.item.run.agent)]
        assert empty == [orm.item.artifact is None, orm.item.run is None]
        for got, want in pairs:
            assert type(got) is type(want) and not got._state.adding and got._state.db == "default"
            assert _fields(got) == _fields(want)  # JSON, datetimes, decimals: the ORM's converters
    assert paper.item.artifact_id and trajectory.item.run_id  # both shapes were compared


def test_deferred_fields_are_deferred_and_load_on_access(reviewer, django_assert_num_queries):
    paper, _ = _paper_and_trajectory_assignments(reviewer)
    fast = select_joined(
        Assignment, "{root}.id = %s", [paper.pk], related=("campaign", "item"), defer=("item__rendered_html", "campaign__blind_names")
    )[0]  # fmt: skip
    assert fast.item.get_deferred_fields() == {"rendered_html"}
    assert fast.campaign.get_deferred_fields() == {"blind_names"}
    stored = CampaignItem.objects.get(pk=fast.item_id).rendered_html
    with django_assert_num_queries(1):
        assert fast.item.rendered_html == stored
    assert fast.campaign.blind_names == Campaign.objects.get(pk=fast.campaign_id).blind_names


def test_it_filters_by_joined_tables_and_finds_nothing_when_nothing_matches(reviewer):
    paper, trajectory = _paper_and_trajectory_assignments(reviewer)
    where = "{root}.reviewer_id = %s AND {campaign}.name = %s ORDER BY {root}.id"
    assert [a.pk for a in select_joined(Assignment, where, [reviewer.pk, "papers"], related=("campaign",))] == [
        paper.pk
    ]
    assert [a.pk for a in select_joined(Assignment, where, [reviewer.pk, "traj"], related=("campaign",))] == [
        trajectory.pk
    ]
    assert select_joined(Assignment, where, [reviewer.pk, "no such"], related=("campaign",)) == []
    with pytest.raises(ValueError, match="not a forward foreign key"):
        select_joined(Campaign, "1 = 1", [], related=("items",))


def test_update_rows_updates_only_the_rows_its_condition_matches(researcher):
    run = make_run(owner=researcher)
    other = make_run(owner=researcher)
    where = "owner_id = %s AND step_count < %s"
    assert update_rows(Run, where, [researcher.pk, 5], set={"step_count": 7}) == 2
    assert update_rows(Run, where, [researcher.pk, 5], set={"step_count": 9}) == 0  # both are at 7 now
    assert update_rows(Run, "id = %s", [run.pk], set={"step_count": 1}, add={"cost": 0.5}) == 1
    run.refresh_from_db()
    other.refresh_from_db()
    assert (run.step_count, other.step_count) == (1, 7)
