"""Importing MLGym's released .traj files, displaying them, and exporting runs as .traj."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command

from benchmark.models import Run, Score
from benchmark.runs.trajectories import TrajImportError, traj_import

TRAJ_DIR = Path(settings.MLGYM_DIR or "/nonexistent") / "trajectories"
needs_data = pytest.mark.shared_data(TRAJ_DIR)


@pytest.fixture(scope="module")
def imported(django_db_setup, django_db_blocker):
    """The 39 files, imported once for the module (read-only afterwards)."""
    from benchmark.models import AgentConfig, RunGroup, Task

    models = (Run, RunGroup, AgentConfig, Task)  # in the order they can be deleted
    with django_db_blocker.unblock():
        before = {model: model.objects.order_by("-pk").values_list("pk", flat=True).first() or 0 for model in models}
        out = StringIO()
        call_command("import_mlgym_traj", str(TRAJ_DIR), stdout=out)
        yield out.getvalue()
        # Committed outside any test transaction: remove every row the import made.
        for model in models:
            model.objects.filter(pk__gt=before[model]).delete()


@needs_data
@pytest.mark.django_db
def test_it_imports_all_39_released_trajectories(imported):
    assert "39 imported, 0 already present, 0 failed, of 39" in imported
    runs = Run.objects.filter(source=Run.Source.MLGYM).select_related("task", "agent")
    assert runs.count() == 39
    assert {r.method for r in runs} == {"claude-35-sonnet-new", "gemini-15-pro", "gpt4o2"}
    assert len({r.task.slug for r in runs}) == 13
    for run in runs:
        assert run.status == Run.Status.FINISHED and run.step_count == run.steps.count() > 0
        assert run.api_calls > 0 and run.tokens_sent > 0
    statuses = {r.exit_status for r in runs}
    assert {"submitted", "autosubmission (max_steps)", "autosubmission (exit_cost)"} <= statuses


@needs_data
@pytest.mark.django_db
def test_it_keeps_the_released_numbers(imported):
    file = next(TRAJ_DIR.rglob("metagen-claude-35-sonnet-new__prisonersDilemma__*/prisonersDilemma.traj"))
    data = json.loads(file.read_text())
    run = Run.objects.get(source=Run.Source.MLGYM, params__import__folder=file.parent.name)
    assert run.cost == pytest.approx(data["info"]["model_stats"]["total_cost"])
    assert run.exit_status == data["info"]["exit_status"] == "autosubmission (max_steps)"
    assert run.task.metric == "Score" and run.agent.temperature == 0.0
    released = [s["Score"] for s in data["info"]["score"]]
    assert run.best_attempt == pytest.approx(max(released))
    assert run.best_submission == pytest.approx(released[-1])
    scores = list(run.scores.order_by("id"))
    assert [s.kind for s in scores].count(Score.Kind.SUBMIT) == 1 and scores[-1].kind == Score.Kind.SUBMIT
    assert scores[0].step.action.strip() == "validate"
    first = run.steps.get(index=1)
    assert first.action == data["trajectory"][0]["action"] and first.state["working_dir"] == "/home/agent/workspace"


@needs_data
@pytest.mark.django_db
def test_it_does_not_import_the_same_file_twice(imported):
    out = StringIO()
    call_command("import_mlgym_traj", str(TRAJ_DIR), stdout=out)
    assert "0 imported, 39 already present" in out.getvalue()


@needs_data
@pytest.mark.django_db
def test_it_shows_an_imported_run_with_model_task_exit_status_cost_and_scores(imported, admin_user, client_for):
    run = Run.objects.filter(source=Run.Source.MLGYM, exit_status="submitted").first()
    page = client_for(admin_user).get(f"/runs/{run.code}/").content.decode()
    assert run.agent.name in page and run.task.title in page and "submitted" in page
    assert f"${run.cost:.4f}" in page and "imported from MLGym" in page
    assert str(run.best_attempt)[:6] in page
    listing = client_for(admin_user).get("/runs/").content.decode()
    assert listing.count("<td>imported from MLGym</td>") == 39  # one row each (the source menu names it too)


@needs_data
@pytest.mark.django_db
def test_it_exports_a_run_as_an_mlgym_traj_that_imports_back(imported, admin_user, client_for, tmp_path):
    file = next(TRAJ_DIR.rglob("metagen-gpt4o2__blotto__*/blotto.traj"))
    original = json.loads(file.read_text())
    run = Run.objects.get(source=Run.Source.MLGYM, params__import__folder=file.parent.name)
    response = client_for(admin_user).get(f"/runs/{run.code}/export.traj")
    assert response["Content-Disposition"].endswith('.traj"')
    exported = json.loads(response.content)
    assert set(exported) == {"environment", "trajectory", "history", "info"}
    keys = ("action", "observation", "response", "thought")
    assert [{k: s[k] for k in keys} for s in exported["trajectory"]] == [
        {k: s[k] for k in keys} for s in original["trajectory"]
    ]
    assert exported["info"]["exit_status"] == original["info"]["exit_status"]
    assert exported["info"]["score"] == original["info"]["score"]
    assert exported["history"][0]["content"] == original["history"][0]["content"]
    again = tmp_path / ("exported-" + file.parent.name) / "blotto.traj"
    again.parent.mkdir()
    again.write_text(json.dumps(exported))
    copy, created = traj_import(again)
    assert created and copy.step_count == run.step_count and copy.best_submission == run.best_submission


@pytest.mark.django_db
def test_it_names_the_file_and_field_of_a_bad_trajectory(tmp_path):
    bad = tmp_path / "x.traj"
    bad.write_text(json.dumps({"trajectory": [{"observation": "no action"}], "info": {}}))
    with pytest.raises(TrajImportError, match=r"x.traj:1: trajectory\[0\].action: missing"):
        traj_import(bad)
    (tmp_path / "y.traj").write_text("{not json")
    good_dir = tmp_path / "m__prisonersDilemma__default__t-0.00__p-0.95__c-4.00__install-0__parallel_agents_run_0"
    good_dir.mkdir()
    (good_dir / "prisonersDilemma.traj").write_text(
        json.dumps({"trajectory": [{"action": "ls\n"}], "info": {"exit_status": "submitted"}})
    )
    out = StringIO()
    call_command("import_mlgym_traj", str(tmp_path), stdout=out)
    text = out.getvalue()
    assert "y.traj:1: file: not JSON" in text and "x.traj:1: trajectory[0].action: missing" in text
    assert "1 imported, 0 already present, 2 failed, of 3" in text
