"""Best attempt and baseline on the same split: an unchanged starter code equals the baseline.

The agent validates on the dev split; each validated attempt is scored on the test split after
the run (benchmark.runs.attempts), which is the split of the baseline row and of MLGym's own
`validate`. Real sandboxes, real evaluator."""

from __future__ import annotations

import json

import pytest
from django.core.files.storage import storages
from django.urls import reverse

from benchmark.models import Run, Score
from benchmark.runs.attempts import attempts_score
from benchmark.tasks.baselines import baseline_compute
from tests.benchmark.runs_support import agent, builtin_task, make_run

DOWNLOAD = reverse("benchmark:leaderboard_download", args=["json"])


@pytest.mark.docker
@pytest.mark.django_db
def test_it_ranks_an_unchanged_starter_code_equal_to_the_baseline(researcher, redis_client, client_for):
    from benchmark.runs.services import run_execute

    task = builtin_task("prisoners_dilemma")  # its starter strategy draws no random numbers
    baseline = baseline_compute(task=task)
    assert not baseline["error"]
    dev, test = baseline["dev"]["primary"], baseline["test"]["primary"]
    assert dev != test  # else the dev-split score would pass for the baseline's too
    run = make_run(owner=researcher, task=task, agent_config=agent("baseline", name="starter-code"))
    run.method = "starter-code"
    run.save(update_fields=["method"])
    run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert (run.status, run.exit_status) == (Run.Status.FINISHED, "submitted")
    validate = run.scores.get(kind=Score.Kind.VALIDATE)
    assert validate.primary == pytest.approx(dev)  # what the agent saw: the dev split
    [kept] = run.params["attempts_kept"]
    assert kept["step"] == validate.step.index and set(kept["files"]) == {"strategy.py"}

    client = client_for(researcher)
    pending = json.loads(client.get(DOWNLOAD).content)
    assert pending["scores"][task.slug]["starter-code"]["best_attempt"] == pytest.approx(test)  # submission only
    assert any("not scored on the test split yet" in issue["message"] for issue in pending["issues"])

    scoring = attempts_score(run_id=run.pk)  # the job after the run
    assert scoring["status"] == "done" and scoring["attempts"][0]["primary"] == pytest.approx(test)
    assert not storages["artifacts"].exists(kept["files"]["strategy.py"])  # scored, then deleted
    run.refresh_from_db()
    assert run.params["test_scoring"]["best_attempt"] == pytest.approx(test)
    assert run.best_attempt == pytest.approx(max(dev, test))  # the run's own record is kept as the agent saw it

    data = json.loads(client.get(DOWNLOAD).content)
    scores = data["scores"][task.slug]
    assert scores["starter-code"]["best_attempt"] == scores["baseline"]["best_attempt"] == pytest.approx(test)
    assert scores["starter-code"]["best_submission"] == scores["baseline"]["best_submission"]
    assert data["columns"][task.slug] == {
        "label": "Iterated Prisoner's Dilemma (Referee port)",
        "baseline": pytest.approx(test),
        "baseline_source": "computed",
    }
    assert not any("not scored on the test split" in issue["message"] for issue in data["issues"])
    assert attempts_score(run_id=run.pk) == run.params["test_scoring"]  # again (by hand): what is stored
