from io import StringIO

import pytest
from django.core import mail
from django.core.management import CommandError, call_command

from accounts.roles import is_reviewer


def _invite(email, expertise=""):
    out = StringIO()
    call_command("invite_reviewer", email, "--expertise", expertise, stdout=out)
    return out.getvalue()


def test_it_creates_a_reviewer_and_prints_a_one_time_link(db, client):
    from django.contrib.auth import get_user_model

    output = _invite("new.expert@example.org", "NLP, rl")
    user = get_user_model().objects.get(email="new.expert@example.org")
    assert is_reviewer(user) and not user.has_usable_password()
    assert user.profile.expertise == ["nlp", "rl"]
    assert len(mail.outbox) == 1
    link = output.strip().splitlines()[-1]
    path = link.split("://", 1)[1].split("/", 1)[1]
    response = client.get("/" + path, follow=True)
    assert response.status_code == 200 and b"Choose a password" in response.content
    form_url = response.redirect_chain[-1][0]
    done = client.post(form_url, {"new_password1": "a-long-Secret-42", "new_password2": "a-long-Secret-42"})
    assert done.status_code == 302
    # The link worked once: the password hash changed, so the token is dead.
    client.logout()
    again = client.get("/" + path, follow=True)
    assert b"no longer works" in again.content


def test_it_rejects_a_bad_email(db):
    with pytest.raises(CommandError, match="not an email"):
        _invite("not-an-email")


def test_it_creates_the_admin_once(db, monkeypatch):
    monkeypatch.delenv("REFEREE_ADMIN_PASSWORD", raising=False)
    first, second = StringIO(), StringIO()
    call_command("ensure_admin", stdout=first)
    call_command("ensure_admin", stdout=second)
    assert "password:" in first.getvalue()
    assert "exists" in second.getvalue() and "password:" not in second.getvalue()
