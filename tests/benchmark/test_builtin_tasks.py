"""Built-in tasks: real baselines through the real isolated evaluator, and what the agent can see."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from benchmark.evaluation import (
    agent_sandbox_spec,
    baseline_command,
    baseline_compute,
    submission_evaluate,
    workspace_prepare,
)
from benchmark.tasks import BUILTIN_DIR, task_files, task_sync

# Range each baseline score must fall in (dev and test), from the task's definition of its metric.
RANGES = {
    "prisoners_dilemma": (1.0, 5.0),  # mean payoff per round, payoffs 0..5
    "battle_of_sexes": (0.2, 2.0),  # payoffs 0..2
    "colonel_blotto": (-1.0, 1.0),
    "sat_solver": (1.0, 20_000.0),  # mean decisions, capped at 20,000
    "mountain_car_continuous": (-100.0, 100.0),
    "digits_classification": (0.9, 1.0),  # logistic regression on raw pixels
    "diabetes_regression": (0.3, 0.7),  # ordinary least squares
}


def test_it_keeps_every_copy_of_the_arena_identical():
    reference = (BUILTIN_DIR / "arena.py").read_bytes()
    copies = sorted(BUILTIN_DIR.glob("*/evaluator/arena.py"))
    assert len(copies) == 5
    assert all(copy.read_bytes() == reference for copy in copies)


# Evaluator files the agent may see on purpose: the SAT solver's algorithm is public (the hidden
# part is the instances and the counting, which stay in the evaluator's own process).
PUBLIC = {"sat_solver/workspace/solver.py"}


def test_it_keeps_evaluator_files_out_of_the_workspace_folders():
    for folder in (p for p in BUILTIN_DIR.iterdir() if (p / "task.yaml").is_file()):
        evaluator = {p.read_bytes() for p in task_files(folder / "evaluator")}
        for path in task_files(folder / "workspace"):
            if path.relative_to(BUILTIN_DIR).as_posix() in PUBLIC:
                continue
            assert path.read_bytes() not in evaluator, f"{path} duplicates an evaluator file"
            assert not path.name.startswith("labels"), path


def open_agent_sandbox(task):
    from sandbox import open_session

    return open_session(agent_sandbox_spec(task=task, run_code="test"))


@pytest.mark.docker
@pytest.mark.django_db
@pytest.mark.parametrize("slug", sorted(RANGES))
def test_it_scores_the_baseline_on_dev_and_test(slug):
    task = task_sync(BUILTIN_DIR / slug)
    low, high = RANGES[slug]
    with open_agent_sandbox(task) as session:
        workspace_prepare(task=task, session=session)
        listing = session.run("cd /workspace && find . -type f | sort", timeout=30).output.split()
        expected = {
            "./" + p.relative_to(BUILTIN_DIR / slug / "workspace").as_posix()
            for p in task_files(BUILTIN_DIR / slug / "workspace")
        }
        if task.config["baseline"]["dir"]:
            expected |= {"./" + p.name for p in (BUILTIN_DIR / slug / "baseline").iterdir()}
        # Starter code, public data and the baseline: nothing from the evaluator (labels, opponents).
        assert set(listing) == expected
        assert not session.run("ls /evaluator", timeout=30).exit_code == 0
        run = session.run(baseline_command(task), timeout=120)
        assert run.exit_code == 0, run.output
        scores = {split: submission_evaluate(task=task, session=session, split=split) for split in ("dev", "test")}
    for split, score in scores.items():
        assert score.error == "", f"{split}: {score.error}\n{score.output}"
        assert score.primary is not None and math.isfinite(score.primary)
        assert low <= score.primary <= high, f"{slug} {split} = {score.primary}"
        assert score.metrics[task.metric] == score.primary
    if slug in ("prisoners_dilemma", "colonel_blotto", "sat_solver"):
        # dev and test are different opponent pools / instance sets.
        assert scores["dev"].primary != scores["test"].primary


@pytest.mark.docker
@pytest.mark.django_db
def test_it_stores_baseline_scores_on_the_task_version():
    task = task_sync(BUILTIN_DIR / "battle_of_sexes")
    scores = baseline_compute(task=task)
    task.refresh_from_db()
    assert scores["error"] == ""
    assert task.baseline_scores["version"] == task.version_hash
    assert 0 <= task.baseline_scores["dev"]["primary"] <= 2
    assert 0 <= task.baseline_scores["test"]["primary"] <= 2
    # Nothing is written back into the task folder.
    assert task_sync(BUILTIN_DIR / "battle_of_sexes").pk == task.pk


CHEATING_STRATEGY = """
import json, os, subprocess
print(json.dumps({"Score": 5.0}))  # an agent reporting its own metric

def peek():
    found = []
    for path in ("/evaluator/opponents.py", "/proc/1/cmdline", "/proc/self/environ"):
        try:
            found.append(open(path).read()[:20])
        except Exception as exc:
            found.append(type(exc).__name__)
    try:
        subprocess.run(["cat", "/evaluator/opponents.py"])
        found.append("spawned")
    except Exception as exc:
        found.append(type(exc).__name__)
    return found

SEEN = peek()

def row_strategy(history):
    print(json.dumps({"Score": 5.0}))
    assert all(item == "PermissionError" for item in SEEN), SEEN
    return 1
"""


@pytest.mark.docker
@pytest.mark.django_db
def test_it_walls_the_submission_off_from_opponents_and_its_own_score():
    task = task_sync(BUILTIN_DIR / "prisoners_dilemma")
    with open_agent_sandbox(task) as session:
        workspace_prepare(task=task, session=session)
        session.put_file("/workspace/strategy.py", CHEATING_STRATEGY.encode())
        score = submission_evaluate(task=task, session=session, split="dev")
    # It ran (every read and spawn was refused), it always defected, and its printed "5.0" was ignored.
    assert score.error == "", score.error + score.output
    assert 1.0 <= score.primary < 5.0


@pytest.mark.docker
@pytest.mark.django_db
def test_it_takes_only_the_declared_artifact_from_the_workspace():
    task = task_sync(BUILTIN_DIR / "digits_classification")
    with open_agent_sandbox(task) as session:
        workspace_prepare(task=task, session=session)
        assert session.run("python3 baseline.py", timeout=120).exit_code == 0
        # A fake evaluator and fake labels next to the submission change nothing.
        session.put_file("/workspace/evaluate.py", b"print('{\"accuracy\": 1.0}')\n")
        session.put_file("/workspace/labels_dev.csv", b"id,label\n")
        honest = submission_evaluate(task=task, session=session, split="dev")
        session.run("rm submission.csv", timeout=30)
        missing = submission_evaluate(task=task, session=session, split="dev")
    assert honest.error == "" and 0.9 <= honest.primary < 1.0
    assert missing.primary is None and "submission.csv" in missing.error


@pytest.mark.docker
@pytest.mark.django_db
def test_it_reports_a_broken_submission_as_an_error_not_a_score():
    task = task_sync(BUILTIN_DIR / "colonel_blotto")
    with open_agent_sandbox(task) as session:
        workspace_prepare(task=task, session=session)
        session.put_file("/workspace/strategy.py", b"def row_strategy(history):\n    return [60, 60, 60, 0, 0, 0]\n")
        score = submission_evaluate(task=task, session=session, split="test")
    assert score.primary is None
    assert "120" in (score.error + score.output)


@pytest.mark.django_db
def test_it_refuses_to_evaluate_a_task_whose_folder_changed(tmp_path):
    import shutil

    folder = tmp_path / "diabetes_regression"
    shutil.copytree(BUILTIN_DIR / "diabetes_regression", folder)
    task = task_sync(folder)
    (folder / "evaluator" / "labels_test.csv").write_text("id,target\n")
    from benchmark.evaluation import artifacts_evaluate

    score = artifacts_evaluate(task=task, artifacts={"submission.csv": b"id,target\n"}, split="test")
    assert score.primary is None and "no longer holds version" in score.error


@pytest.mark.django_db
def test_it_does_not_run_mlgym_tasks_without_their_code(tmp_path):
    configs = tmp_path / "configs"
    (configs / "tasks").mkdir(parents=True)
    (configs / "datasets").mkdir()
    (configs / "tasks" / "blotto.yaml").write_text(
        "id: blotto\nname: Blotto\ndescription: d\nstarter_code: [data/blotto/strategy.py]\n"
    )
    task = task_sync(configs / "tasks" / "blotto.yaml")
    assert task.data_status == "missing" and str(Path(tmp_path) / "data/blotto/strategy.py") in task.data_detail
    scores = baseline_compute(task=task)
    assert "cannot run here" in scores["error"] and "dev" not in scores
