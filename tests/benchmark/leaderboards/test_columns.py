"""One column per task across sources, research experiments kept off, the runs behind a cell, text exports."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
import yaml
from django.urls import reverse

from benchmark.leaderboards.mlgym_results import MLGYM_TASKS
from benchmark.leaderboards.task_names import MLGYM_TO_REFEREE, column_slugs, task_column
from benchmark.models import Run, Task
from tests.benchmark.leaderboards.test_pages import PAGE, aup_table, download, make_run

BUILTIN = Path(__file__).resolve().parents[3] / "benchmark" / "tasks" / "builtin"
CELL = reverse("benchmark:leaderboard_cell")


def game(slug: str, *, source: str, baseline: dict) -> Task:
    return Task.objects.create(
        slug=slug,
        version_hash=uuid.uuid4().hex * 2,
        kind=Task.Kind.MLGYM,
        title=slug,
        metric="Score",
        direction=Task.Direction.MAX,
        source=source,
        baseline_scores=baseline,
    )


@pytest.fixture
def games(db) -> dict[str, Task]:
    computed = {"test": {"primary": 1.2, "metrics": {"Score": 1.2}, "error": ""}}
    return {
        "referee": game("battle_of_sexes", source="builtin", baseline=computed),
        "mlgym": game("battleOfSexes", source="mlgym", baseline={"Score": 1.0227}),
    }


def test_it_maps_only_mlgym_tasks_to_builtin_tasks_scored_the_same_way():
    for mlgym_id, slug in MLGYM_TO_REFEREE.items():
        spec = yaml.safe_load((BUILTIN / slug / "task.yaml").read_text())
        assert (spec["metric"], spec["direction"]) == (MLGYM_TASKS[mlgym_id].metric, MLGYM_TASKS[mlgym_id].direction)
    assert task_column("battleOfSexes") == "battle_of_sexes" == task_column("battle_of_sexes")
    assert task_column("3SATTime") == "3SATTime"  # wall time is not sat_solver's decision count
    assert column_slugs(["colonel_blotto", "toy"]) == ["blotto", "colonel_blotto", "toy"]


def test_it_puts_both_sources_of_a_game_in_one_column_against_referees_baseline(client_for, researcher, games):
    make_run(games["referee"], method="rita-agent", owner=researcher, attempt=1.4)
    make_run(games["mlgym"], method="gpt-o1", attempt=1.44, source=Run.Source.MLGYM)
    client = client_for(researcher)
    data = json.loads(client.get(download("json")).content)
    assert data["tasks"] == ["battle_of_sexes"]
    scores = data["scores"]["battle_of_sexes"]
    assert scores["gpt-o1"]["best_attempt"] == 1.44 and scores["rita-agent"]["best_attempt"] == 1.4
    assert scores["baseline"]["best_attempt"] == 1.2  # Referee's computed baseline, not MLGym's 1.0227
    page = client.get(PAGE).content.decode()
    assert 'value="battleOfSexes"' not in page and "= battleOfSexes" in aup_table(page)
    # Ticking the column selects the runs of both names.
    picked = json.loads(client.get(download("json"), {"tasks": ["battle_of_sexes"]}).content)
    assert set(picked["methods"]) == {"gpt-o1", "rita-agent", "baseline"}


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
    imported = make_run(games["mlgym"], method="shared-agent", attempt=1.3, source=Run.Source.MLGYM)
    theirs = make_run(games["referee"], method="shared-agent", owner=other_researcher, attempt=1.1)
    failed = make_run(games["referee"], method="shared-agent", owner=researcher, status=Run.Status.FAILED)
    cell = {"method": "shared-agent", "task": "battle_of_sexes"}
    page = client_for(researcher).get(CELL, cell).content.decode()
    assert str(mine.code) in page and str(imported.code) in page  # both names of the game
    assert str(theirs.code) not in page and str(failed.code) not in page
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
