"""`import_mlgym_results` on the released data and on broken files, and the DB leaderboard over it."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from benchmark.leaderboards.board import runs_leaderboard
from benchmark.leaderboards.mlgym_results import PUBLISHED_MODELS
from benchmark.leaderboards.scoring import BASELINE, Scoring
from benchmark.models import Run, Score, Step, Task
from tests.benchmark.leaderboards.test_aup_command import (
    COMPUTED_AUP,
    PUBLISHED_AUP,
    folder,
    mlgym_results_dir,
    needs_mlgym_results,
    write_run,
)


@needs_mlgym_results
def test_it_imports_every_released_result_once_and_reproduces_the_published_aup(db):
    out = StringIO()
    call_command("import_mlgym_results", str(mlgym_results_dir()), stdout=out, stderr=StringIO())
    assert out.getvalue().startswith("imported 676 runs")
    runs = Run.objects.filter(source=Run.Source.MLGYM)
    assert runs.count() == 676
    assert set(runs.values_list("method", flat=True)) == {*PUBLISHED_MODELS, "gemini-20-pro"}
    assert Task.objects.filter(kind=Task.Kind.MLGYM).count() == 13
    # each run keeps the baseline its results.json released (the board's baseline row for imported runs)
    blotto = runs.filter(task__slug="blotto").values_list("params__mlgym_baseline", flat=True)
    assert blotto.count() == 52 and all(b["Score"] == pytest.approx(-0.24797) for b in blotto)
    # one Score per validation, the last one the submission
    scored_runs = runs.filter(scores__isnull=False).distinct().count()
    assert Score.objects.filter(kind=Score.Kind.SUBMIT).count() == scored_runs
    # runs with scores but none usable (all absurd) have no best attempt either
    assert 676 - scored_runs < runs.filter(best_attempt=None).count()
    with_traj = runs.filter(params__has_trajectory=True)
    assert with_traj.count() == 39
    assert Step.objects.filter(run__in=with_traj).count() > 1000
    assert with_traj.exclude(exit_status="").count() >= 38 and with_traj.filter(cost__gt=0).count() == 39
    absurd = Score.objects.filter(run__task__slug="rlMountainCarContinuous", primary=None).exclude(error="")
    assert absurd.filter(error__contains="absurd value").exists()

    again = StringIO()
    call_command("import_mlgym_results", str(mlgym_results_dir()), stdout=again, stderr=StringIO())
    assert again.getvalue().startswith("imported 0 runs") and "skipped 676" in again.getvalue()
    assert Run.objects.count() == 676

    board, analysis, run_rows = runs_leaderboard(
        Run.objects.filter(method__in=PUBLISHED_MODELS), methods=PUBLISHED_MODELS
    )
    assert board.tau_max == 1.5 and len(run_rows) == 624
    got = {
        m: (
            round(board.results[Scoring.BEST_ATTEMPT].aup[m], 3),
            round(board.results[Scoring.BEST_SUBMISSION].aup[m], 3),
        )
        for m in board.methods
    }
    assert {m: got[m] for m in PUBLISHED_AUP} == PUBLISHED_AUP
    assert {m: got[m] for m in COMPUTED_AUP} == COMPUTED_AUP
    assert set(analysis.actions) == set(analysis.exit_statuses) == {"claude-35-sonnet-new", "gemini-15-pro", "gpt4o2"}
    assert sum(analysis.actions["gpt4o2"].values()) > 0 and BASELINE not in analysis.costs


def test_it_imports_what_is_valid_and_reports_broken_files(db, tmp_path):
    write_run(tmp_path, folder("ok-model", "blotto", 0), [{"Score": 0.1}, {"Score": float("nan")}], {"Score": -0.2})
    write_run(tmp_path, folder("ok-model", "blotto", 1), None, raw="{broken")
    write_run(tmp_path, "not-an-mlgym-folder", [{"Score": 1}], {})
    err = StringIO()
    call_command("import_mlgym_results", str(tmp_path), stdout=StringIO(), stderr=err)
    run = Run.objects.get()
    assert (run.method, run.best_attempt, run.best_submission) == ("ok-model", 0.1, None)
    submit = Score.objects.get(run=run, kind=Score.Kind.SUBMIT)
    assert submit.primary is None and "NaN" in submit.error and submit.metrics == {"Score": None}
    json.dumps(submit.metrics, allow_nan=False)
    messages = err.getvalue()
    assert "unreadable" in messages and "not-an-mlgym-folder" in messages
    with pytest.raises(CommandError, match="not a directory"):
        call_command("import_mlgym_results", str(tmp_path / "missing"))


def test_it_names_the_truncated_file_when_it_refuses_a_folder(db, tmp_path):
    write_run(tmp_path, folder("ok-model", "blotto", 1), None, raw='{"agent": [{"Score": 0.')
    with pytest.raises(CommandError, match=r"no readable results.json found \(.*/results.json: file: unreadable"):
        call_command("import_mlgym_results", str(tmp_path), stdout=StringIO(), stderr=StringIO())
    with pytest.raises(CommandError, match=r"no readable results.json found \(.*/results.json: file: unreadable"):
        call_command("aup", results=str(tmp_path), stdout=StringIO())
