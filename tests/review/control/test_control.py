"""The campaign control room: close and reopen, reminder mails, the open problem reports, and the
Invitations link in the top nav. Real client, real DB, Django's mail API (locmem outbox)."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.core import mail
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from review.assignment.services import campaign_assign
from review.campaigns.services import campaign_create
from review.control.reports import report_problem
from review.control.services import REMIND_EVERY, campaign_close, reminders_send
from review.models import Assignment, Campaign, CampaignStatusChange, ItemReport, Review, ReviewerReminder
from review.reviewing.services import ReviewLocked, review_save_draft
from tests.review.factories import full_review_post, make_paper, make_reviewer, make_rubric

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(reviewer, other_reviewer):
    papers = [make_paper(backbone="claude", content=f"# Paper {n}\n\nSecret body text {n}.") for n in range(3)]
    campaign = campaign_create(
        name="Autumn study", rubric=make_rubric(), artifacts=papers, reviewers=[reviewer, other_reviewer],
        reviewers_per_item=1, deadline=timezone.now() + timedelta(days=2),
    )  # fmt: skip
    campaign_assign(campaign=campaign)
    mine = list(Assignment.objects.filter(campaign=campaign, reviewer=reviewer).order_by("id"))
    assert mine, "the fixture needs an assignment of the reviewer"
    return {"campaign": campaign, "mine": mine}


def _post(client, name: str, campaign: Campaign, **data):
    return client.post(reverse(f"review:{name}", args=[campaign.code]), data)


# ---------------------------------------------------------------- permissions


@pytest.mark.parametrize("name", ["campaign_close", "campaign_reopen", "campaign_remind"])
def test_it_lets_only_admins_post_control_actions(client_for, people, other_reviewer, world, name) -> None:
    campaign = world["campaign"]
    url = reverse(f"review:{name}", args=[campaign.code])
    for who in ("reviewer", "owner", "other"):
        assert client_for(people[who]).post(url).status_code == 403, who
    assert client_for(other_reviewer).post(url).status_code == 403
    anonymous = client_for(None).post(url)
    assert anonymous.status_code == 302 and reverse("accounts:login") in anonymous["Location"]
    assert client_for(people["admin"]).get(url).status_code == 405  # no writes on GET
    bad = reverse(f"review:{name}", args=["00000000-0000-0000-0000-000000000000"])
    assert client_for(people["admin"]).post(bad).status_code == 404
    campaign.refresh_from_db()
    assert campaign.status == Campaign.Status.OPEN and not mail.outbox
    assert not CampaignStatusChange.objects.exists()


def test_it_lets_only_admins_resolve_reports(client_for, people, other_reviewer, world) -> None:
    campaign = world["campaign"]
    report = report_problem(assignment=world["mine"][0], reason="broken_figure", note="fig 2 missing")
    url = reverse("review:report_resolve", args=[campaign.code, report.pk])
    for user in (people["reviewer"], people["owner"], other_reviewer):
        assert client_for(user).post(url, {"decision": "accept"}).status_code == 403
    assert client_for(None).post(url, {"decision": "accept"}).status_code == 302
    admin = client_for(people["admin"])
    assert admin.get(url).status_code == 405
    other = campaign_create(name="Other", rubric=make_rubric(), artifacts=[make_paper()])
    # A report id under another campaign's code, or no such id: 404 either way.
    assert (
        admin.post(reverse("review:report_resolve", args=[other.code, report.pk]), {"decision": "accept"}).status_code
        == 404
    )
    assert (
        admin.post(
            reverse("review:report_resolve", args=[campaign.code, report.pk + 999]), {"decision": "accept"}
        ).status_code
        == 404
    )
    r = admin.post(url, {"decision": "maybe"}, follow=True)
    assert b"Choose accept or dismiss" in r.content
    report.refresh_from_db()
    assert report.status == ItemReport.Status.OPEN


# ---------------------------------------------------------------- close and reopen


def test_it_closes_and_reopens_recording_who_and_when(client_for, admin_user, reviewer, world) -> None:
    campaign, mine = world["campaign"], world["mine"][0]
    admin = client_for(admin_user)
    review_save_draft(
        assignment=mine, scores={"clarity": {"score": 6, "justification": "ok"}}, confidence=None, revision=1
    )
    page = admin.post(reverse("review:campaign_close", args=[campaign.code]), follow=True).content.decode()
    campaign.refresh_from_db()
    assert campaign.status == Campaign.Status.CLOSED
    change = CampaignStatusChange.objects.get()
    assert (change.from_status, change.to_status, change.by) == ("open", "closed", admin_user)
    assert 'id="reopen-campaign"' in page and f"by {admin_user.username}" in page
    again = admin.post(reverse("review:campaign_close", args=[campaign.code]), follow=True).content.decode()
    assert "Not closed: the campaign is closed (read-only)" in again

    # The reviewer: the campaign in the queue, read-only, with its close date; the draft still shown.
    queue = client_for(reviewer).get(reverse("review:queue")).content.decode()
    assert f"closed on {timezone.localtime(change.at):%Y-%m-%d %H:%M}" in queue
    assert 'id="next-item"' not in queue  # nothing to start in a closed campaign
    item = client_for(reviewer).get(reverse("review:item", args=[mine.code])).content.decode()
    assert "This campaign was closed on" in item and '"locked": true' in item
    assert 'name="score_clarity" value="6" checked disabled' in item

    r = admin.post(reverse("review:campaign_reopen", args=[campaign.code]), follow=True)
    campaign.refresh_from_db()
    assert campaign.status == Campaign.Status.OPEN and b"Campaign reopened" in r.content
    reopened = CampaignStatusChange.objects.order_by("id").last()
    assert (reopened.from_status, reopened.to_status, reopened.by) == ("closed", "open", admin_user)
    assert (
        "This campaign was closed"
        not in client_for(reviewer).get(reverse("review:item", args=[mine.code])).content.decode()
    )
    assert b"Not reopened" in admin.post(reverse("review:campaign_reopen", args=[campaign.code]), follow=True).content


def test_it_refuses_every_save_and_submit_in_a_closed_campaign(client_for, admin_user, reviewer, world) -> None:
    campaign, mine = world["campaign"], world["mine"][0]
    campaign_close(campaign=campaign, by=admin_user)
    c = client_for(reviewer)
    body = json.dumps({"revision": 1, "scores": {"clarity": {"score": 5, "justification": "x"}}})
    r = c.post(reverse("review:draft", args=[mine.code]), body, content_type="application/json")
    assert r.status_code == 409 and r.json() == {
        "error": "locked",
        "detail": "the campaign is closed: nothing more can be saved",
        "closed": True,
    }
    r = c.post(reverse("review:submit", args=[mine.code]), full_review_post(), follow=True)
    assert b"Not saved: the campaign is closed" in r.content
    r = c.post(reverse("review:item", args=[mine.code]), {"action": "draft", "score_clarity": "5"}, follow=True)
    assert b"Not saved: the campaign is closed" in r.content
    assert not Review.objects.filter(assignment=mine).exists()
    mine.refresh_from_db()
    assert mine.status == Assignment.Status.ASSIGNED


def test_it_refuses_a_draft_save_in_flight_when_the_campaign_closes(admin_user, world) -> None:
    """The request loaded the campaign open; the close commits before its UPDATE runs."""
    mine = world["mine"][0]
    review_save_draft(
        assignment=mine, scores={"clarity": {"score": 3, "justification": "a"}}, confidence=None, revision=1
    )
    loaded = Assignment.objects.select_related("campaign").get(pk=mine.pk)  # campaign still "open" in memory
    campaign_close(campaign=world["campaign"], by=admin_user)
    with pytest.raises(ReviewLocked, match="campaign is closed"):
        review_save_draft(
            assignment=loaded, scores={"clarity": {"score": 9, "justification": "b"}}, confidence=None, revision=2
        )
    assert Review.objects.get(assignment=mine).scores["clarity"]["score"] == 3


def test_it_fills_no_slot_while_closed_and_fills_it_on_reopen(client_for, admin_user, reviewer, world) -> None:
    campaign = world["campaign"]
    extra = make_reviewer("zed")
    campaign.members.create(reviewer=extra)
    mine = world["mine"][0]
    report = report_problem(assignment=mine, reason="conflict", note="I know the authors")
    campaign_close(campaign=campaign, by=admin_user)
    admin = client_for(admin_user)
    admin.post(reverse("review:report_resolve", args=[campaign.code, report.pk]), {"decision": "accept"})
    mine.refresh_from_db()
    assert mine.status == Assignment.Status.RETURNED
    assert not Assignment.objects.filter(item=mine.item, status__in=Assignment.LIVE).exists()  # closed: not refilled
    r = admin.post(reverse("review:campaign_assign", args=[campaign.code]), follow=True)
    assert b"The campaign is closed: no assignment is made" in r.content
    assert not Assignment.objects.filter(item=mine.item, status__in=Assignment.LIVE).exists()
    r = admin.post(reverse("review:campaign_reopen", args=[campaign.code]), follow=True)
    assert b"1 new assignment(s) made" in r.content
    assert Assignment.objects.get(item=mine.item, status=Assignment.Status.ASSIGNED).reviewer != reviewer


# ---------------------------------------------------------------- reminders


def test_it_mails_each_reviewer_only_their_own_count_due_date_and_queue(
    client_for, admin_user, reviewer, other_reviewer, world, settings
) -> None:
    settings.SITE_URL = "https://referee.example.org"
    campaign = world["campaign"]
    # remy submits nothing, vera has open work too; a third member with everything submitted gets no mail.
    r = client_for(admin_user).post(reverse("review:campaign_remind", args=[campaign.code]), follow=True)
    open_counts = {
        u.email: Assignment.objects.filter(campaign=campaign, reviewer=u, status__in=Assignment.OPEN).count()
        for u in (reviewer, other_reviewer)
    }
    assert sorted(m.to[0] for m in mail.outbox) == sorted(e for e, n in open_counts.items() if n)
    for message in mail.outbox:
        n = open_counts[message.to[0]]
        assert len(message.to) == 1 and not message.cc and not message.bcc
        assert f"{n} item" in message.body and "Autumn study" in message.body
        assert f"due {campaign.deadline:%Y-%m-%d %H:%M} UTC" in message.body
        assert "https://referee.example.org" + reverse("review:queue") in message.body
        text = message.subject + message.body
        for secret in ("Secret body", "Paper 0", "claude", reviewer.username, other_reviewer.username):
            assert secret not in text
        assert not any(a.code in text for a in Assignment.objects.all())  # no item codes either
    page = r.content.decode()
    assert "Reminder mailed to" in page and "last reminded" in page
    row = ReviewerReminder.objects.get(reviewer=reviewer)
    assert row.sent_by == admin_user and row.open_items == open_counts[reviewer.email]


def test_it_does_not_remind_twice_within_the_limit(client_for, admin_user, reviewer, world) -> None:
    campaign = world["campaign"]
    first = reminders_send(campaign=campaign, by=admin_user)
    assert reviewer.username in first.sent
    sent = len(mail.outbox)
    r = client_for(admin_user).post(reverse("review:campaign_remind", args=[campaign.code]), follow=True)
    assert len(mail.outbox) == sent
    assert b"Not reminded again (reminded in the last 12 h)" in r.content
    # Past the limit the reviewer is reminded again.
    ReviewerReminder.objects.update(sent_at=timezone.now() - REMIND_EVERY - timedelta(minutes=1))
    assert reviewer.username in reminders_send(campaign=campaign).sent


def test_it_skips_reviewers_without_email_and_refuses_in_a_closed_campaign(
    client_for, admin_user, reviewer, world
) -> None:
    campaign = world["campaign"]
    type(reviewer).objects.filter(pk=reviewer.pk).update(email="")
    result = reminders_send(campaign=campaign, by=admin_user)
    assert reviewer.username in result.no_email and not ReviewerReminder.objects.filter(reviewer=reviewer).exists()
    ReviewerReminder.objects.all().delete()
    mail.outbox.clear()
    campaign_close(campaign=campaign, by=admin_user)
    r = client_for(admin_user).post(reverse("review:campaign_remind", args=[campaign.code]), follow=True)
    assert b"No reminders sent: the campaign is closed" in r.content and not mail.outbox


def test_it_records_a_failed_mail_and_gives_its_claim_back(admin_user, reviewer, world, settings, tmp_path) -> None:
    # The file backend writing into a path that is a file, not a folder: a real backend error.
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    settings.EMAIL_BACKEND = "django.core.mail.backends.filebased.EmailBackend"
    settings.EMAIL_FILE_PATH = str(blocker / "mail")
    result = reminders_send(campaign=world["campaign"], by=admin_user)
    assert reviewer.username in result.failed and not result.sent
    assert not ReviewerReminder.objects.exists()  # the next press tries again


def test_the_command_reminds_open_campaigns(admin_user, reviewer, world, capsys) -> None:
    call_command("remind_reviewers")
    out = capsys.readouterr().out
    assert "Autumn study:" in out and "reminded" in out
    assert any(m.to == [reviewer.email] for m in mail.outbox)
    mail.outbox.clear()
    call_command("remind_reviewers")  # scheduled twice in a row: the rate limit holds
    assert not mail.outbox


# ---------------------------------------------------------------- reports and nav


def test_it_shows_open_reports_and_accepts_or_dismisses_them(client_for, admin_user, reviewer, world) -> None:
    campaign = world["campaign"]
    extra = make_reviewer("zed")
    campaign.members.create(reviewer=extra)
    first, *rest = world["mine"]
    accept = report_problem(assignment=first, reason="blinding_leak", note="names <b>the lab</b>")
    admin = client_for(admin_user)
    page = admin.get(reverse("review:campaign_detail", args=[campaign.code])).content.decode()
    assert "Problem reports (1 open)" in page and "names &lt;b&gt;the lab&lt;/b&gt;" in page
    assert reverse("review:report_resolve", args=[campaign.code, accept.pk]) in page
    r = admin.post(
        reverse("review:report_resolve", args=[campaign.code, accept.pk]), {"decision": "accept"}, follow=True
    )
    assert b"accepted: its slot was given back" in r.content and b"Problem reports (0 open)" in r.content
    # The confirmation names the item as the report table did (its item code), not the reviewer's assignment code.
    assert f"Report on item {first.item.code} accepted".encode() in r.content and first.item.code in page
    assert first.code.encode() not in r.content
    accept.refresh_from_db()
    first.refresh_from_db()
    assert accept.status == ItemReport.Status.ACCEPTED and accept.resolved_by == admin_user
    assert first.status == Assignment.Status.RETURNED
    assert (
        Assignment.objects.filter(item=first.item, status=Assignment.Status.ASSIGNED)
        .exclude(reviewer=reviewer)
        .exists()
    )
    r = admin.post(
        reverse("review:report_resolve", args=[campaign.code, accept.pk]), {"decision": "dismiss"}, follow=True
    )
    assert b"Not changed: report" in r.content and b"already accepted" in r.content
    assert rest, "the balanced plan gives remy two of the three items"
    dismiss = report_problem(assignment=rest[0], reason="other", note="")
    r = admin.post(
        reverse("review:report_resolve", args=[campaign.code, dismiss.pk]), {"decision": "dismiss"}, follow=True
    )
    assert f"Report on item {rest[0].item.code} dismissed.".encode() in r.content
    dismiss.refresh_from_db()
    rest[0].refresh_from_db()
    assert dismiss.status == ItemReport.Status.DISMISSED and rest[0].status == Assignment.Status.ASSIGNED


def test_the_invitations_link_is_in_the_nav_for_admins_only(client_for, people, other_reviewer) -> None:
    link = f'href="{reverse("review:invitations")}"'
    assert link in client_for(people["admin"]).get(reverse("review:campaign_list")).content.decode()
    for who in ("owner", "reviewer"):
        assert link not in client_for(people[who]).get(reverse("home"), follow=True).content.decode(), who
