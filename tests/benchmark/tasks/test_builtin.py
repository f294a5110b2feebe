"""Built-in tasks: their layout, what the agent can see, and baselines scored exactly through the
isolated evaluation (the same path as validate, submit and `manage.py evaluate_submission`)."""

from __future__ import annotations

import json
import shutil
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from benchmark.tasks.baselines import baseline_command, baseline_compute
from benchmark.tasks.evaluation import agent_sandbox_spec, artifacts_evaluate, submission_evaluate, workspace_prepare
from benchmark.tasks.loader import BUILTIN_DIR, task_sync
from benchmark.tasks.spec import content_hash, task_files
from sandbox.evaluation import RUNTIME_DIR
from tests.benchmark.expected_scores import COUNTED, EXPECTED, TIMED, counted

SLUGS = sorted(EXPECTED)
_expected_cache: dict[str, dict[str, float]] = {}


def expected(slug: str) -> dict[str, float]:
    if slug not in _expected_cache:
        _expected_cache[slug] = EXPECTED[slug]()
    return _expected_cache[slug]


def test_it_keeps_one_arena_source_outside_the_task_folders():
    assert not list(BUILTIN_DIR.rglob("arena.py"))
    assert (RUNTIME_DIR / "arena.py").is_file() and (RUNTIME_DIR / "driver.py").is_file()
    users = [p for p in BUILTIN_DIR.glob("*/evaluator/evaluate.py") if "from arena import" in p.read_text()]
    assert len(users) == 7  # every built-in evaluator reports through arena.emit


def test_it_covers_the_evaluation_runtime_in_the_version_hash(tmp_path, monkeypatch):
    from benchmark.tasks import spec as tasks

    runtime = tmp_path / "runtime"
    shutil.copytree(RUNTIME_DIR, runtime, ignore=shutil.ignore_patterns("__pycache__"))
    folder = BUILTIN_DIR / "prisoners_dilemma"
    monkeypatch.setattr(tasks, "RUNTIME_DIR", runtime)
    same = content_hash(folder)
    (runtime / "arena.py").write_text((runtime / "arena.py").read_text() + "\n# changed\n")
    assert content_hash(folder) != same
    monkeypatch.undo()
    assert content_hash(folder) == same


def test_it_declares_every_code_artifact_as_a_submission_of_its_own():
    for slug in SLUGS:
        config = task_sync_spec_config(slug)
        code = [name for name in config["artifacts"] if name.endswith(".py")]
        if code:
            assert config["submission"]["files"] == code, slug
            assert config["submission"]["module"] in code
        else:
            assert config["submission"] is None


def task_sync_spec_config(slug: str) -> dict:
    from benchmark.tasks.loader import task_load

    return task_load(BUILTIN_DIR / slug).config


# Evaluator files the agent may see on purpose: the SAT solver's algorithm is public (the hidden
# part is the instances and the counting, which stay in the evaluator's sandbox).
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
@pytest.mark.parametrize("slug", SLUGS)
def test_it_gives_the_agent_its_workspace_and_nothing_of_the_evaluator(slug, sandbox_image):
    task = task_sync(BUILTIN_DIR / slug)
    with open_agent_sandbox(task) as session:
        workspace_prepare(task=task, session=session)
        listing = session.run("cd /workspace && find . -type f | sort", timeout=30).output.split()
        missing = session.run("ls /evaluator /referee /referee-calls", timeout=30)
    expected_files = {
        "./" + p.relative_to(BUILTIN_DIR / slug / "workspace").as_posix()
        for p in task_files(BUILTIN_DIR / slug / "workspace")
    }
    if task.config["baseline"]["dir"]:
        expected_files |= {"./" + p.name for p in (BUILTIN_DIR / slug / "baseline").iterdir()}
    assert set(listing) == expected_files
    assert missing.exit_code != 0 and missing.output.count("No such file") == 3


def baseline_artifacts(task) -> dict[str, bytes]:
    """The baseline's submission files, made as the baseline agent makes them."""
    with open_agent_sandbox(task) as session:
        workspace_prepare(task=task, session=session)
        run = session.run(baseline_command(task), timeout=300)
        assert run.exit_code == 0, run.output
        return {name: session.get_file(f"/workspace/{name}") for name in task.config["artifacts"]}


@pytest.mark.django_db
@pytest.mark.parametrize("slug", SLUGS)
def test_it_scores_each_baseline_exactly_as_an_independent_computation_does(slug, task_backend, tmp_path):
    task = task_sync(BUILTIN_DIR / slug)
    scores = baseline_compute(task=task)
    task.refresh_from_db()
    assert scores["error"] == "", scores
    assert task.baseline_scores["version"] == task.version_hash
    want = expected(slug)
    for split in ("dev", "test"):
        stored = task.baseline_scores[split]
        assert counted(slug, task.metric, stored["metrics"]) == pytest.approx(want[split], rel=1e-9, abs=1e-12), split
        assert stored["metrics"][task.metric] == stored["primary"]
    assert task.baseline_value() == task.baseline_scores["test"]["primary"]
    if slug in ("prisoners_dilemma", "colonel_blotto", "sat_solver"):
        assert want["dev"] != want["test"]  # dev and test are different pools and instances

    # `manage.py evaluate_submission` on the baseline's files reproduces the stored scores.
    arguments = []
    for name, data in baseline_artifacts(task).items():
        (tmp_path / name).write_bytes(data)
        arguments.append(f"{name}={tmp_path / name}")
    for split in ("dev", "test"):
        out = StringIO()
        call_command("evaluate_submission", slug, "--split", split, "--format", "json", *arguments, stdout=out)
        reported = json.loads(out.getvalue())
        assert reported["error"] == "" and reported["version"] == task.version_hash
        timed = TIMED.get(slug, frozenset())
        stored = task.baseline_scores[split]["metrics"]
        assert {k: v for k, v in reported["metrics"].items() if k not in timed} == {
            k: v for k, v in stored.items() if k not in timed
        }
        assert set(reported["metrics"]) == set(stored)
        if timed:  # the count plus this run's charge for thinking time
            metrics = reported["metrics"]
            assert reported["primary"] == metrics[task.metric]
            assert metrics[task.metric] == pytest.approx(metrics[COUNTED[slug]] + metrics["time_charge"])
        else:
            assert reported["primary"] == task.baseline_scores[split]["primary"]


@pytest.mark.docker
@pytest.mark.django_db
def test_it_takes_only_the_declared_artifact_from_the_workspace(sandbox_image):
    task = task_sync(BUILTIN_DIR / "digits_classification")
    with open_agent_sandbox(task) as session:
        workspace_prepare(task=task, session=session)
        assert session.run("python3 baseline.py", timeout=120).exit_code == 0
        # A fake evaluator, fake labels and a fake metrics file next to the submission change nothing.
        session.put_file("/workspace/evaluate.py", b"print('{\"accuracy\": 1.0}')\n")
        session.put_file("/workspace/labels_dev.csv", b"id,label\n")
        session.put_file("/workspace/.referee/metrics.json", b'{"accuracy": 1.0}')
        honest = submission_evaluate(task=task, session=session, split="dev")
        session.run("rm submission.csv", timeout=30)
        missing = submission_evaluate(task=task, session=session, split="dev")
    assert honest.error == "" and honest.primary == pytest.approx(expected("digits_classification")["dev"])
    assert missing.primary is None and "submission.csv" in missing.error


@pytest.mark.docker
@pytest.mark.django_db
def test_it_reports_a_broken_submission_as_an_error_not_a_score(sandbox_image):
    task = task_sync(BUILTIN_DIR / "colonel_blotto")
    strategy = b"def row_strategy(history):\n    return [60, 60, 60, 0, 0, 0]\n"
    score = artifacts_evaluate(task=task, artifacts={"strategy.py": strategy}, split="test")
    assert score.primary is None
    assert "120" in (score.error + score.output)


@pytest.mark.django_db
def test_it_refuses_to_evaluate_a_task_whose_folder_changed(tmp_path):
    folder = tmp_path / "diabetes_regression"
    shutil.copytree(BUILTIN_DIR / "diabetes_regression", folder)
    task = task_sync(folder)
    (folder / "evaluator" / "labels_test.csv").write_text("id,target\n")
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
