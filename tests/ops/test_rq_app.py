"""django-rq without its start cost (config/rq): same commands, same dashboard, nothing loaded early."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import import_module
from pathlib import Path

from django.contrib.auth.models import Permission
from django.contrib.staticfiles import finders
from django.core.management import get_commands, load_command_class
from django.urls import reverse

from accounts.services import roles_ensure
from config.rq import django_rq_dir

BASE = Path(__file__).resolve().parents[2]


def test_it_offers_every_command_django_rq_ships():
    shipped = {p.stem for p in (django_rq_dir() / "management" / "commands").glob("*.py") if p.stem != "__init__"}
    assert "rqworker" in shipped
    commands = get_commands()
    for name in shipped:
        assert commands.get(name) == "config.rq", name
        command = load_command_class("config.rq", name)
        assert isinstance(command, import_module(f"django_rq.management.commands.{name}").Command)


def test_a_command_starts_without_redis_rq_or_django_rq(tmp_path):
    probe = (
        "import sys, json, django; django.setup()\n"
        "from django.core.management import get_commands; get_commands()\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules} & {'redis', 'rq', 'django_rq'})))"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "REFEREE_VAR_DIR": str(tmp_path)}
    result = subprocess.run([sys.executable, "-c", probe], cwd=BASE, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == []


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
