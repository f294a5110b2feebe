"""config.db.select_joined / update_rows (review/'s last uses) read and write what the ORM would."""

from __future__ import annotations

import pytest

from benchmark.models import Run
from config.db import select_joined, update_rows
from review.models import Assignment, Campaign, CampaignItem
from tests.benchmark.runs_support import make_run

pytestmark = pytest.mark.django_db(transaction=True)

# -- select_joined: a select_related query with its SQL built once ---------------------------------


def _fields(obj) -> dict:  # type: ignore[no-untyped-def]
    return {f.attname: getattr(obj, f.attname) for f in obj._meta.concrete_fields}


PAGE = ("campaign__rubric", "item__artifact__research_run", "item__run__agent")


def _paper_and_trajectory_assignments(reviewer):  # type: ignore[no-untyped-def]
    from review.services import campaign_assign, campaign_create
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
