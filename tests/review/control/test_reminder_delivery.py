"""Reminders say what was really sent: without a mail server nothing is, and the admin sees what
would have been (each reminder's text, each invitation's new link); an invitee who never accepted
gets the invitation again instead of a reminder to a queue they cannot open. Through the real
views (the admin posts the remind form), Django's mail API (locmem outbox, console, file backends)."""

from __future__ import annotations

import html
import re
from datetime import timedelta

import pytest
from django.core import mail
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from django.utils import timezone

from accounts.models import Invitation
from accounts.services import invitation_accept, invitation_revoke
from review.assignment.services import campaign_assign
from review.campaigns.services import campaign_create
from review.models import Assignment, Campaign, ReviewerReminder
from tests.review.factories import make_paper, make_rubric

pytestmark = pytest.mark.django_db

CONSOLE = "django.core.mail.backends.console.EmailBackend"
INVITEE = "ina@uni.edu"
LINK = re.compile(r"https?://[^\s<\"]+/accounts/invite/([^/\s<\"]+)/")


@pytest.fixture
def campaign(client_for, admin_user, reviewer) -> Campaign:
    """Open, with a reviewer who has an account and an invitee who has not accepted; both hold work."""
    c = campaign_create(
        name="Winter study", rubric=make_rubric(), artifacts=[make_paper() for _ in range(2)], reviewers=[reviewer],
        reviewers_per_item=2, deadline=timezone.now() + timedelta(days=3),
    )  # fmt: skip
    r = client_for(admin_user).post(
        reverse("review:campaign_members_invite", args=[c.code]), {"emails": INVITEE, "days": "7"}
    )
    assert r.status_code == 302
    campaign_assign(campaign=c)
    assert Assignment.objects.filter(campaign=c, reviewer__email=INVITEE).count() == 2
    mail.outbox.clear()
    return c


def _remind(client, campaign: Campaign, **kw):
    return client.post(reverse("review:campaign_remind", args=[campaign.code]), **kw)


def _texts(response) -> str:
    return " ".join(str(m) for m in response.context["messages"]) if response.context else ""


def test_it_says_nothing_was_sent_without_a_mail_server_and_shows_what_would_have_been(
    client_for, admin_user, reviewer, campaign, settings, capsys
) -> None:
    settings.EMAIL_BACKEND = CONSOLE
    first = Invitation.objects.get(email=INVITEE)
    r = _remind(client_for(admin_user), campaign)
    page = html.unescape(r.content.decode())
    assert r.status_code == 200 and "no-cache" in r["Cache-Control"]
    texts = _texts(r)
    assert "No mail server is configured (EMAIL_HOST): nothing was sent" in texts
    assert "mailed" not in texts.replace("would have been mailed", "")
    assert f"Reminder not sent to 1 reviewer(s): {reviewer.username}" in texts
    # The reminder's own text, as it would have gone.
    assert "Referee: 2 items to review in Winter study" in page and reviewer.email in page
    assert "You have 2 items still open in the review campaign Winter study" in page
    # The invitee: a new link, shown this once, never in the messages cookie; the old one is revoked.
    [token] = LINK.findall(page)
    second = Invitation.objects.exclude(pk=first.pk).get(email=INVITEE)
    assert second.token_hash == Invitation.hash_token(token) and second.is_pending
    first.refresh_from_db()
    assert first.state() == Invitation.State.REVOKED
    assert campaign.members.get(reviewer__email=INVITEE).invitation == second
    assert token not in str(r.cookies)
    assert "Referee: 2 items to review" not in page.split('id="invitation-links"', 1)[1]  # no reminder for them
    # Nothing went anywhere, not even to the console, and nothing is recorded as sent.
    assert not mail.outbox and "Subject:" not in capsys.readouterr().out
    assert not ReviewerReminder.objects.exists()
    detail = client_for(admin_user).get(reverse("review:campaign_detail", args=[campaign.code])).content.decode()
    assert "last reminded" not in detail and token not in detail
    assert "invitation not accepted" in detail


def test_it_mails_the_invitation_again_instead_of_a_reminder_to_an_invitee_who_has_not_accepted(
    client_for, admin_user, reviewer, campaign
) -> None:
    first = Invitation.objects.get(email=INVITEE)
    admin = client_for(admin_user)
    r = _remind(admin, campaign, follow=True)
    texts = _texts(r)
    assert f"Reminder mailed to 1 reviewer(s): {reviewer.username}." in texts
    assert "Invitation mailed again to 1 invitee(s) who have not accepted it" in texts and INVITEE in texts
    by_address = {m.to[0]: m for m in mail.outbox}
    assert set(by_address) == {reviewer.email, INVITEE} and len(mail.outbox) == 2
    assert by_address[reviewer.email].subject == "Referee: 2 items to review in Winter study"
    invitation_mail = by_address[INVITEE]
    assert invitation_mail.subject == "Your Referee reviewer invitation" and "to review" not in invitation_mail.body
    [token] = LINK.findall(invitation_mail.body)
    second = Invitation.objects.get(token_hash=Invitation.hash_token(token))
    first.refresh_from_db()
    assert second.is_pending and first.state() == Invitation.State.REVOKED
    assert campaign.members.get(reviewer__email=INVITEE).invitation == second
    opened = client_for(None).get(f"/accounts/invite/{token}/", follow=True)
    assert opened.status_code == 200 and b"Choose a password" in opened.content  # the new link works
    # Rate-limited like a reminder: a second press (or a second admin) does not kill the mailed link.
    r = _remind(admin, campaign, follow=True)
    assert len(mail.outbox) == 2 and "Not reminded again" in _texts(r) and INVITEE in _texts(r)
    second.refresh_from_db()
    assert second.is_pending and Invitation.objects.filter(email=INVITEE).count() == 2


def test_it_reminds_an_invitee_once_they_have_accepted(client_for, admin_user, campaign) -> None:
    invitation_accept(invitation=Invitation.objects.get(email=INVITEE), password="a long passphrase 42")
    _remind(client_for(admin_user), campaign)
    [to_invitee] = [m for m in mail.outbox if m.to == [INVITEE]]
    assert to_invitee.subject == "Referee: 2 items to review in Winter study"
    assert Invitation.objects.filter(email=INVITEE).count() == 1


def test_it_leaves_an_invitee_whose_invitation_was_revoked_alone(client_for, admin_user, campaign) -> None:
    invitation_revoke(invitation=Invitation.objects.get(email=INVITEE), by=admin_user)
    r = _remind(client_for(admin_user), campaign, follow=True)
    assert "Invitation revoked and never accepted, neither reminded nor invited again: ina@uni.edu" in _texts(r)
    assert INVITEE not in {m.to[0] for m in mail.outbox}
    assert Invitation.objects.filter(email=INVITEE).count() == 1


def test_a_failed_invitation_mail_keeps_the_old_link_and_is_reported(
    client_for, admin_user, campaign, settings, tmp_path
) -> None:
    blocker = tmp_path / "not-a-dir"  # the file backend writing under a file: a real backend error
    blocker.write_text("x")
    settings.EMAIL_BACKEND = "django.core.mail.backends.filebased.EmailBackend"
    settings.EMAIL_FILE_PATH = str(blocker / "mail")
    first = Invitation.objects.get(email=INVITEE)
    r = _remind(client_for(admin_user), campaign, follow=True)
    texts = _texts(r)
    assert f"Reminder to {INVITEE} failed" in texts and "mailed" not in texts
    first.refresh_from_db()
    assert first.is_pending and Invitation.objects.filter(email=INVITEE).count() == 1  # undone, old link works
    assert campaign.members.get(reviewer__email=INVITEE).invitation == first
    assert not ReviewerReminder.objects.exists()  # claims given back: the next press tries again


def test_the_command_refuses_to_pretend_without_a_mail_server(campaign, settings) -> None:
    settings.EMAIL_BACKEND = CONSOLE
    with pytest.raises(CommandError, match="no mail server is configured"):
        call_command("remind_reviewers")
    assert Invitation.objects.filter(email=INVITEE).count() == 1 and not ReviewerReminder.objects.exists()


def test_the_command_reinvites_invitees_who_have_not_accepted(campaign, capsys) -> None:
    call_command("remind_reviewers")
    assert "1 reminded, 1 invited again (not accepted)" in capsys.readouterr().out
    assert [m.subject for m in mail.outbox if m.to == [INVITEE]] == ["Your Referee reviewer invitation"]


def test_only_admins_may_press_remind_and_nothing_is_sent_or_reissued_otherwise(
    client_for, people, other_reviewer, campaign, settings
) -> None:
    settings.EMAIL_BACKEND = CONSOLE  # the path that shows new links: the wall must hold there too
    url = reverse("review:campaign_remind", args=[campaign.code])
    for who in ("reviewer", "owner", "other"):
        assert client_for(people[who]).post(url).status_code == 403, who
    assert client_for(other_reviewer).post(url).status_code == 403
    invitee = campaign.members.get(reviewer__email=INVITEE).reviewer
    assert client_for(invitee).post(url).status_code == 403  # the invitee themself
    anonymous = client_for(None).post(url)
    assert anonymous.status_code == 302 and reverse("accounts:login") in anonymous["Location"]
    assert client_for(people["admin"]).get(url).status_code == 405  # no writes on GET
    bad = reverse("review:campaign_remind", args=["00000000-0000-0000-0000-000000000000"])
    assert client_for(people["admin"]).post(bad).status_code == 404
    assert Invitation.objects.filter(email=INVITEE).count() == 1 and not ReviewerReminder.objects.exists()
