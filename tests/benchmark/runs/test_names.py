"""Runs have names: the launch form's optional name and note, shown on the list and the run page,
searched by the list's "Name or note" filter, escaped everywhere (issue 33)."""

from __future__ import annotations

import pytest

from benchmark.models import Run
from tests.benchmark.runs_support import builtin_task

pytestmark = pytest.mark.django_db(transaction=True)

FORM = {
    "agent_kind": "baseline",
    "temperature": 0,
    "top_p": 0.95,
    "history_window": 5,
    "n_runs": 2,
    "max_steps": 5,
    "cost_limit": 1,
    "command_timeout": 60,
}


def test_a_launch_carries_its_name_and_note_to_the_list_and_the_run_page(researcher, client_for, redis_client):
    task = builtin_task("prisoners_dilemma")
    client = client_for(researcher)
    title, note = "tit-for-tat <b>check</b>", "does the starter still play? <script>x()</script>"
    response = client.post("/runs/launch/", {**FORM, "tasks": [task.pk], "title": title, "note": note})
    assert response.status_code == 302
    runs = list(Run.objects.select_related("group"))
    assert len(runs) == 2 and {(r.group.title, r.group.note) for r in runs} == {(title, note)}
    page = client.get(f"/runs/{runs[0].code}/").content.decode()
    assert "tit-for-tat &lt;b&gt;check&lt;/b&gt;" in page and "&lt;script&gt;x()&lt;/script&gt;" in page
    assert "<script>x()" not in page
    listing = client.get("/runs/").content.decode()
    assert "tit-for-tat &lt;b&gt;check&lt;/b&gt;" in listing


def test_the_list_finds_runs_by_name_or_note_and_only_those(researcher, client_for, redis_client):
    task = builtin_task("prisoners_dilemma")
    client = client_for(researcher)
    client.post("/runs/launch/", {**FORM, "n_runs": 1, "tasks": [task.pk], "title": "alpha", "note": "longer history"})
    client.post("/runs/launch/", {**FORM, "n_runs": 1, "tasks": [task.pk], "title": "beta"})
    client.post("/runs/launch/", {**FORM, "n_runs": 1, "tasks": [task.pk]})  # unnamed
    alpha = Run.objects.get(group__title="alpha")
    by_note = client.get("/runs/", {"named": "HISTORY"}).context["page"].object_list
    assert [r.code for r in by_note] == [alpha.code]
    by_name = client.get("/runs/", {"named": "bet"}).context["page"].object_list
    assert [r.group.title for r in by_name] == ["beta"]
    assert len(client.get("/runs/").context["page"].object_list) == 3


def test_another_researcher_neither_sees_nor_finds_a_named_run(researcher, other_researcher, client_for, redis_client):
    task = builtin_task("prisoners_dilemma")
    client_for(researcher).post("/runs/launch/", {**FORM, "n_runs": 1, "tasks": [task.pk], "title": "secret plan"})
    other = client_for(other_researcher)
    assert list(other.get("/runs/", {"named": "secret"}).context["page"].object_list) == []
    run = Run.objects.get()
    assert other.get(f"/runs/{run.code}/").status_code in (403, 404)


def test_a_name_too_long_is_refused_with_the_field_named(researcher, client_for, redis_client):
    task = builtin_task("prisoners_dilemma")
    response = client_for(researcher).post("/runs/launch/", {**FORM, "tasks": [task.pk], "title": "x" * 201})
    assert response.status_code == 200 and not Run.objects.exists()
    assert "title" in response.context["form"].errors


def test_a_run_takes_the_tasks_training_timeout_unless_the_launch_sets_one(researcher, client_for, redis_client):
    from benchmark.runs.timeouts import DEFAULT_COMMAND_TIMEOUT, command_timeout_of

    task = builtin_task("prisoners_dilemma")
    task.config = {**task.config, "training_timeout": 3600}
    task.save(update_fields=["config"])
    client = client_for(researcher)
    client.post("/runs/launch/", {**FORM, "n_runs": 1, "tasks": [task.pk], "command_timeout": ""})
    client.post("/runs/launch/", {**FORM, "n_runs": 1, "tasks": [task.pk], "command_timeout": 90})
    blank, set_ = Run.objects.order_by("id")
    assert command_timeout_of(blank) == 3600 and command_timeout_of(set_) == 90
    task.config = {k: v for k, v in task.config.items() if k != "training_timeout"}
    task.save(update_fields=["config"])
    blank.refresh_from_db()
    assert command_timeout_of(blank) == DEFAULT_COMMAND_TIMEOUT
