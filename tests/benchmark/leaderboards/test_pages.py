"""The leaderboard page, its downloads and saved leaderboards: who sees what, and the numbers."""

from __future__ import annotations

import csv
import io
import json
import uuid

import pytest
from django.urls import reverse

from benchmark.models import AgentConfig, Leaderboard, Run, Step, Task

PAGE = reverse("benchmark:leaderboard")


def aup_table(page: str) -> str:
    start = page.index('id="aup-table"')
    return page[start : page.index("</table>", start)]


def download(fmt: str) -> str:
    return reverse("benchmark:leaderboard_download", args=[fmt])


@pytest.fixture
def task(db) -> Task:
    return Task.objects.create(
        slug="toy-accuracy",
        version_hash="0" * 64,
        kind=Task.Kind.MLGYM,
        title="Toy accuracy",
        metric="acc",
        direction=Task.Direction.MAX,
        baseline_scores={"acc": 0.5},
    )


def make_run(
    task: Task, *, method: str, owner=None, attempt=None, submission=None, source=Run.Source.REFEREE, **extra
) -> Run:
    agent, _ = AgentConfig.objects.get_or_create(name=f"agent {method}", defaults={"model": "openai:gpt-test"})
    return Run.objects.create(
        task=task,
        agent=agent,
        owner=owner,
        method=method,
        source=source,
        status=extra.pop("status", Run.Status.FINISHED),
        best_attempt=attempt,
        best_submission=submission if submission is not None else attempt,
        **extra,
    )


def scored_attempts(best: float) -> dict:
    """A run's params once its one validated attempt was scored on the test split (runs.attempts)."""
    return {
        "attempts_kept": [{"step": 2, "files": {}}],
        "test_scoring": {"status": "done", "split": "test", "best_attempt": best, "attempts": [{"step": 2}]},
    }


@pytest.fixture
def runs(task, researcher, other_researcher) -> dict[str, Run]:
    return {
        # A Referee run whose validated attempts were scored on the test split after it (runs.attempts).
        "mine": make_run(
            task,
            method="rita-agent",
            owner=researcher,
            attempt=0.95,
            submission=0.8,
            cost=1.5,
            exit_status="submitted",
            params=scored_attempts(0.9),
        ),
        "theirs": make_run(task, method="oscar-secret-agent", owner=other_researcher, attempt=0.7),
        "imported": make_run(
            task, method="gpt-o1", attempt=0.6, source=Run.Source.MLGYM, params={"cost_recorded": False}
        ),
    }


def test_it_sends_anonymous_users_to_the_login_page(client_for, runs):
    anonymous = client_for(None)
    for url in (PAGE, download("csv"), download("json")):
        response = anonymous.get(url)
        assert response.status_code == 302 and "/login" in response["Location"]
    assert anonymous.post(reverse("benchmark:leaderboard_save")).status_code == 302


def test_it_refuses_reviewers_everything(client_for, reviewer, researcher, runs):
    board = Leaderboard.objects.create(name="b", created_by=researcher, results={})
    client = client_for(reviewer)
    for url in (
        PAGE,
        download("csv"),
        reverse("benchmark:leaderboard_detail", args=[board.code]),
        reverse("benchmark:leaderboard_detail_download", args=[board.code, "json"]),
    ):
        assert client.get(url).status_code == 403
    assert client.post(reverse("benchmark:leaderboard_save")).status_code == 403


def test_it_ranks_a_researchers_own_and_imported_runs_but_not_other_peoples(client_for, researcher, runs):
    response = client_for(researcher).get(PAGE)
    assert response.status_code == 200
    page = response.content.decode()
    assert "rita-agent" in page and "gpt-o1" in page and "baseline" in page
    assert "oscar-secret-agent" not in page
    assert 'id="leaderboard-figures"' in page and "js/leaderboard.js" in page and "vendor/plotly.min.js" in page


def test_it_shows_admins_every_run(client_for, admin_user, runs):
    page = client_for(admin_user).get(PAGE).content.decode()
    assert "oscar-secret-agent" in page and "rita-agent" in page


def test_it_filters_by_source_and_rejects_unknown_filter_values(client_for, researcher, runs):
    client = client_for(researcher)
    table = aup_table(client.get(PAGE, {"source": "mlgym"}).content.decode())
    assert "gpt-o1" in table and "rita-agent" not in table
    response = client.get(PAGE, {"methods": ["oscar-secret-agent"]})
    assert response.status_code == 400  # not a method this researcher may rank
    assert 'id="aup-table"' not in response.content.decode()


def test_it_downloads_csv_and_json_with_aup_and_tau_max(client_for, researcher, runs):
    client = client_for(researcher)
    response = client.get(download("json"))
    assert response.status_code == 200 and response["Content-Disposition"].endswith('.json"')
    data = json.loads(response.content)
    assert set(data["methods"]) == {"rita-agent", "gpt-o1", "baseline"}
    # one task: rita 0.9 is best (ratio 1), gpt-o1 0.6 and baseline 0.5 give ratios 1.5 and 1.8
    assert data["scores"]["toy-accuracy"]["gpt-o1"]["ratio_best_attempt"] == pytest.approx(1.5)
    assert data["tau_max"] == 0.4  # ceil(1.8 * 1.05) = 2, log10 2 = 0.301, rounded up to 0.4
    # each run's link, filled into one reversed pattern, is what reverse() gives for it
    assert {r["url"] for r in data["runs"]} == {
        reverse("benchmark:run_detail", args=[run.code]) for run in (runs["mine"], runs["imported"])
    }
    rows = list(csv.DictReader(io.StringIO(client.get(download("csv")).content.decode())))
    assert {r["method"] for r in rows} == {"rita-agent", "gpt-o1", "baseline"}
    assert {r["tau_max"] for r in rows} == {str(data["tau_max"])}
    assert client.get(download("csv"), {"source": "referee", "tasks": ["toy-accuracy"]}).status_code == 200


def test_it_saves_the_method_set_and_tau_max_and_shows_the_snapshot_to_its_owner_only(
    client_for, researcher, other_researcher, admin_user, runs
):
    client = client_for(researcher)
    assert client.get(reverse("benchmark:leaderboard_save")).status_code == 405
    assert client.post(PAGE).status_code == 405
    response = client.post(reverse("benchmark:leaderboard_save") + "?source=referee", {"name": "mine only"})
    board = Leaderboard.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse(
        "benchmark:leaderboard_detail", args=[board.code]
    )
    assert board.name == "mine only" and board.filters == {"source": "referee"}
    assert board.methods == ["rita-agent", "baseline"] and board.tau_max is not None
    detail = reverse("benchmark:leaderboard_detail", args=[board.code])
    assert "mine only" in client.get(detail).content.decode()
    assert client.get(reverse("benchmark:leaderboard_detail_download", args=[board.code, "csv"])).status_code == 200
    assert client_for(other_researcher).get(detail).status_code == 404
    assert client_for(admin_user).get(detail).status_code == 200
    assert client.get(reverse("benchmark:leaderboard_detail", args=[uuid.uuid4()])).status_code == 404


def test_it_shows_data_issues_and_never_crashes_on_runs_without_scores(client_for, researcher, task):
    make_run(task, method="empty-agent", owner=researcher)
    make_run(task, method="negative-agent", owner=researcher, attempt=-3e13)
    response = client_for(researcher).get(PAGE)
    assert response.status_code == 200
    assert "data issues" in response.content.decode()


def test_it_counts_actions_from_steps_where_trajectories_exist(client_for, researcher, runs):
    for index, action in enumerate(["edit train.py", "python train.py", "validate", "ls -la", "submit"]):
        Step.objects.create(run=runs["mine"], index=index, action=action)
    data = json.loads(client_for(researcher).get(download("json")).content)
    assert data["analysis_methods"]["actions"] == ["rita-agent"]
    assert data["analysis_methods"]["exit_status"] == ["rita-agent"]
    assert data["analysis_methods"]["aup_cost"] == ["rita-agent"]  # imported run has no recorded cost


def test_it_ranks_against_the_computed_baseline_and_leaves_failed_runs_out(client_for, researcher):
    """A built-in task stores its baseline as computed scores per split: the reference row takes
    the test split's. The model-free agent is `starter-code`, a row of its own; a run whose
    model never answered is failed and neither ranked nor counted."""
    task = Task.objects.create(
        slug="toy-computed",
        version_hash="1" * 64,
        kind=Task.Kind.MLGYM,
        title="Toy with a computed baseline",
        metric="Score",
        direction=Task.Direction.MAX,
        baseline_scores={
            "version": "1" * 64,
            "dev": {"metrics": {"Score": 2.4}, "primary": 2.4, "error": ""},
            "test": {"metrics": {"Score": 2.5}, "primary": 2.5, "error": ""},
            "error": "",
        },
    )
    make_run(task, method="starter-code", owner=researcher, attempt=2.5, exit_status="submitted")
    make_run(task, method="claude", owner=researcher, attempt=3.0, exit_status="submitted")
    make_run(
        task, method="dead-endpoint", owner=researcher, status=Run.Status.FAILED, exit_status="exit_api", error="x"
    )
    make_run(task, method="claude", owner=researcher, status=Run.Status.FAILED, exit_status="exit_api")
    data = json.loads(client_for(researcher).get(download("json")).content)
    assert set(data["methods"]) == {"claude", "starter-code", "baseline"}
    scores = data["scores"]["toy-computed"]
    assert scores["baseline"]["best_attempt"] == 2.5 and scores["starter-code"]["best_attempt"] == 2.5
    assert scores["claude"]["n_runs"] == 1  # the failed claude run is not a run of the method
    assert not any("dead-endpoint" in issue["source"] for issue in data["issues"])
    assert not any(issue["field"] == "baseline" and "no baseline" in issue["message"] for issue in data["issues"])


def test_it_charts_each_tasks_scores_with_its_baseline_line_or_says_it_has_none(client_for, researcher, runs, task):
    bare = Task.objects.create(
        slug="no-baseline", version_hash="2" * 64, kind=Task.Kind.MLGYM, title="Bare", metric="acc", baseline_scores={}
    )
    make_run(bare, method="rita-agent", owner=researcher, attempt=0.3)
    page = client_for(researcher).get(PAGE).content.decode()
    start = page.index('<script id="leaderboard-figures" type="application/json">')
    figures = json.loads(page[page.index(">", start) + 1 : page.index("</script>", start)])["task_scores"]
    toy = figures["toy-accuracy"]
    assert toy["baseline"] == 0.5 and toy["layout"]["shapes"][0]["x0"] == 0.5
    assert toy["data"][0]["y"] == ["rita-agent", "gpt-o1"] and toy["data"][0]["x"] == [0.9, 0.6]  # not other people's
    assert figures["no-baseline"]["baseline"] is None and "shapes" not in figures["no-baseline"]["layout"]
    assert figures["no-baseline"]["data"][0]["x"] == [0.3]
    assert 'id="task-score-choice"' in page and "no baseline line is drawn" in page


def test_it_ranks_referee_runs_by_their_attempt_on_test_splits_only(client_for, researcher, task):
    """The dev-split score the agent saw is never ranked against the baseline's test-split score:
    until the attempts are scored on the test split (or for an older run), the submission stands
    for the best attempt and the board says why."""
    make_run(task, method="older", owner=researcher, attempt=0.9, submission=0.6)
    queued = make_run(task, method="queued", owner=researcher, attempt=0.9, submission=0.7)
    queued.params = {"attempts_kept": [{"step": 3, "files": {}}], "test_scoring": {"status": "queued"}}
    queued.save()
    make_run(task, method="scored", owner=researcher, attempt=0.99, submission=0.7, params=scored_attempts(0.75))
    data = json.loads(client_for(researcher).get(download("json")).content)
    scores = data["scores"]["toy-accuracy"]
    assert {m: scores[m]["best_attempt"] for m in ("older", "queued", "scored")} == {
        "older": 0.6,
        "queued": 0.7,
        "scored": 0.75,
    }
    messages = [issue["message"] for issue in data["issues"]]
    assert any("predates test-split scoring" in m for m in messages)
    assert any("1 validated attempt(s) not scored on the test split yet (queued)" in m for m in messages)
