"""A task whose evaluator imports the submitted module by name, as MLGym's do, declared with a
``submission:`` section: the evaluator runs unchanged, the submitted code runs in its own sandbox.

MLGym's released data on this machine has no task code, so the task folder is made here, in
MLGym's manner: evaluate.py does ``from target import target_column_strategy`` and prints its
metrics as a JSON line (``evaluator.metrics: stdout``).
"""

from __future__ import annotations

import json
import random
import textwrap
from pathlib import Path

import pytest

from benchmark.tasks.evaluation import artifacts_evaluate
from benchmark.tasks.loader import task_sync

pytestmark = pytest.mark.django_db

TASK_YAML = """\
title: Matching pennies (MLGym's layout)
metric: Score
direction: max
description: Pick 0 or 1; score when you match the hidden column player.
artifacts: [target.py]
submission:
  module: target.py
  functions: [target_column_strategy]
  call_timeout: 2
evaluator:
  command: python3 {evaluator_dir}/evaluate.py --split {split}
  metrics: stdout
  timeout: 60
baseline:
  command: python3 -c "import target"
"""

EVALUATE = """\
import argparse, json, os, random

from target import target_column_strategy  # MLGym's way: the submission is imported by name

SEEDS = {"dev": 11, "test": 23}

parser = argparse.ArgumentParser()
parser.add_argument("--split", required=True)
split = parser.parse_args().split
rng = random.Random(SEEDS[split])
history, score = [], 0
for _ in range(40):
    mine = target_column_strategy(history)
    theirs = rng.randrange(2)
    score += int(mine == theirs)
    history.append([mine, theirs])
print("evaluated", len(history), "rounds; workspace:", sorted(os.listdir(".")))
print(json.dumps({"Score": score / len(history), "pwned": float(os.path.exists("PWNED"))}))
"""

STARTER = """\
def target_column_strategy(history):
    return history[-1][1] if history else 0
"""

CHEAT = STARTER + textwrap.dedent(
    """
    import json, os
    print(json.dumps({"Score": 1.0, "pwned": 0.0}))          # a metrics line of its own
    open("PWNED", "w").write("x")                             # a file next to the evaluator?
    for path in ("/evaluator/evaluate.py", "evaluate.py"):
        try:
            open(path).read()
            print("READ", path)
        except OSError as exc:
            print("refused", path, type(exc).__name__)
    """
)


@pytest.fixture
def folder(public_dir: Path) -> Path:
    root = public_dir / "pennies"
    (root / "workspace").mkdir(parents=True)
    (root / "evaluator").mkdir()
    (root / "task.yaml").write_text(TASK_YAML)
    (root / "workspace" / "target.py").write_text(STARTER)
    (root / "evaluator" / "evaluate.py").write_text(EVALUATE)
    for path in [root, *root.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return root


def expected(split: str) -> float:
    namespace: dict = {}
    exec(STARTER, namespace)
    rng, history, score = random.Random({"dev": 11, "test": 23}[split]), [], 0
    for _ in range(40):
        mine = namespace["target_column_strategy"](json.loads(json.dumps(history)))
        theirs = rng.randrange(2)
        score += int(mine == theirs)
        history.append([mine, theirs])
    return score / 40


def test_it_runs_an_mlgym_style_evaluator_unchanged_against_an_isolated_submission(folder, task_backend):
    task = task_sync(folder)
    honest = artifacts_evaluate(task=task, artifacts={"target.py": STARTER.encode()}, split="test")
    cheat = artifacts_evaluate(task=task, artifacts={"target.py": CHEAT.encode()}, split="test")
    assert honest.error == "", honest.error + honest.output
    assert honest.metrics == {"Score": expected("test"), "pwned": 0.0}
    # The evaluator's workspace holds the stand-in module only; the cheat ran elsewhere.
    assert "workspace: ['target.py']" in honest.output
    assert cheat.error == "", cheat.error + cheat.output
    assert cheat.metrics == honest.metrics
    assert "READ" not in cheat.output and cheat.output.count("refused") == 2


def test_it_refuses_the_same_task_without_its_submission_section(folder):
    from benchmark.tasks.spec import TaskFormatError

    (folder / "task.yaml").write_text(
        TASK_YAML.replace("submission:\n  module: target.py\n", "x_submission:\n  module: target.py\n")
    )
    with pytest.raises(TaskFormatError):
        task_sync(folder)
    text = TASK_YAML.split("submission:")[0] + "evaluator:" + TASK_YAML.split("evaluator:")[1]
    (folder / "task.yaml").write_text(text)
    with pytest.raises(TaskFormatError, match="is code"):
        task_sync(folder)
