"""The stepwise leaderboard: models x criteria with mean and spread per judge and for the judges'
mean, the per-task drill-down to the text and both reviews, and its exports; who may see it."""

from __future__ import annotations

import csv
import io
import json
import uuid

import pytest
from django.urls import reverse

from judge.leaderboard import MEAN_VIEW, stepwise_leaderboard
from judge.models import Judgment
from tests.judge.factories import make_judgment, make_stepwise_item, make_task, rubric

pytestmark = pytest.mark.django_db

CLAUDE, GEMINI = "anthropic:claude-3-7-sonnet-20250219", "google:gemini-2.5-pro-preview-03-25"
KEYS = ("consistency", "clarity", "novelty", "feasibility", "significance", "overall")


def _scores(value: int, **over: int) -> dict[str, int]:
    return {k: over.get(k, value) for k in KEYS}


@pytest.fixture
def board_data(db):
    idea = rubric("idea")
    t1, t2 = make_task("iclr2025_alpha"), make_task("iclr2025_beta")
    items = {}
    for task in (t1, t2):
        for model in ("model-a", "model-b"):
            items[(task.slug, model)] = make_stepwise_item(
                task, model, "idea", f"# Idea of {model} on {task.slug}\n\nUse $x^2$."
            )
    # model-a: claude 8 and 6 (mean 7, sd 1.414), gemini 6 and 6; model-b: lower, with one failed judge.
    make_judgment(items[("iclr2025_alpha", "model-a")], idea, CLAUDE, _scores(8))
    make_judgment(items[("iclr2025_beta", "model-a")], idea, CLAUDE, _scores(6))
    make_judgment(items[("iclr2025_alpha", "model-a")], idea, GEMINI, _scores(6))
    make_judgment(items[("iclr2025_beta", "model-a")], idea, GEMINI, _scores(6, overall=4))
    make_judgment(items[("iclr2025_alpha", "model-b")], idea, CLAUDE, _scores(5))
    make_judgment(items[("iclr2025_beta", "model-b")], idea, CLAUDE, _scores(3))
    make_judgment(items[("iclr2025_alpha", "model-b")], idea, GEMINI, _scores(4))
    make_judgment(items[("iclr2025_beta", "model-b")], idea, GEMINI, None)  # failed: counted, never scored
    # A given input of a proposal run is never an item of the idea board.
    other = make_stepwise_item(t1, "model-c", "proposal")
    given = other.research_run.artifacts.create(stage="idea", content="given", data={"given": True})
    make_judgment(given, idea, CLAUDE, _scores(10))
    return {"t1": t1, "t2": t2, "items": items}


def test_it_computes_mean_and_spread_per_judge_and_for_the_judges_mean(board_data):
    board = stepwise_leaderboard("idea")
    assert board.judges == [CLAUDE, GEMINI] and board.views == [CLAUDE, GEMINI, MEAN_VIEW]
    assert [r.model for r in board.rows] == ["model-a", "model-b"]  # ranked by the judges' mean overall
    a, b = board.rows
    assert (a.cells[CLAUDE]["overall"].mean, a.cells[CLAUDE]["overall"].n) == (7.0, 2)
    assert a.cells[CLAUDE]["overall"].sd == pytest.approx(1.41421, abs=1e-4)
    assert (a.cells[GEMINI]["overall"].mean, a.cells[GEMINI]["clarity"].sd) == (5.0, 0.0)
    # Judges' mean per item, then over items: (8+6)/2=7 and (6+4)/2=5 -> 6, sd 1.414.
    assert a.cells[MEAN_VIEW]["overall"].mean == 6.0
    assert a.cells[MEAN_VIEW]["overall"].sd == pytest.approx(1.41421, abs=1e-4)
    # model-b on beta has only Claude's 3: the judges' mean of that item is 3.
    assert b.cells[GEMINI]["overall"].n == 1 and b.cells[GEMINI]["overall"].sd is None
    assert b.cells[MEAN_VIEW]["overall"].mean == pytest.approx((4.5 + 3) / 2)
    assert board.unscored == {GEMINI: 1} and board.items == 4
    assert board.per_task == {
        "iclr2025_alpha": {"model-a": 7.0, "model-b": 4.5},
        "iclr2025_beta": {"model-a": 5.0, "model-b": 3.0},
    }


def test_the_page_and_every_export_show_the_same_numbers(board_data, researcher, client_for):
    client = client_for(researcher)
    page = client.get(reverse("judge:stepwise_leaderboard", args=["idea"]))
    assert page.status_code == 200
    html = page.content.decode()
    assert '<strong>6.00</strong> <span class="muted">± 1.41</span>' in html
    assert "Unscored (failed or truncated) judgments: google:gemini-2.5-pro-preview-03-25 1" in html
    assert "MIT License" in html
    rows = list(
        csv.DictReader(io.StringIO(client.get(reverse("judge:stepwise_export", args=["idea", "csv"])).content.decode()))
    )
    cell = next(r for r in rows if r["model"] == "model-a" and r["view"] == MEAN_VIEW and r["criterion"] == "overall")
    assert (float(cell["mean"]), round(float(cell["sd"]), 4), cell["n"]) == (6.0, 1.4142, "2")
    assert len(rows) == 2 * 3 * 6  # models x views x criteria
    data = json.loads(client.get(reverse("judge:stepwise_export", args=["idea", "json"])).content)
    assert data["judges"] == [CLAUDE, GEMINI] and data["unscored_judgments"] == {GEMINI: 1}
    assert "MIT License" in data["attribution"] and len(data["rows"]) == 36
    md = client.get(reverse("judge:stepwise_export", args=["idea", "md"])).content.decode()
    assert "| model-a | 7.00 ± 1.41 | 7.00 ± 1.41 |" in md and "## judges' mean" in md
    tex = client.get(reverse("judge:stepwise_export", args=["idea", "tex"]))
    assert tex["Content-Disposition"] == 'attachment; filename="stepwise-idea.tex"'
    body = tex.content.decode()
    assert r"\begin{tabular}{lccccccc}" in body and r"model-a & 7.00 $\pm$ 1.41 & 7.00" in body
    assert r"model-b & " in body and "\\\\" in body


def test_the_task_drill_down_shows_each_text_beside_both_reviews(board_data, researcher, client_for):
    url = reverse("judge:stepwise_task", args=["idea", board_data["t1"].code])
    html = client_for(researcher).get(url).content.decode()
    assert html.count('class="card stepwise-item"') == 2
    assert "Idea of model-a on iclr2025_alpha" in html and "Idea of model-b on iclr2025_alpha" in html
    assert CLAUDE in html and GEMINI in html
    assert "overall by anthropic:claude-3-7-sonnet-20250219" in html  # the justification of a score
    assert "model-c" not in html  # a proposal run's given idea is not one of the task's ideas


@pytest.mark.parametrize("fmt", ["csv", "json", "md", "tex"])
def test_it_refuses_reviewers_and_anonymous_users_everywhere(
    board_data, reviewer, admin_user, researcher, client_for, fmt
):
    task = board_data["t1"]
    urls = [
        reverse("judge:stepwise_leaderboard", args=["idea"]),
        reverse("judge:stepwise_export", args=["idea", fmt]),
        reverse("judge:stepwise_task", args=["idea", task.code]),
    ]
    for url in urls:
        assert client_for(admin_user).get(url).status_code == 200
        assert client_for(researcher).get(url).status_code == 200
        assert client_for(reviewer).get(url).status_code == 403  # model identity next to judge scores
        anonymous = client_for(None).get(url)
        assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]
        assert client_for(researcher).post(url).status_code == 405


def test_a_researcher_who_also_reviews_is_refused(board_data, researcher, client_for):
    from django.contrib.auth.models import Group

    researcher.groups.add(Group.objects.get_or_create(name="reviewer")[0])
    assert client_for(researcher).get(reverse("judge:stepwise_leaderboard", args=["idea"])).status_code == 403


def test_it_answers_404_to_a_bad_stage_task_format_or_rubric(board_data, researcher, client_for):
    client = client_for(researcher)
    assert client.get(reverse("judge:stepwise_leaderboard", args=["paper"])).status_code == 404
    assert client.get(reverse("judge:stepwise_task", args=["idea", uuid.uuid4()])).status_code == 404
    assert client.get(reverse("judge:stepwise_export", args=["idea", "xlsx"])).status_code == 404
    assert (
        client.get(reverse("judge:stepwise_leaderboard", args=["idea"]) + f"?rubric={uuid.uuid4()}").status_code == 404
    )


def test_an_empty_stage_says_how_to_import(db, researcher, client_for):
    html = client_for(researcher).get(reverse("judge:stepwise_leaderboard", args=["proposal"])).content.decode()
    assert "manage.py import_mlr_stepwise" in html
    assert Judgment.objects.count() == 0


def test_it_ranks_each_judges_table_by_that_judges_own_scores(db, researcher, client_for):
    idea = rubric("idea")
    task = make_task("iclr2025_gamma")
    x, y = make_stepwise_item(task, "model-x", "idea"), make_stepwise_item(task, "model-y", "idea")
    make_judgment(x, idea, CLAUDE, _scores(9))
    make_judgment(y, idea, CLAUDE, _scores(3))
    make_judgment(x, idea, GEMINI, _scores(3))
    make_judgment(y, idea, GEMINI, _scores(8))  # means: x 6, y 5.5
    order = {table["view"]: [row["model"] for row in table["rows"]] for table in stepwise_leaderboard("idea").grid()}
    assert order == {CLAUDE: ["model-x", "model-y"], GEMINI: ["model-y", "model-x"], MEAN_VIEW: ["model-x", "model-y"]}
    page = client_for(researcher).get(reverse("judge:stepwise_leaderboard", args=["idea"])).content.decode()
    gemini = page.split(f'data-view="{GEMINI}"', 1)[1].split("</table>", 1)[0]
    assert gemini.index('data-model="model-y"') < gemini.index('data-model="model-x"')
    assert "2 models, ranked by this table's own overall score." in page
