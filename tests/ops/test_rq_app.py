"""django-rq as its authors ship it: the app installed under its own module, its commands, and its
dashboard in the admin with its permission."""

from __future__ import annotations

from django.apps import apps
from django.contrib.auth.models import Permission
from django.contrib.staticfiles import finders
from django.core.management import get_commands
from django.urls import reverse

from accounts.services import roles_ensure


def test_it_installs_django_rq_itself_and_its_commands():
    assert apps.get_app_config("django_rq").module.__name__ == "django_rq"
    commands = get_commands()
    for name in ("rqworker", "rqstats", "rqenqueue", "rqscheduler", "rqsuspend", "rqresume"):
        assert commands.get(name) == "django_rq", name


def test_the_dashboard_keeps_django_rqs_permission_and_pages(admin_user, reviewer, client_for):
    roles_ensure()
    assert Permission.objects.filter(content_type__app_label="django_rq", codename="admin").exists()
    admin_user.refresh_from_db()
    assert admin_user.has_module_perms("django_rq")
    client = client_for(admin_user)
    index = client.get(reverse("admin:index"))
    assert reverse("admin:django_rq_dashboard_changelist").encode() in index.content
    assert b"runs" in client.get(reverse("admin:django_rq_home")).content  # the queues' table
    page = client.get(reverse("admin:django_rq_jobs", args=[0]))  # the first queue's jobs
    assert page.status_code == 200
    assert client_for(reviewer).get(reverse("admin:django_rq_jobs", args=[0])).status_code == 302
    assert finders.find("django_rq/css/admin.css")
