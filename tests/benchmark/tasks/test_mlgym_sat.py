"""MLGym's 3SATTime: refused with the reason while its dataset is missing (MLGym's release has no
dataset.pkl and no script that makes it); with a dataset in place, heuristic_fn runs in the
submission's sandbox and its int-keyed dicts cross the pipes as they are."""

from __future__ import annotations

import itertools
import pickle
import random
import shutil

import pytest
from django.urls import reverse

from benchmark.models import Task
from benchmark.tasks.evaluation import artifacts_evaluate, task_folder
from benchmark.tasks.loader import task_sync
from tests.benchmark.tasks.mlgym_fixtures import MLGYM_DIR, build_dir, docker, mlgym, needs_mlgym

__all__ = ["build_dir", "docker", "mlgym"]  # fixtures, imported for pytest

pytestmark = [needs_mlgym, pytest.mark.django_db]


def test_it_refuses_3sat_without_its_dataset_and_says_why_on_the_task_page(mlgym, researcher, client_for):
    sat = mlgym("3SATTime")
    assert not sat.config["runnable"] and sat.data_status == Task.DataStatus.MISSING
    assert "nor MLGym's _helpers/_generate_split.py to make it" in sat.data_detail
    page = client_for(researcher).get(reverse("benchmark:task_detail", args=[sat.code])).content.decode()
    assert str(MLGYM_DIR / "data" / "3SATTime" / "data") in page
    assert "Referee does not make up data in its place" in page


def satisfiable(formula: list[list[int]], variables: int) -> bool:
    for values in itertools.product([False, True], repeat=variables):
        if all(any((lit > 0) == values[abs(lit) - 1] for lit in clause) for clause in formula):
            return True
    return False


@pytest.fixture
def sat_checkout(tmp_path):
    """MLGym's 3SATTime folder with a small dataset in MLGym's layout: (index, variables, clauses,
    formula, is_sat, _), of which evaluate.py scores entries 3 onwards. Unsatisfiable formulas are
    the ones a heuristic that saw string keys gets wrong or never finishes."""
    root = tmp_path / "mlgym"
    shutil.copytree(MLGYM_DIR / "configs", root / "configs")
    shutil.copytree(MLGYM_DIR / "data" / "3SATTime", root / "data" / "3SATTime")
    folder = root / "data" / "3SATTime"
    folder.chmod(0o755)
    (folder / "data").mkdir()
    rng = random.Random(20260)
    entries, answers = [], []
    for index in range(11):
        variables = 6
        clauses = [[rng.choice([-1, 1]) * v for v in rng.sample(range(1, variables + 1), 3)] for _ in range(34)]
        answer = satisfiable(clauses, variables)
        entries.append((index, variables, len(clauses), clauses, answer, None))
        answers.append(answer)
    assert {True, False} <= set(answers[3:])  # both kinds among the scored ones
    (folder / "data" / "dataset.pkl").write_bytes(pickle.dumps(entries))
    return root


def test_it_keeps_the_3sat_dataset_with_its_answers_on_the_evaluator_side(sat_checkout, settings, build_dir):
    settings.MLGYM_BUILD_DIR = str(build_dir)
    task = task_sync(sat_checkout / "configs" / "tasks" / "3SATTime.yaml")
    assert task.config["runnable"], task.config["not_runnable_reason"]
    folder = task_folder(task)
    assert (folder / "evaluator" / "hidden" / "data" / "dataset.pkl").is_file()
    assert not (folder / "workspace" / "data" / "dataset.pkl").exists()
    assert not (folder / "evaluator" / "heuristic.py").exists()  # `import heuristic` finds the stand-in
    assert (folder / "evaluator" / "solver.py").read_bytes() == (MLGYM_DIR / "data/3SATTime/solver.py").read_bytes()


@pytest.mark.docker
@pytest.mark.slow
def test_it_solves_every_formula_with_the_starter_heuristic_across_the_pipes(sat_checkout, settings, build_dir, docker):
    settings.MLGYM_BUILD_DIR = str(build_dir)
    task = task_sync(sat_checkout / "configs" / "tasks" / "3SATTime.yaml")
    starter = (MLGYM_DIR / "data" / "3SATTime" / "heuristic.py").read_bytes()
    result = artifacts_evaluate(task=task, artifacts={"heuristic.py": starter}, split="test")
    assert result.error == "", result.error + result.output
    assert result.metrics["Correct"] == 8 and result.metrics["Incorrect"] == 0
    # What the heuristic saw: assignments and conflict counts keyed by int, as in MLGym's own process.
    probe = (
        "def heuristic_fn(clauses, assignments, conflict_count, assignment_history, level):\n"
        "    keys = list(assignments) + list(conflict_count)\n"
        "    if any(not isinstance(key, int) for key in keys):\n"
        "        raise TypeError(f'keys arrived as {sorted({type(k).__name__ for k in keys})}')\n"
        "    free = sorted({abs(l) for c in clauses for l in c if abs(l) not in assignments})\n"
        "    return (free[0], True) if free else (None, True)\n"
    )
    probed = artifacts_evaluate(task=task, artifacts={"heuristic.py": probe.encode()}, split="test")
    assert probed.error == "" and probed.metrics["Correct"] == 8, probed.error + probed.output
