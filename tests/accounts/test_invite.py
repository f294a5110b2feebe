"""Invitations: one-time links that expire, can be revoked, and never change an existing account's roles."""

from datetime import timedelta
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.core.management import CommandError, call_command
from django.utils import timezone

from accounts.models import Invitation
from accounts.roles import is_admin, is_researcher, is_reviewer

PASSWORD = "a-long-Secret-42"


def _invite(email, *args):
    out = StringIO()
    call_command("invite_reviewer", email, *args, stdout=out)
    return out.getvalue()


def _path(output: str) -> str:
    link = output.strip().splitlines()[-1]
    return "/" + link.split("://", 1)[1].split("/", 1)[1]


def _set_password(client, path):
    """Open the link and submit a password; (final response, the form's URL)."""
    opened = client.get(path, follow=True)
    form_url = opened.redirect_chain[-1][0] if opened.redirect_chain else "/accounts/invite/"
    return client.post(form_url, {"new_password1": PASSWORD, "new_password2": PASSWORD}), opened


def _user(email):
    return get_user_model().objects.get(email=email)


def test_it_creates_a_reviewer_and_prints_a_one_time_link(db, client):
    output = _invite("new.expert@example.org", "--expertise", "NLP, rl")
    user = _user("new.expert@example.org")
    assert is_reviewer(user) and not user.has_usable_password()
    assert user.profile.expertise == ["nlp", "rl"]
    assert len(mail.outbox) == 1 and _path(output).split("/")[-2] in mail.outbox[0].body
    response = client.get(_path(output), follow=True)
    assert response.status_code == 200 and b"Choose a password" in response.content
    # The token left the URL at once: the page that follows (and its Referer) does not carry it.
    form_url = response.redirect_chain[-1][0]
    assert _path(output).split("/")[-2] not in form_url
    done = client.post(form_url, {"new_password1": PASSWORD, "new_password2": PASSWORD})
    assert done.status_code == 302 and done["Location"] == "/"
    user.refresh_from_db()
    assert user.check_password(PASSWORD) and client.get("/review/").status_code == 200  # signed in
    # The link worked once.
    client.logout()
    again = client.get(_path(output), follow=True)
    assert again.status_code == 410 and b"no longer works" in again.content and b"already used" in again.content


def test_it_stores_only_a_hash_of_the_token(db):
    output = _invite("hash@example.org")
    token = _path(output).rstrip("/").split("/")[-1]
    invitation = Invitation.objects.get(email="hash@example.org")
    assert invitation.token_hash == Invitation.hash_token(token) and token not in invitation.token_hash
    assert all(token not in str(value) for value in Invitation.objects.values().get().values())
    assert invitation.roles == ["reviewer"] and invitation.created_account
    assert invitation.expires_at - invitation.created_at == pytest.approx(timedelta(days=14), abs=timedelta(seconds=5))


@pytest.mark.parametrize("persona", ["admin_user", "researcher"])
def test_it_refuses_an_existing_admin_or_researcher_email_without_add_role(persona, request, client):
    user = request.getfixturevalue(persona)
    with pytest.raises(CommandError, match=r"already has the account .*would add the role\(s\) reviewer.*--add-role"):
        _invite(user.email)
    user = _user(user.email)
    assert not is_reviewer(user) and user.has_usable_password()
    assert Invitation.objects.count() == 0 and mail.outbox == []


def test_it_adds_the_role_only_when_the_signed_in_holder_accepts(researcher, client_for):
    output = _invite(researcher.email, "--add-role")
    assert "can see runs and judgments" in output and "refused for every campaign" in output
    assert not is_reviewer(_user(researcher.email))  # nothing changed yet
    # The link alone sets no password and adds no role: it asks for the account's own sign-in.
    anonymous = client_for(None)
    opened = anonymous.get(_path(output), follow=True)
    assert opened.redirect_chain[-1][0].startswith("/accounts/login/")
    posted = anonymous.post("/accounts/invite/", {"new_password1": "x-Evil-12345", "new_password2": "x-Evil-12345"})
    assert posted.status_code == 302 and posted["Location"].startswith("/accounts/login/")
    user = _user(researcher.email)
    assert user.check_password("pw-rita_researcher") and not is_reviewer(user)
    # Someone else signed in gets nothing either.
    other = get_user_model().objects.create_user("mallory", "mallory@example.org", "pw-mallory")
    theirs = client_for(other)
    theirs.get(_path(output))
    refused = theirs.post("/accounts/invite/")
    assert refused.status_code == 403 and b"for another account" in refused.content
    assert not is_reviewer(_user(researcher.email))
    # The holder, signed in, confirms.
    holder = client_for(researcher)
    page = holder.get(_path(output), follow=True)
    assert b"adds the role(s)" in page.content and b"will not be assigned" in page.content
    assert holder.post("/accounts/invite/").status_code == 302
    user = _user(researcher.email)
    assert is_reviewer(user) and is_researcher(user) and user.check_password("pw-rita_researcher")
    assert Invitation.objects.get().state() == "used"


def test_it_never_makes_an_admin_of_anyone(db):
    _invite("plain@example.org")
    assert not is_admin(_user("plain@example.org")) and not _user("plain@example.org").is_staff


@pytest.mark.parametrize("how", ["revoked", "expired"])
def test_it_says_plainly_that_a_revoked_or_expired_link_does_nothing(how, db, client):
    output = _invite("late@example.org")
    invitation = Invitation.objects.get()
    if how == "revoked":
        call_command("revoke_invitation", "late@example.org", stdout=StringIO())
    else:
        Invitation.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    response, opened = _set_password(client, _path(output))
    said = {"revoked": b"was revoked on", "expired": b"expired on"}[how]
    assert opened.status_code == 410 and said in opened.content
    assert b"Nothing was changed" in opened.content
    assert response.status_code == 404  # a dead link never reaches the session: a submit finds nothing
    assert not _user("late@example.org").has_usable_password()
    assert Invitation.objects.get(pk=invitation.pk).used_at is None


def test_it_honours_a_revocation_that_lands_while_the_page_is_open(db, client):
    output = _invite("open@example.org")
    opened = client.get(_path(output), follow=True)
    assert b"Choose a password" in opened.content
    call_command("revoke_invitation", str(Invitation.objects.get().code), stdout=StringIO())
    response = client.post(opened.redirect_chain[-1][0], {"new_password1": PASSWORD, "new_password2": PASSWORD})
    assert response.status_code == 410 and b"revoked" in response.content
    assert not _user("open@example.org").has_usable_password()


def test_it_refuses_a_reused_link_also_from_a_second_tab(db, client_for):
    output = _invite("twice@example.org")
    first, second = client_for(None), client_for(None)
    first.get(_path(output))
    second.get(_path(output))  # both tabs opened the link before either submitted
    assert first.post("/accounts/invite/", {"new_password1": PASSWORD, "new_password2": PASSWORD}).status_code == 302
    late = second.post("/accounts/invite/", {"new_password1": "Other-pass-987", "new_password2": "Other-pass-987"})
    assert late.status_code == 410 and b"already used" in late.content
    assert _user("twice@example.org").check_password(PASSWORD)


def test_it_replaces_the_pending_link_when_an_email_is_invited_again(db, client):
    first = _invite("again@example.org")
    second = _invite("again@example.org")  # an existing reviewer: no role is added, no flag needed
    assert "earlier pending invitation(s) of again@example.org revoked" in second
    assert client.get(_path(first)).status_code == 410
    response, _ = _set_password(client, _path(second))
    assert response.status_code == 302


def test_it_refuses_an_unknown_token_and_a_session_without_one(db, client):
    response = client.get("/accounts/invite/not-a-token/")
    assert response.status_code == 404 and b"not a valid invitation" in response.content
    assert client.get("/accounts/invite/").status_code == 404
    assert client.post("/accounts/invite/", {"new_password1": PASSWORD, "new_password2": PASSWORD}).status_code == 404


def test_it_refuses_other_methods_on_the_link(db, client):
    output = _invite("method@example.org")
    assert client.post(_path(output)).status_code == 405
    assert client.put("/accounts/invite/").status_code == 405


def test_it_does_not_reopen_a_deactivated_account(db):
    user = get_user_model().objects.create_user("gone", "gone@example.org", "pw-gone", is_active=False)
    with pytest.raises(CommandError, match="deactivated"):
        _invite(user.email, "--add-role")
    assert Invitation.objects.count() == 0


def test_it_revokes_by_code_once(db):
    _invite("code@example.org")
    code = str(Invitation.objects.get().code)
    out = StringIO()
    call_command("revoke_invitation", code, stdout=out)
    assert "revoked" in out.getvalue()
    with pytest.raises(CommandError, match="is revoked: nothing to revoke"):
        call_command("revoke_invitation", code, stdout=StringIO())
    with pytest.raises(CommandError, match="no invitation"):
        call_command("revoke_invitation", "nope", stdout=StringIO())


def test_it_takes_the_lifetime_from_the_setting(db, settings):
    settings.INVITATION_TTL_DAYS = 2
    _invite("short@example.org")
    invitation = Invitation.objects.get()
    assert invitation.expires_at - invitation.created_at == pytest.approx(timedelta(days=2), abs=timedelta(seconds=5))


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


def test_it_lists_invitations_to_admins_read_only_with_a_revoke_action(db, client_for, admin_user, researcher):
    _invite("listed@example.org")
    invitation = Invitation.objects.get()
    url = "/admin/accounts/invitation/"
    page = client_for(admin_user).get(url)
    assert page.status_code == 200 and b"listed@example.org" in page.content and b"pending" in page.content
    assert invitation.token_hash.encode() not in page.content
    assert client_for(admin_user).get(f"{url}add/").status_code == 403  # made by invite_reviewer only
    done = client_for(admin_user).post(url, {"action": "revoke", "_selected_action": [invitation.pk]}, follow=True)
    assert b"1 invitation(s) revoked" in done.content
    invitation.refresh_from_db()
    assert invitation.state() == "revoked" and invitation.revoked_by == admin_user
    assert client_for(researcher).get(url).status_code == 302  # not staff: the admin's own login page
