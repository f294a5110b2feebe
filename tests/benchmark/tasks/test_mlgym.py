"""MLGym's own tasks from its checkout: what the loader makes runnable, what the build puts on each
side of the wall, and the published baselines reproduced through Referee's isolated evaluation."""

from __future__ import annotations

import csv
import io
import shutil

import pytest

from benchmark.models import Task
from benchmark.tasks.baselines import baseline_compute, published_comparison
from benchmark.tasks.evaluation import TaskNotRunnable, artifacts_evaluate, task_folder
from benchmark.tasks.loader import task_sync
from tests.benchmark.tasks.mlgym_fixtures import MLGYM_DIR, build_dir, docker, mlgym, needs_mlgym

__all__ = ["build_dir", "docker", "mlgym"]  # fixtures, imported for pytest

pytestmark = [needs_mlgym, pytest.mark.django_db]
GAMES = ["battleOfSexes", "prisonersDilemma", "blotto"]


def names(folder) -> set[str]:
    return {path.relative_to(folder).as_posix() for path in folder.rglob("*") if path.is_file()}


@pytest.mark.parametrize("name", GAMES)
def test_it_builds_a_game_with_the_opponent_and_evaluator_pristine_on_the_evaluator_side(mlgym, name):
    task = mlgym(name)
    folder = task_folder(task)
    source = MLGYM_DIR / "data" / name
    assert names(folder / "workspace") == {"strategy.py", "target.py", "evaluate.py"}  # copies, as in MLGym
    assert names(folder / "evaluator") == {"evaluate.py", "target.py"}
    for file in ("evaluate.py", "target.py"):
        assert (folder / "evaluator" / file).read_bytes() == (source / file).read_bytes()
    # No strategy.py next to evaluate.py: `import strategy` must find the stand-in, never a file.
    assert task.config["submission"]["module"] == "strategy.py" and task.config["artifacts"] == ["strategy.py"]


def test_it_keeps_titanic_answers_and_the_sample_that_equals_them_out_of_the_workspace(mlgym):
    task = mlgym("titanic")
    folder = task_folder(task)
    assert names(folder / "workspace") == {"evaluate.py", "data/train.csv", "data/test.csv"}
    assert names(folder / "evaluator") == {"evaluate.py", "hidden/data/ground_truth.csv"}
    assert task.metric == "accuracy" and "byte for byte its answers" in task.config["notes"][0]


def test_it_refuses_to_run_a_version_whose_checkout_changed(mlgym, settings, tmp_path):
    root = tmp_path / "mlgym"
    shutil.copytree(MLGYM_DIR / "configs", root / "configs")
    shutil.copytree(MLGYM_DIR / "data" / "blotto", root / "data" / "blotto")
    task = task_sync(root / "configs" / "tasks" / "blotto.yaml")
    assert task.config["runnable"]
    target = root / "data" / "blotto" / "target.py"
    target.chmod(0o644)
    target.write_text("def target_column_strategy(history):\n    return [0] * 6\n")
    with pytest.raises(TaskNotRunnable, match="no longer holds version"):
        task_folder(task)
    assert task_sync(root / "configs" / "tasks" / "blotto.yaml").version_hash != task.version_hash


def test_it_names_what_a_missing_task_lacks_and_does_not_offer_it(mlgym):
    from benchmark.runs.forms import launchable_tasks

    sat = mlgym("3SATTime")
    car = mlgym("rlMountainCarContinuousReinforce")
    blotto = mlgym("blotto")
    assert sat.data_status == Task.DataStatus.MISSING
    assert f"put its files in {MLGYM_DIR / 'data' / '3SATTime' / 'data'}" in sat.data_detail
    assert not car.config["runnable"] and car.data_status != Task.DataStatus.MISSING
    assert set(launchable_tasks()) == {blotto}
    with pytest.raises(TaskNotRunnable, match="data is missing"):
        task_folder(sat)


@pytest.mark.docker
@pytest.mark.slow
def test_it_reproduces_the_published_house_price_baseline(mlgym, docker):
    task = mlgym("regressionKaggleHousePrice")
    folder = task_folder(task)  # MLGym's _generate_split.py, run in a sandbox
    assert names(folder / "workspace") == {"baseline.py", "evaluate.py", "data/train.csv", "data/validation.csv",
                                           "data/test.csv"}  # fmt: skip
    assert names(folder / "evaluator") == {"evaluate.py", "hidden/data/answer.csv"}
    scores = baseline_compute(task=task)
    assert scores["error"] == "", scores
    comparison = published_comparison(task)
    assert {row["metric"]: row["agrees"] for row in comparison["rows"]} == {"rmse": True, "r2": True}
    assert scores["test"]["metrics"]["r2"] == pytest.approx(0.8799891474739243, rel=1e-9)


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize("name", GAMES)
def test_it_reproduces_the_published_game_baselines_within_their_monte_carlo_error(mlgym, docker, name):
    task = mlgym(name)
    task.config = {**task.config, "monte_carlo_repeats": 3}  # 5 in production; 3 keep the test short
    scores = baseline_compute(task=task)
    assert scores["error"] == "", scores
    assert len(scores["repeats"]) == 3
    (row,) = published_comparison(task)["rows"]
    assert row["metric"] == "Score" and row["agrees"] is True, row
    assert 0 < row["sd"] < 0.05


def _titanic_submission(rule) -> bytes:
    rows = list(csv.DictReader((MLGYM_DIR / "data" / "titanic" / "data" / "test.csv").open()))
    out = io.StringIO()
    out.write("PassengerId,Survived\n")
    for row in rows:
        out.write(f"{row['PassengerId']},{rule(row)}\n")
    return out.getvalue().encode()


@pytest.mark.docker
def test_it_scores_titanic_against_answers_that_are_the_gender_rule(mlgym, docker):
    """Why Referee's titanic cannot reproduce MLGym's 0.76555 (Kaggle's real labels): the released
    ground truth is Kaggle's gender-rule sample, so that rule scores 1.0 here."""
    task = mlgym("titanic")
    gender = artifacts_evaluate(task=task, artifacts={"submission.csv": _titanic_submission(
        lambda row: int(row["Sex"] == "female"))}, split="test")  # fmt: skip
    nobody = artifacts_evaluate(
        task=task, artifacts={"submission.csv": _titanic_submission(lambda row: 0)}, split="test"
    )
    assert gender.error == "" and gender.metrics == {"accuracy": 1.0}
    assert nobody.primary == pytest.approx(266 / 418)
    scores = baseline_compute(task=task)
    assert "has no baseline code" in scores["error"]
    (row,) = published_comparison(task)["rows"]
    assert row["agrees"] is None and row["how"].startswith("not computed")


def test_its_pages_say_what_is_missing_and_why_a_task_does_not_run(mlgym, researcher, client_for):
    from django.urls import reverse

    client = client_for(researcher)
    sat = client.get(reverse("benchmark:task_detail", args=[mlgym("3SATTime").code])).content.decode()
    assert str(MLGYM_DIR / "data" / "3SATTime" / "data") in sat and "its data is missing" in sat
    car = client.get(
        reverse("benchmark:task_detail", args=[mlgym("rlMountainCarContinuousReinforce").code])
    ).content.decode()
    assert "ModelSubmissionTasks" in car and "Launch on this task" not in car
    titanic = client.get(reverse("benchmark:task_detail", args=[mlgym("titanic").code])).content.decode()
    assert "Launch on this task" in titanic and "byte for byte its answers" in titanic
    launch = client.get(reverse("benchmark:run_launch")).content.decode()
    assert "Titanic Survival Prediction" in launch and "3 SAT Heuristic" not in launch


def test_it_does_not_run_a_csv_task_whose_labels_would_sit_in_the_workspace(mlgym, tmp_path):
    """COCO with its data present: its captions (the answers) are inside the dataset MLGym hands
    the agent, so Referee refuses to run it rather than leak them."""
    root = tmp_path / "mlgym"
    shutil.copytree(MLGYM_DIR / "configs", root / "configs")
    shutil.copytree(MLGYM_DIR / "data" / "imageCaptioningCOCO", root / "data" / "imageCaptioningCOCO")
    data = root / "data" / "imageCaptioningCOCO"
    data.chmod(0o755)
    (data / "data").mkdir()
    (data / "data" / "test_images.parquet").write_bytes(b"captions")
    task = task_sync(root / "configs" / "tasks" / "imageCaptioningCOCO.yaml")
    assert task.data_status != Task.DataStatus.MISSING, task.data_detail
    assert not task.config["runnable"] and "test labels" in task.config["not_runnable_reason"]
