"""accounts.sessions: Django's database sessions, the request's row read with SQL built once."""

from __future__ import annotations

from datetime import timedelta
from importlib import import_module

import pytest
from django.conf import settings
from django.contrib.sessions.models import Session
from django.urls import reverse
from django.utils import timezone

from accounts.roles import _groups
from accounts.sessions import SessionStore

pytestmark = pytest.mark.django_db


def test_the_platform_uses_it():
    assert import_module(settings.SESSION_ENGINE).SessionStore is SessionStore


def test_a_stored_session_reads_back_and_an_expired_or_unknown_one_does_not():
    store = SessionStore()
    store["answer"] = {"n": 42, "text": "ünïcode"}
    store.save()
    key = store.session_key
    assert SessionStore(session_key=key).load() == {"answer": {"n": 42, "text": "ünïcode"}}

    Session.objects.filter(session_key=key).update(expire_date=timezone.now() - timedelta(seconds=1))
    expired = SessionStore(session_key=key)
    assert expired.load() == {}
    assert expired.session_key is None  # as Django's: a new session starts, the old key is not reused

    unknown = SessionStore(session_key="x" * 32)
    assert unknown.load() == {} and unknown.session_key is None


def test_signing_in_and_out_works_through_it(client, reviewer):
    client.force_login(reviewer)
    assert client.get(reverse("review:queue")).status_code == 200
    key = client.cookies[settings.SESSION_COOKIE_NAME].value
    Session.objects.filter(session_key=key).delete()  # signed out elsewhere, or by an admin
    assert client.get(reverse("review:queue")).status_code == 302


def test_roles_are_the_users_groups(reviewer, admin_user):
    assert _groups(reviewer) == set(reviewer.groups.values_list("name", flat=True)) == {"reviewer"}
    fresh = type(admin_user).objects.get(pk=admin_user.pk)
    assert _groups(fresh) == set(admin_user.groups.values_list("name", flat=True))
