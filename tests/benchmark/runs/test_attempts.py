"""Validated attempts kept during a run and queued for test-split scoring after it; the command
that scores them by hand; what a failed scoring leaves the leaderboard (the real sandboxed scoring
of an attempt: tests/benchmark/leaderboards/test_same_split.py)."""

from __future__ import annotations

from io import StringIO

import django_rq
import pytest
from django.core.files.storage import storages
from django.core.management import call_command
from django.core.management.base import CommandError

from benchmark.leaderboards.board import attempt_on_test_split
from benchmark.models import Run
from benchmark.runs.attempts import JOB, attempt_keep, attempts_enqueue
from tests.benchmark.runs_support import builtin_task, make_run


@pytest.fixture
def run(db, researcher) -> Run:
    return make_run(
        owner=researcher, task=builtin_task("prisoners_dilemma"), status=Run.Status.FINISHED, best_submission=2.0
    )


def test_it_keeps_a_validated_attempt_and_queues_its_scoring_after_the_run(
    run, redis_client, django_capture_on_commit_callbacks
):
    attempt_keep(run=run, step_index=4, artifacts={"strategy.py": b"def row_strategy(h):\n    return 0\n"})
    [kept] = Run.objects.get(pk=run.pk).params["attempts_kept"]
    assert kept["step"] == 4
    with storages["artifacts"].open(kept["files"]["strategy.py"], "rb") as handle:
        assert handle.read().startswith(b"def row_strategy")
    with django_capture_on_commit_callbacks(execute=True):
        attempts_enqueue(run)
    [job] = django_rq.get_queue("default").get_jobs()
    assert (job.func_name, job.args) == (JOB, (run.pk,))
    assert Run.objects.get(pk=run.pk).params["test_scoring"]["status"] == "queued"


def test_it_queues_nothing_for_a_run_without_attempts_or_one_that_failed(
    run, redis_client, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        attempts_enqueue(run)
        run.params = {"attempts_kept": [{"step": 2, "files": {}}]}
        run.status = Run.Status.FAILED
        attempts_enqueue(run)
    assert callbacks == [] and django_rq.get_queue("default").count == 0


def test_it_scores_by_hand_and_says_when_a_kept_attempt_is_gone(run):
    with pytest.raises(CommandError, match="--run CODE, or pass --pending"):
        call_command("score_attempts")
    with pytest.raises(CommandError, match="no such run"):
        call_command("score_attempts", run=["not-a-code"])
    run.params = {"attempts_kept": [{"step": 2, "files": {"strategy.py": "attempts/gone/2/strategy.py"}}]}
    run.save()
    out = StringIO()
    call_command("score_attempts", pending=True, stdout=out)
    assert f"run {run.code}: failed, 1 attempt(s)" in out.getvalue() and "cannot be read" in out.getvalue()
    run.refresh_from_db()
    scoring = run.params["test_scoring"]
    assert scoring["status"] == "failed" and scoring["attempts"] == [
        {"step": 2, "primary": None, "error": scoring["attempts"][0]["error"]}
    ]
    # The board counts the submission only, and says why, rather than a best attempt missing one.
    value, why = attempt_on_test_split(source=run.source, best_attempt=3.0, best_submission=2.0, params=run.params)
    assert value == 2.0 and "not scored on the test split yet (failed: step 2: the kept copy" in why
