"""Two runs side by side: the permission checklist, facts, step alignment and where actions diverge."""

from __future__ import annotations

import uuid

import pytest

from benchmark.models import Run, Score
from benchmark.runs import progress
from benchmark.runs.compare import BY_ACTION, BY_STEP, runs_compare
from benchmark.runs.services import run_share
from benchmark.tasks.evaluation import ScoreResult
from tests.benchmark.runs_support import make_run, stub_task

pytestmark = pytest.mark.django_db


def steps(run: Run, actions: list[str]) -> None:
    for action in actions:
        progress.step_append(run=run, thought="t", action=action, observation=f"out of {action}", publish=False)


@pytest.fixture
def pair(researcher):
    task = stub_task("compared")
    a = make_run(owner=researcher, task=task, status=Run.Status.FINISHED, cost=0.25, params={"max_steps": 10})
    b = make_run(owner=researcher, task=task, status=Run.Status.FINISHED, cost=1.5, params={"max_steps": 20})
    steps(a, ["ls", "cat a", "validate"])
    steps(b, ["ls", "cat b", "validate", "submit"])
    return a, b


def test_it_aligns_two_runs_by_step_and_marks_the_first_divergence(pair, researcher, client_for):
    a, b = pair
    comparison = runs_compare(a, b)
    assert comparison.mode == BY_STEP
    assert [(r.a and r.a.index, r.b and r.b.index, r.same_action) for r in comparison.rows] == [
        (1, 1, True),
        (2, 2, False),
        (3, 3, True),
        (None, 4, False),
    ]
    assert comparison.first_divergence == 1 and comparison.differing == 2
    assert "-cat a" in comparison.rows[1].diff and "+cat b" in comparison.rows[1].diff
    facts = {label: (left, right) for label, left, right in comparison.facts}
    assert facts["Cost"] == ("$0.2500", "$1.5000") and facts["Steps"] == ("3", "4")
    assert facts["Limits"][0].startswith("10 steps") and facts["Limits"][1].startswith("20 steps")
    page = client_for(researcher).get(f"/runs/compare/?run={a.code}&run={b.code}").content.decode()
    assert 'href="#row-1">First divergence' in page and "2 with different actions" in page


def test_it_aligns_a_replay_with_its_original_by_action(researcher):
    original = make_run(owner=researcher, status=Run.Status.FINISHED)
    steps(original, ["ls", "mkdir x", "python run.py", "validate"])
    replay = make_run(owner=researcher, task=original.task, replay_of=original)
    steps(replay, ["ls", "python run.py", "validate"])  # one action missing: later rows stay paired
    comparison = runs_compare(original, replay)
    assert comparison.mode == BY_ACTION
    pairs = [(r.a and r.a.action, r.b and r.b.action) for r in comparison.rows]
    assert pairs == [("ls", "ls"), ("mkdir x", None), ("python run.py", "python run.py"), ("validate", "validate")]
    assert comparison.differing == 1


def test_it_overlays_the_score_curves(pair):
    a, b = pair
    step = a.steps.get(index=3)
    Score.objects.create(run=a, step=step, kind=Score.Kind.VALIDATE, primary=0.5)
    Score.objects.create(run=b, step=b.steps.get(index=3), kind=Score.Kind.VALIDATE, error="boom")  # not charted
    series = runs_compare(a, b).series
    assert series[0]["points"] == [[3, 0.5, "validate"]] and series[1]["points"] == []


def test_it_shows_the_comparison_only_to_who_may_see_both_runs(
    pair, researcher, other_researcher, admin_user, reviewer, client_for
):
    a, b = pair
    url = f"/runs/compare/?run={a.code}&run={b.code}"
    assert client_for(researcher).get(url).status_code == 200
    assert client_for(admin_user).get(url).status_code == 200
    assert client_for(other_researcher).get(url).status_code == 404
    run_share(run=a, user=other_researcher)
    assert client_for(other_researcher).get(url).status_code == 404  # one of the two is still not theirs
    run_share(run=b, user=other_researcher)
    assert client_for(other_researcher).get(url).status_code == 200
    assert client_for(reviewer).get(url).status_code == 403
    assert client_for(None).get(url).status_code == 302
    assert client_for(researcher).post(url).status_code == 405
    assert client_for(researcher).get(f"/runs/compare/?run={a.code}&run={uuid.uuid4()}").status_code == 404
    for bad in ("", f"?run={a.code}", f"?run={a.code}&run={a.code}", "?run=x&run=y", f"?run={a.code}&run=nope"):
        response = client_for(researcher).get(f"/runs/compare/{bad}")
        assert response.status_code == 400 and b"exactly two different runs" in response.content


def test_it_offers_compare_with_the_original_on_a_replay(researcher, client_for):
    original = make_run(owner=researcher, status=Run.Status.FINISHED)
    replay = make_run(owner=researcher, task=original.task, replay_of=original)
    page = client_for(researcher).get(f"/runs/{replay.code}/").content.decode()
    assert f"/runs/compare/?run={original.code}&amp;run={replay.code}" in page


def test_it_keeps_scores_of_failed_steps_out_of_the_curve(researcher):
    run = make_run(owner=researcher, task=stub_task())
    progress.step_append(
        run=run,
        thought="",
        action="validate",
        observation="",
        score_kind="validate",
        score=ScoreResult(split="dev", metrics={"Score": 1.25}, primary=1.25),
        publish=False,
    )
    assert runs_compare(run, make_run(owner=researcher, task=run.task)).series[0]["points"] == [[1, 1.25, "validate"]]


def test_it_folds_stretches_of_equal_actions_and_carries_them_for_the_browser(researcher, client_for):
    task = stub_task("folded")
    a = make_run(owner=researcher, task=task)
    b = make_run(owner=researcher, task=task)
    steps(a, ["ls", "ls", "ls", "ls", "cat a", "ls", "ls"])
    steps(b, ["ls", "ls", "ls", "ls", "cat b", "ls", "ls"])
    b.steps.filter(index=2).update(observation="another output")
    comparison = runs_compare(a, b)
    kinds = [(position, type(block).__name__) for position, block in comparison.blocks]
    assert kinds == [(0, "Fold"), (4, "Row"), (5, "Row"), (6, "Row")]  # two equal rows stay unfolded
    fold = comparison.blocks[0][1]
    assert len(fold.rows) == 4 and fold.outputs_differ == 1 and fold.steps_of_a == "1–4"
    assert comparison.folded() == {
        0: [[i, "ls", "", i, "ls", "", i != 2] for i in range(1, 5)],
    }
    page = client_for(researcher).get(f"/runs/compare/?run={a.code}&run={b.code}").content.decode()
    assert "Show 4 steps with the same action" in page and "1 with a different output" in page
    assert 'id="row-4" class="differs"' in page and 'href="#row-4">First divergence' in page
    assert 'id="row-0"' not in page  # folded: travels as data (#folded-rows), not as rendered rows
    assert '<script id="folded-rows" type="application/json">' in page


def test_it_charts_cumulative_cost_and_tokens_and_says_when_steps_carry_none(researcher, client_for):
    from benchmark.runs.compare import cost_series

    run = make_run(owner=researcher)
    progress.step_append(run=run, thought="t", action="ls", observation="o", cost=0.5, tokens_sent=10, publish=False)
    progress.step_append(run=run, thought="t", action="ls", observation="o", publish=False)  # no model call
    progress.step_append(
        run=run, thought="t", action="ls", observation="o", cost=0.25, tokens_received=5, publish=False
    )
    series = cost_series(run)
    assert series["cost"][0]["points"] == [[1, 0.5, "cost"], [2, 0.5, "cost"], [3, 0.75, "cost"]]
    assert series["tokens"][0]["points"] == [[1, 10, "tokens"], [2, 10, "tokens"], [3, 15, "tokens"]]
    page = client_for(researcher).get(f"/runs/{run.code}/").content.decode()
    assert 'id="cost-chart"' in page and 'id="cost-missing"' not in page
    imported = make_run(owner=None, source=Run.Source.MLGYM, cost=1.25)
    progress.step_append(run=imported, thought="t", action="ls", observation="o", publish=False)
    assert cost_series(imported) == {"known": False, "cost": [], "tokens": []}
    page = client_for(researcher).get(f"/runs/{imported.code}/").content.decode()
    assert 'id="cost-missing"' in page and "$1.2500" in page and 'id="cost-chart"' not in page
