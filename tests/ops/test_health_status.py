"""/healthz under the supervisor: a part that is restarting makes the platform degraded, not down."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from config.health import overall_status


def _supervisor(**states: tuple[str, str]) -> dict:
    children = {name: {"part": part, "state": state} for name, (part, state) in states.items()}
    return {"ok": all(c["state"] == "running" for c in children.values()), "children": children}


OK = {"ok": True}
DOWN = {"ok": False}


def test_it_is_ok_when_every_part_is():
    assert overall_status({"database": OK, "redis": OK}) == "ok"
    assert overall_status({"database": OK, "supervisor": _supervisor(w=("workers", "running"))}) == "ok"


def test_it_is_degraded_while_a_child_restarts_even_if_every_check_passes():
    parts = {"database": OK, "workers": OK, "supervisor": _supervisor(w=("workers", "starting"))}
    assert overall_status(parts) == "degraded"


def test_it_explains_missing_workers_and_redis_by_the_children_restarting():
    workers_down = {"database": OK, "redis": OK, "workers": DOWN}
    assert overall_status({**workers_down, "supervisor": _supervisor(w=("workers", "restarting"))}) == "degraded"
    redis_down = {"database": OK, "redis": DOWN, "workers": DOWN}
    assert overall_status({**redis_down, "supervisor": _supervisor(r=("redis", "restarting"))}) == "degraded"
    # A worker restarting does not explain Redis being down; a web process explains nothing.
    assert overall_status({**redis_down, "supervisor": _supervisor(w=("workers", "restarting"))}) == "down"
    assert overall_status({**workers_down, "supervisor": _supervisor(w=("web", "restarting"))}) == "down"


def test_it_is_down_when_a_part_fails_without_a_supervisor_or_with_all_children_running():
    assert overall_status({"database": DOWN, "redis": OK}) == "down"
    parts = {"database": OK, "redis": DOWN, "supervisor": _supervisor(r=("redis", "running"))}
    assert overall_status(parts) == "down"


def _write_state(var_dir: Path, children: dict) -> None:
    (var_dir / "up").mkdir(parents=True)
    (var_dir / "up" / "state.json").write_text(json.dumps({"pid": os.getpid(), "children": children}))


@pytest.mark.django_db(transaction=True)
def test_it_answers_200_degraded_while_the_worker_behind_a_missing_queue_restarts(
    admin_client, settings, tmp_path, redis_client
):
    settings.VAR_DIR = tmp_path
    settings.SANDBOX_BACKEND, settings.SANDBOX_ALLOW_LOCAL = "local", True  # a sandbox part that is up anywhere
    children = {"worker runs #1": {"part": "workers", "state": "restarting", "pid": None, "restarts": 1}}
    _write_state(tmp_path, children)
    response = admin_client.get(reverse("healthz"))
    body = response.json()
    assert body["workers"]["ok"] is False  # no live worker in this test session
    assert (response.status_code, body["status"]) == (200, "degraded")
    assert body["supervisor"]["error"] == "restarting: worker runs #1"
    # To anyone else a degraded platform is up, and nothing more is said.
    anonymous = Client().get(reverse("healthz"))
    assert (anonymous.status_code, anonymous.json()) == (200, {"ok": True})


@pytest.mark.django_db
def test_it_counts_a_child_whose_pid_died_as_restarting(admin_client, settings, tmp_path):
    settings.VAR_DIR = tmp_path
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # Redis is down ...
    dead = 2**22 + 7  # above the default pid_max: no such process
    _write_state(tmp_path, {"redis": {"part": "redis", "state": "running", "pid": dead, "restarts": 0}})
    body = admin_client.get(reverse("healthz")).json()
    # ... and its process died a moment ago: the supervisor is about to restart it.
    assert body["supervisor"]["children"]["redis"]["state"] == "restarting"
    assert body["redis"]["ok"] is False


@pytest.mark.django_db
def test_it_ignores_the_state_of_a_supervisor_that_is_gone(admin_client, settings, tmp_path):
    settings.VAR_DIR = tmp_path
    (tmp_path / "up").mkdir()
    (tmp_path / "up" / "state.json").write_text(json.dumps({"pid": 2**22 + 7, "children": {}}))
    assert "supervisor" not in admin_client.get(reverse("healthz")).json()
