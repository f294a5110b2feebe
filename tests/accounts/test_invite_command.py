"""`invite_reviewer` prints its link once, takes an expiry, and builds the link the site serves; resending."""

from datetime import timedelta
from io import StringIO

import pytest
from django.core import mail
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from accounts.models import Invitation
from accounts.services import InvitationRefused, invitation_create, invitation_link, invitation_resend

CONSOLE = "django.core.mail.backends.console.EmailBackend"


def _invite(*args: str) -> str:
    out = StringIO()
    call_command("invite_reviewer", *args, stdout=out)
    return out.getvalue()


def test_it_prints_the_link_once_and_sends_nothing_without_a_mail_server(db, settings, capsys) -> None:
    settings.EMAIL_BACKEND = CONSOLE
    output = _invite("solo@example.org")
    printed = output + capsys.readouterr().out  # what the console mail backend would have printed too
    invitation = Invitation.objects.get(email="solo@example.org")
    assert printed.count("/accounts/invite/") == 1
    assert "no mail server is configured" in output and invitation.is_pending


def test_it_mails_the_link_when_a_mail_server_is_configured(db) -> None:
    output = _invite("mailed@example.org")
    assert len(mail.outbox) == 1 and output.strip().splitlines()[-1] in mail.outbox[0].body
    assert "no mail server" not in output


def test_it_sets_the_expiry_in_days(db) -> None:
    _invite("short@example.org", "--days", "2")
    left = Invitation.objects.get(email="short@example.org").expires_at - timezone.now()
    assert timedelta(days=1, hours=23) < left <= timedelta(days=2)
    with pytest.raises(InvitationRefused, match="1 to 365 days"):
        invitation_create(email="long@example.org", roles=["reviewer"], ttl_days=0)


def test_it_builds_the_link_the_site_serves(db, settings) -> None:
    settings.SITE_URL = "https://referee.example.org/"
    assert invitation_link("tok") == "https://referee.example.org" + reverse("accounts:invitation_open", args=["tok"])


def test_it_resends_with_a_new_link_and_kills_the_old_one(db, client) -> None:
    first = invitation_create(email="again@example.org", roles=["reviewer"], expertise=["nlp"], ttl_days=3)
    second = invitation_resend(invitation=first.invitation)
    first.invitation.refresh_from_db()
    assert first.invitation.state() == Invitation.State.REVOKED
    assert second.invitation.is_pending and second.invitation.expertise == ["nlp"] and second.link != first.link
    assert client.get(_path(first.link)).status_code == 410
    assert client.get(_path(second.link)).status_code == 302
    Invitation.objects.filter(pk=second.invitation.pk).update(used_at=timezone.now())
    second.invitation.refresh_from_db()
    with pytest.raises(InvitationRefused, match="used already"):
        invitation_resend(invitation=second.invitation)


def _path(link: str) -> str:
    return "/" + link.split("://", 1)[1].split("/", 1)[1]
