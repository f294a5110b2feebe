"""A column is one task: Referee's ports and MLGym's releases apart, each column's baseline from
its own source; research experiments kept off, the runs behind a cell, text exports."""

from __future__ import annotations

import json
import uuid

import pytest
from django.urls import reverse

from benchmark.models import Run, Task
from tests.benchmark.leaderboards.test_pages import PAGE, aup_table, download, make_run

CELL = reverse("benchmark:leaderboard_cell")
COMPUTED = {"test": {"primary": 1.2, "metrics": {"Score": 1.2}, "error": ""}}


def game(slug: str, *, source: str, baseline: dict, title: str = "") -> Task:
    return Task.objects.create(
        slug=slug,
        version_hash=uuid.uuid4().hex * 2,
        kind=Task.Kind.MLGYM,
        title=title or slug,
        metric="Score",
        direction=Task.Direction.MAX,
        source=source,
        baseline_scores=baseline,
    )


def released(task: Task, method: str, attempt: float, folder: str, baseline: float | None = 1.0227) -> Run:
    """An imported run as import_mlgym_results stores it: the release's baseline on the run."""
    return make_run(
        task,
        method=method,
        attempt=attempt,
        source=Run.Source.MLGYM,
        params={"mlgym_folder": folder, "mlgym_baseline": {} if baseline is None else {"Score": baseline}},
    )


@pytest.fixture
def games(db) -> dict[str, Task]:
    return {
        "referee": game("battle_of_sexes", source="builtin", baseline=COMPUTED, title="Battle of the Sexes"),
        # MLGym's own task as the loader stores it: no computed baseline on this machine yet.
        "mlgym": game("battleOfSexes", source="mlgym", baseline={}),
    }


def test_it_keeps_a_referee_port_and_mlgyms_task_in_columns_of_their_own(client_for, researcher, games):
    make_run(games["referee"], method="rita-agent", owner=researcher, attempt=1.4)
    released(games["mlgym"], "gpt-o1", 1.44, "b")
    released(games["mlgym"], "gpt-o1", 1.1, "a", baseline=1.0)
    client = client_for(researcher)
    data = json.loads(client.get(download("json")).content)
    assert data["tasks"] == ["battleOfSexes", "battle_of_sexes"]
    assert data["columns"]["battle_of_sexes"] == {
        "label": "Battle of the Sexes (Referee port)",
        "baseline": 1.2,
        "baseline_source": "computed",
    }
    # MLGym's released baseline, first run folder first (as `manage.py aup --results` reads it)
    assert data["columns"]["battleOfSexes"] == {
        "label": "battleOfSexes",
        "baseline": 1.0,
        "baseline_source": "imported",
    }
    assert any("runs disagree on the baseline" in issue["message"] for issue in data["issues"])
    assert data["scores"]["battle_of_sexes"]["gpt-o1"]["n_runs"] == 0  # never merged
    assert data["scores"]["battleOfSexes"]["rita-agent"]["n_runs"] == 0
    page = client.get(PAGE).content.decode()
    table = aup_table(page)
    assert "Battle of the Sexes (Referee port)" in table and "baseline: imported" in table
    assert "baseline: computed" in table
    assert "MLGym&#x27;s released baseline (results.json)" in page and 'value="battleOfSexes"' in page
    picked = json.loads(client.get(download("json"), {"tasks": ["battle_of_sexes"]}).content)
    assert set(picked["methods"]) == {"rita-agent", "baseline"} and picked["tasks"] == ["battle_of_sexes"]


def test_it_puts_a_referee_run_on_mlgyms_own_task_in_mlgyms_column(client_for, researcher, games):
    games["mlgym"].baseline_scores = {"test": {"primary": 1.01, "metrics": {"Score": 1.01}, "error": ""}}
    games["mlgym"].save()
    make_run(games["mlgym"], method="rita-agent", owner=researcher, attempt=1.3)
    released(games["mlgym"], "gpt-o1", 1.44, "a")
    client = client_for(researcher)
    data = json.loads(client.get(download("json")).content)
    assert data["tasks"] == ["battleOfSexes"] and set(data["methods"]) == {"rita-agent", "gpt-o1", "baseline"}
    assert data["columns"]["battleOfSexes"]["baseline_source"] == "imported"
    assert data["scores"]["battleOfSexes"]["baseline"]["best_attempt"] == 1.0227
    assert any("ranks this column's 1 Referee run(s) too" in issue["message"] for issue in data["issues"])
    referee = json.loads(client.get(download("json"), {"source": "referee"}).content)
    assert referee["columns"]["battleOfSexes"] == {
        "label": "battleOfSexes",
        "baseline": 1.01,
        "baseline_source": "computed",
    }


def test_it_keeps_research_pipeline_experiments_off_unless_asked_for(client_for, researcher, games):
    make_run(games["referee"], method="rita-agent", owner=researcher, attempt=1.4)
    make_run(
        games["referee"],
        method="MLR-Agent experiment (openai:gpt-test)",
        owner=researcher,
        attempt=0.3,
        params={"research_run": str(uuid.uuid4()), "stage": "experiment"},
    )
    client = client_for(researcher)
    assert "MLR-Agent experiment" not in aup_table(client.get(PAGE).content.decode())
    assert "MLR-Agent experiment" in aup_table(client.get(PAGE, {"research": "on"}).content.decode())


def test_it_lists_the_runs_behind_a_cell_to_those_who_may_see_them(
    client_for, researcher, other_researcher, admin_user, reviewer, games
):
    mine = make_run(games["referee"], method="shared-agent", owner=researcher, attempt=1.4)
    imported = released(games["mlgym"], "shared-agent", 1.3, "a")
    theirs = make_run(games["referee"], method="shared-agent", owner=other_researcher, attempt=1.1)
    failed = make_run(games["referee"], method="shared-agent", owner=researcher, status=Run.Status.FAILED)
    cell = {"method": "shared-agent", "task": "battle_of_sexes"}
    page = client_for(researcher).get(CELL, cell).content.decode()
    assert str(mine.code) in page and str(imported.code) not in page  # one task, not its MLGym namesake
    assert str(theirs.code) not in page and str(failed.code) not in page
    assert str(imported.code) in client_for(researcher).get(CELL, {**cell, "task": "battleOfSexes"}).content.decode()
    assert str(theirs.code) in client_for(admin_user).get(CELL, cell).content.decode()
    assert str(mine.code) not in client_for(other_researcher).get(CELL, cell).content.decode()
    assert client_for(reviewer).get(CELL, cell).status_code == 403
    anonymous = client_for(None).get(CELL, cell)
    assert anonymous.status_code == 302 and "/login" in anonymous["Location"]
    assert client_for(researcher).post(CELL, cell).status_code == 405
    assert client_for(researcher).get(CELL, {**cell, "source": "nonsense"}).status_code == 400
    # The board links its method names and cells here.
    table = aup_table(client_for(researcher).get(PAGE).content.decode())
    assert f"{CELL}?method=shared-agent&amp;task=battle_of_sexes" in table and f"{CELL}?method=shared-agent" in table


def test_it_exports_the_table_as_markdown_and_latex_with_names_escaped(client_for, researcher, games):
    make_run(games["referee"], method="a|b_c&d", owner=researcher, attempt=1.4)
    client = client_for(researcher)
    markdown = client.get(download("md"))
    assert markdown.status_code == 200 and markdown["Content-Type"].startswith("text/markdown")
    lines = markdown.content.decode().splitlines()
    assert lines[0] == "| # | Method | AUP best attempt | AUP best submission | battle_of_sexes |"
    assert any(line.startswith("| 1 | a\\|b_c&d | ") and line.endswith(" | 1.4000 |") for line in lines)
    latex = client.get(download("tex")).content.decode()
    assert r"a|b\_c\&d & " in latex and r"\begin{tabular}{llrrr}" in latex and r"battle\_of\_sexes" in latex
    assert r"$\tau_{\max}$" in latex
    assert client.get(download("xlsx")).status_code == 404
