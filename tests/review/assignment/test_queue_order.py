"""Blinding by order (issue 30): a reviewer's queue is a shuffle keyed by a per-campaign secret,
stored per assignment, stable across reloads, different per reviewer and campaign, and not the
creation order (which follows the admin's pick list: task, then system) nor grouped by system.
The queue page, its next item and the admin's per-reviewer list follow it."""

from __future__ import annotations

import re
from itertools import groupby
from statistics import mean

import pytest
from django.db import IntegrityError, connection
from django.db.migrations.executor import MigrationExecutor
from django.urls import reverse

from review.assignment.services import assignment_reassign, campaign_assign
from review.campaigns.services import campaign_create
from review.campaigns.setup import campaign_grow
from review.models import Assignment, Campaign
from review.queue_order import new_queue_secret, queue_key
from tests.review.factories import full_review_post, make_paper, make_reviewer, make_rubric
from tests.review.io.test_import_export import HUMAN, _import, _released_papers

pytestmark = pytest.mark.django_db

SYSTEMS = ("claude", "gemini", "o4-mini")
QUEUE_LINK = re.compile(r'<a href="/review/a/(\w+)/" class="queue-title">')


def block_campaign(reviewers: list, *, name: str = "blocks", per_system: int = 10) -> Campaign:
    """30 papers of 3 systems added in system blocks (CCC..GGG..OOO), as the campaign form lists
    them; every reviewer gets every paper."""
    papers = [make_paper(backbone=system, figures={}) for system in SYSTEMS for _ in range(per_system)]
    campaign = campaign_create(
        name=name, rubric=make_rubric(), artifacts=papers, reviewers=reviewers, reviewers_per_item=len(reviewers)
    )
    campaign_assign(campaign=campaign)
    return campaign


def longest_run(systems: list[str]) -> int:
    return max(len(list(run)) for _, run in groupby(systems))


def queue_of(user, campaign: Campaign | None = None) -> list[Assignment]:
    rows = Assignment.objects.filter(reviewer=user).select_related("item__artifact__research_run")
    if campaign is not None:
        rows = rows.filter(campaign=campaign)
    return list(rows.order_by("queue_key", "id"))


def keys_against_creation(campaign: Campaign) -> list[Assignment]:
    """Set the keys by hand so that the queue runs against creation (the last made first), and
    return the queue: whatever the view sorted by besides the key would show a different order."""
    made = list(Assignment.objects.filter(campaign=campaign).order_by("id"))
    for n, a in enumerate(made):
        Assignment.objects.filter(pk=a.pk).update(queue_key=-n)
    return list(reversed(made))


def codes_on_queue_page(client) -> list[str]:
    response = client.get(reverse("review:queue"))
    assert response.status_code == 200
    return QUEUE_LINK.findall(response.content.decode())


# ---------------------------------------------------------------- the keyed order itself


def test_it_keys_the_order_by_secret_reviewer_and_item() -> None:
    secret = "a" * 64
    key = queue_key(secret=secret, reviewer_id=7, item_id=11)
    assert key == queue_key(secret=secret, reviewer_id=7, item_id=11)  # stable
    assert -(2**63) <= key < 2**63  # fits the BigIntegerField
    assert key != queue_key(secret="b" * 64, reviewer_id=7, item_id=11)
    assert key != queue_key(secret=secret, reviewer_id=8, item_id=11)
    assert key != queue_key(secret=secret, reviewer_id=7, item_id=12)
    # 7:11 and 71:1 are different messages, not one string glued two ways.
    assert queue_key(secret=secret, reviewer_id=71, item_id=1) != queue_key(secret=secret, reviewer_id=7, item_id=11)
    assert new_queue_secret() != new_queue_secret() and len(new_queue_secret()) == 64


def test_it_breaks_system_blocks_apart_for_every_secret() -> None:
    """Items 1..30 made in system blocks, under 200 fixed secrets: the keyed order never keeps a
    block (a run of 10), and its runs are as short as a fair shuffle's (mean longest run ~3.4)."""
    system_of = {item: SYSTEMS[(item - 1) // 10] for item in range(1, 31)}
    runs = []
    for n in range(200):
        secret = f"secret-{n}"
        order = sorted(system_of, key=lambda item: queue_key(secret=secret, reviewer_id=5, item_id=item))
        assert order != sorted(system_of)
        runs.append(longest_run([system_of[item] for item in order]))
    assert max(runs) < 10
    assert mean(runs) < 4


# ---------------------------------------------------------------- stored keys


def test_it_gives_each_campaign_its_own_secret(reviewer) -> None:
    first = campaign_create(name="one", rubric=make_rubric(), artifacts=[make_paper(figures={})], reviewers=[reviewer])
    second = campaign_create(name="two", rubric=make_rubric(), artifacts=[make_paper(figures={})], reviewers=[reviewer])
    assert len(first.queue_secret) == 64 and first.queue_secret != second.queue_secret


def test_it_keys_every_assignment_from_its_campaigns_secret(reviewer, other_reviewer) -> None:
    campaign = block_campaign([reviewer, other_reviewer])
    rows = list(Assignment.objects.filter(campaign=campaign))
    assert len(rows) == 60
    for a in rows:
        assert a.queue_key == queue_key(secret=campaign.queue_secret, reviewer_id=a.reviewer_id, item_id=a.item_id)


def test_it_orders_a_campaign_made_in_system_blocks_out_of_creation_order(reviewer, other_reviewer) -> None:
    campaign = block_campaign([reviewer, other_reviewer])
    mine = queue_of(reviewer)
    assert [a.item_id for a in mine] != sorted(a.item_id for a in mine)  # not the creation order
    # A fair shuffle of 10+10+10 has a longest run of 9 or 10 with probability 7e-5; creation order has 10.
    assert longest_run([a.item.system for a in mine]) <= 8
    theirs = queue_of(other_reviewer)
    assert [a.item_id for a in mine] != [a.item_id for a in theirs]  # each reviewer their own shuffle
    assert campaign.queue_secret not in {str(a.queue_key) for a in mine}


def test_it_differs_between_campaigns_of_the_same_items_and_reviewer(reviewer) -> None:
    papers = [make_paper(backbone=system, figures={}) for system in SYSTEMS for _ in range(4)]
    orders = []
    for name in ("first", "second"):
        campaign = campaign_create(name=name, rubric=make_rubric(), artifacts=papers, reviewers=[reviewer],
                                   reviewers_per_item=1)  # fmt: skip
        campaign_assign(campaign=campaign)
        orders.append([a.item.artifact_id for a in queue_of(reviewer, campaign)])
    assert sorted(orders[0]) == sorted(orders[1]) and orders[0] != orders[1]


def test_it_keys_assignments_made_later_and_keeps_the_order_of_the_earlier_ones(reviewer, other_reviewer) -> None:
    campaign = block_campaign([reviewer], per_system=4)
    before = [a.pk for a in queue_of(reviewer)]
    more = [make_paper(backbone=system, figures={}) for system in SYSTEMS for _ in range(2)]
    campaign_grow(campaign=campaign, artifacts=more)  # the assignment has begun: new slots are filled at once
    after = queue_of(reviewer)
    assert len(after) == len(before) + len(more)
    assert all(a.queue_key == a.keyed(campaign.queue_secret) for a in after)
    assert [a.pk for a in after if a.pk in before] == before  # the earlier items keep their relative order
    assert [a.pk for a in after] != sorted(a.pk for a in after)  # nor is the grown queue in creation order
    # Reassigned: the new row is keyed for its new reviewer, not a copy of the old key.
    campaign_grow(campaign=campaign, reviewers=[other_reviewer])
    moved = Assignment.objects.filter(reviewer=reviewer).order_by("id").first()
    new = assignment_reassign(assignment=moved, to_reviewer=other_reviewer)
    assert new.queue_key == queue_key(secret=campaign.queue_secret, reviewer_id=other_reviewer.pk, item_id=new.item_id)
    assert new.queue_key != moved.queue_key


def test_it_refuses_a_bulk_insert_that_sets_no_key(reviewer) -> None:
    campaign = block_campaign([reviewer], per_system=1)
    a = Assignment.objects.filter(campaign=campaign).first()
    row = Assignment(campaign=campaign, item=a.item, reviewer=make_reviewer("late"), slot=2)
    with pytest.raises(IntegrityError):  # not silently first or last in the queue
        Assignment.objects.bulk_create([row])


def test_it_keys_new_rows_only_and_leaves_an_update_one_query(reviewer, django_assert_num_queries) -> None:
    campaign = block_campaign([reviewer], per_system=1)
    a = Assignment.objects.filter(campaign=campaign).only("pk", "status").first()
    a.status = Assignment.Status.STARTED
    with django_assert_num_queries(1):  # no load of the deferred key nor of the campaign's secret
        a.save(update_fields=["status"])
    stored = Assignment.objects.get(pk=a.pk)
    assert stored.status == "started" and stored.queue_key == stored.keyed(campaign.queue_secret)


@pytest.mark.shared_data(HUMAN)
def test_it_keys_the_imported_human_study_and_lists_it_so(client_for) -> None:
    """The released study reads claude, gemini, o4-mini, claude... per reviewer in file order."""
    _released_papers()
    _import(HUMAN)
    campaign = Campaign.objects.get(name="study")
    rows = list(Assignment.objects.filter(campaign=campaign).select_related("reviewer"))
    assert len(rows) == 57 and all(a.queue_key == a.keyed(campaign.queue_secret) for a in rows)
    busiest = max({a.reviewer for a in rows}, key=lambda user: sum(a.reviewer_id == user.pk for a in rows))
    mine = queue_of(busiest, campaign)
    assert len(mine) == 12
    assert codes_on_queue_page(client_for(busiest)) == [a.code for a in mine]  # a closed campaign: listed, read-only
    assert [a.pk for a in mine] != sorted(a.pk for a in mine)


# ---------------------------------------------------------------- the migration


@pytest.fixture
def back_to_latest():
    yield
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("back_to_latest")
def test_it_fills_existing_campaigns_with_fresh_secrets_and_their_assignments_with_keys() -> None:
    before, after = [("review", "0011_campaign_tells")], [("review", "0012_queue_order")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old = executor.loader.project_state(before).apps
    User = old.get_model("auth", "User")
    Task = old.get_model("benchmark", "Task")
    ResearchRun = old.get_model("benchmark", "ResearchRun")
    Artifact = old.get_model("benchmark", "Artifact")
    Rubric = old.get_model("judge", "Rubric")
    OldCampaign = old.get_model("review", "Campaign")
    Item = old.get_model("review", "CampaignItem")
    OldAssignment = old.get_model("review", "Assignment")
    rubric = Rubric.objects.create(stage="end2end", version=77, name="r", dimensions=[])
    users = [User.objects.create(username=f"u{n}") for n in range(2)]
    for c in range(2):
        campaign = OldCampaign.objects.create(name=f"old {c}", rubric=rubric)
        for n in range(3):
            task = Task.objects.create(slug=f"t{c}{n}", version_hash=f"{c}{n}", kind="mlr", title="t")
            run = ResearchRun.objects.create(task=task, backbone="claude")
            item = Item.objects.create(campaign=campaign, artifact=Artifact.objects.create(research_run=run),
                                       code=f"i-{c}{n}")  # fmt: skip
            for slot, user in enumerate(users, start=1):
                OldAssignment.objects.create(
                    campaign=campaign, item=item, reviewer=user, slot=slot, code=f"a{c}{n}{slot}"
                )

    executor = MigrationExecutor(connection)
    executor.migrate(after)
    new = executor.loader.project_state(after).apps
    campaigns = list(new.get_model("review", "Campaign").objects.all())
    secrets = {c.queue_secret for c in campaigns}
    assert len(secrets) == 2 and all(len(s) == 64 for s in secrets)  # one fresh secret each, not one shared
    secret_of = {c.pk: c.queue_secret for c in campaigns}
    rows = list(new.get_model("review", "Assignment").objects.all())
    assert len(rows) == 12
    for a in rows:  # the same key the running code gives new assignments
        assert a.queue_key == queue_key(secret=secret_of[a.campaign_id], reviewer_id=a.reviewer_id, item_id=a.item_id)


# ---------------------------------------------------------------- the queue page and its next item


def test_it_lists_the_queue_page_in_keyed_order_on_every_reload(client_for, reviewer, other_reviewer) -> None:
    block_campaign([reviewer, other_reviewer])
    c = client_for(reviewer)
    shown = codes_on_queue_page(c)
    mine = queue_of(reviewer)
    assert shown == [a.code for a in mine]
    assert shown != [a.code for a in sorted(mine, key=lambda a: a.pk)]  # not the creation order
    assert codes_on_queue_page(c) == shown  # stable across reloads
    nxt = c.get(reverse("review:queue")).content.decode()
    assert f'id="next-item" href="/review/a/{shown[0]}/"' in nxt


def test_it_shows_another_reviewer_their_own_order(client_for, reviewer, other_reviewer) -> None:
    block_campaign([reviewer, other_reviewer])
    mine, theirs = codes_on_queue_page(client_for(reviewer)), codes_on_queue_page(client_for(other_reviewer))
    assert not set(mine) & set(theirs)  # each sees only their own codes
    by_item = {a.code: a.item_id for a in Assignment.objects.all()}
    assert [by_item[c] for c in mine] != [by_item[c] for c in theirs]
    assert sorted(by_item[c] for c in mine) == sorted(by_item[c] for c in theirs)


def test_it_follows_the_stored_keys(client_for, reviewer) -> None:
    """Keys set by hand to the reverse of creation: the page follows the keys, whatever made them."""
    queue = keys_against_creation(block_campaign([reviewer], per_system=2))
    assert codes_on_queue_page(client_for(reviewer)) == [a.code for a in queue]


def test_it_steps_to_the_next_item_in_queue_order_after_a_submit(client_for, reviewer) -> None:
    queue = keys_against_creation(block_campaign([reviewer], per_system=2))
    c = client_for(reviewer)
    for n in range(3):
        response = c.post(reverse("review:item", args=[queue[n].code]), full_review_post())
        assert response.status_code == 302 and response["Location"] == reverse("review:queue")
        page = c.get(response["Location"]).content.decode()
        assert f'id="next-item" href="/review/a/{queue[n + 1].code}/"' in page
    # The submitted ones stay listed (done), in queue order too.
    assert codes_on_queue_page(c) == [a.code for a in queue[3:]] + [a.code for a in queue[:3]]


def test_it_continues_a_started_item_before_the_queue_head(client_for, reviewer) -> None:
    queue = keys_against_creation(block_campaign([reviewer], per_system=2))
    # queue[4] was made before queue[2]: the creation order would pick it.
    Assignment.objects.filter(pk__in=[queue[4].pk, queue[2].pk]).update(status=Assignment.Status.STARTED)
    page = client_for(reviewer).get(reverse("review:queue")).content.decode()
    assert f'id="next-item" href="/review/a/{queue[2].code}/"' in page  # the first started one in queue order


def test_it_never_shows_the_secret_or_the_keys(client_for, reviewer, admin_user) -> None:
    campaign = block_campaign([reviewer], per_system=1)
    a = queue_of(reviewer)[0]
    pages = [
        client_for(reviewer).get(reverse("review:queue")),
        client_for(reviewer).get(reverse("review:item", args=[a.code])),
        client_for(admin_user).get(reverse("review:campaign_detail", args=[campaign.code])),
        client_for(admin_user).get(reverse("review:campaign_export", args=[campaign.code, "json"]) + "?drafts=1"),
        client_for(admin_user).get(reverse("review:campaign_export", args=[campaign.code, "csv"]) + "?drafts=1"),
    ]
    for response in pages:
        assert response.status_code == 200
        body = response.content.decode()
        assert campaign.queue_secret not in body and str(a.queue_key) not in body


# ---------------------------------------------------------------- the admin's per-reviewer list


OPEN_ROW = re.compile(r"<tr><td>(\w+)</td><td><a href=\"/review/campaigns/[^\"]+/i/[^/]+/preview\">")


def test_it_lists_each_reviewers_open_items_in_their_queue_order_for_the_admin(
    client_for, admin_user, reviewer, other_reviewer
) -> None:
    campaign = block_campaign([reviewer, other_reviewer], per_system=4)  # 24 open rows: one page
    url = reverse("review:campaign_detail", args=[campaign.code])
    mine, theirs = [a.code for a in queue_of(reviewer)], [a.code for a in queue_of(other_reviewer)]
    shown = OPEN_ROW.findall(client_for(admin_user).get(url, {"sort": "reviewer"}).content.decode())
    assert shown == mine + theirs  # remy_reviewer, then vera_reviewer, each in their queue's order
    descending = OPEN_ROW.findall(client_for(admin_user).get(url, {"sort": "-reviewer"}).content.decode())
    assert descending == theirs + mine  # reviewers reversed, each one's queue still front to back
    only_mine = OPEN_ROW.findall(client_for(admin_user).get(url, {"sort": "reviewer", "q": "remy"}).content.decode())
    assert only_mine == mine
    assert mine != [a.code for a in sorted(queue_of(reviewer), key=lambda a: a.pk)]


# ---------------------------------------------------------------- permission checklist of the touched views


@pytest.fixture
def small(reviewer):
    return block_campaign([reviewer], per_system=1)


@pytest.mark.parametrize(
    ("persona", "queue_status", "detail_status"),
    [
        ("reviewer", 200, 403),  # the queue's owner; not an admin
        ("other_reviewer", 200, 403),  # another reviewer: their own (empty) queue
        ("researcher", 403, 403),
        ("other_researcher", 403, 403),
        ("admin_user", 403, 200),
    ],
)
def test_it_checks_who_opens_the_queue_and_the_admin_list(
    client_for, small, persona, queue_status, detail_status, request
) -> None:
    c = client_for(request.getfixturevalue(persona))
    queue = c.get(reverse("review:queue"))
    assert queue.status_code == queue_status
    if persona == "other_reviewer":
        assert codes_on_queue_page(c) == []  # nobody else's items, in any order
    detail = c.get(reverse("review:campaign_detail", args=[small.code]), {"sort": "reviewer"})
    assert detail.status_code == detail_status


def test_it_sends_anonymous_visitors_to_log_in(client_for, small) -> None:
    for url in (reverse("review:queue"), reverse("review:campaign_detail", args=[small.code]) + "?sort=reviewer"):
        response = client_for(None).get(url)
        assert response.status_code == 302 and "/accounts/login" in response["Location"]


def test_it_answers_bad_codes_bad_sorts_and_wrong_methods(client_for, small, reviewer, admin_user) -> None:
    admin = client_for(admin_user)
    bad = reverse("review:campaign_detail", args=["00000000-0000-0000-0000-000000000000"])
    assert admin.get(bad, {"sort": "reviewer"}).status_code == 404
    assert admin.get(reverse("review:campaign_detail", args=[small.code]), {"sort": "queue_key"}).status_code == 200
    assert admin.post(reverse("review:campaign_detail", args=[small.code])).status_code == 405
    assert client_for(reviewer).post(reverse("review:queue")).status_code == 405
