"""Sessions through Django's database backend as shipped (config/settings.py says why not cached_db),
and the roles read through the ORM once per request."""

from __future__ import annotations

from importlib import import_module

import pytest
from django.conf import settings
from django.contrib.sessions.backends.db import SessionStore
from django.contrib.sessions.models import Session
from django.urls import reverse

from accounts.roles import _groups
from config.redis_server import free_port

pytestmark = pytest.mark.django_db


def test_the_platform_uses_djangos_database_sessions():
    assert import_module(settings.SESSION_ENGINE).SessionStore is SessionStore


def test_a_sign_out_ends_the_session_everywhere(client, reviewer):
    client.force_login(reviewer)
    key = client.cookies[settings.SESSION_COOKIE_NAME].value
    assert client.get(reverse("review:queue")).status_code == 200
    client.post(reverse("accounts:logout"))
    assert not Session.objects.filter(session_key=key).exists()
    assert SessionStore(session_key=key).load() == {}


def test_it_serves_signed_in_pages_while_redis_is_unreachable(client, reviewer, settings):
    client.force_login(reviewer)
    unreachable = f"redis://127.0.0.1:{free_port()}/0"
    settings.REDIS_URL = unreachable
    settings.CACHES = {
        name: {**conf, "LOCATION": unreachable} if "redis" in conf["BACKEND"].lower() else conf
        for name, conf in settings.CACHES.items()
    }
    assert client.get(reverse("review:queue")).status_code == 200


def test_roles_are_the_users_groups_read_once_per_request(reviewer, admin_user, django_assert_num_queries):
    assert _groups(reviewer) == {"reviewer"}
    fresh = type(admin_user).objects.get(pk=admin_user.pk)
    with django_assert_num_queries(1):
        assert _groups(fresh) == {"admin"} and _groups(fresh) == {"admin"}
