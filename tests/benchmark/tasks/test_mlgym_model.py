"""MLGym's model tasks (rlMountainCarContinuous): config.yaml and checkpoints/*.pkl leave the agent's
sandbox, MLGym's pristine evaluate.py scores them on the task's image variant (jax, gymnax, flax...,
CPU wheels), with MLGym's own src/ and the checkpoints loaded as data only.

The Docker tests build the task's image variant on first use (about a minute here: 54 wheels from
the package registry, cached by the hash of its inputs afterwards), hence `slow`.
"""

from __future__ import annotations

import importlib.util
import io
import math
import os
import pickle

import numpy as np
import pytest

from benchmark.models import Task
from benchmark.tasks.evaluation import (
    agent_sandbox_spec,
    artifact_matches,
    submission_evaluate,
    task_folder,
    task_image_ensure,
    workspace_prepare,
)
from benchmark.tasks.mlgym import MODEL_WRAPPER
from benchmark.tasks.resources import task_requirements
from sandbox import open_session
from tests.benchmark.tasks.mlgym_fixtures import MLGYM_DIR, build_dir, docker, mlgym, needs_mlgym

__all__ = ["build_dir", "docker", "mlgym"]  # fixtures, imported for pytest

pytestmark = [needs_mlgym, pytest.mark.django_db]
CAR = "rlMountainCarContinuous"

# The starter code's own network, saved untrained by the starter's own helpers: five checkpoints
# as src/train.py names them (config-42-<i>.pkl), and the config beside them, as the task asks.
STARTER_CHECKPOINTS = """cd /workspace && python3 - <<'EOF_'
import sys
sys.path.insert(0, "src")
import jax
from helpers import load_config, save_pkl_object
from networks import get_model_ready
config = load_config("src/config.yaml", 42)
for i in range(5):
    model, params = get_model_ready(jax.random.PRNGKey(i), config.train_config)
    save_pkl_object({"network": params, "train_config": config.train_config, "log_steps": [], "log_return": []},
                    f"checkpoints/config-42-{i}.pkl")
EOF_
cp src/config.yaml config.yaml"""

FORGED = 'import json\nprint(json.dumps({"Reward Mean": 1000.0, "Reward Std": 0.0}))\n'

# A checkpoint whose unpickling would print the forged metrics from inside the evaluator.
EVIL_CHECKPOINTS = """cd /workspace && mkdir -p checkpoints && python3 - <<'EOF_'
import builtins, pickle
class Evil:
    def __reduce__(self):
        return (builtins.exec, ('import json; print(json.dumps({"Reward Mean": 1000.0, "Reward Std": 0.0}))',))
for i in range(5):
    with open(f"checkpoints/config-42-{i}.pkl", "wb") as out:
        pickle.dump({"network": Evil()}, out)
EOF_
cp src/config.yaml config.yaml"""


def wrapper_module():
    spec = importlib.util.spec_from_file_location("referee_model_evaluate", MODEL_WRAPPER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_it_makes_mountain_car_runnable_with_cpu_wheels_that_import_together(mlgym):
    task = mlgym(CAR)
    assert task.config["runnable"], task.config["not_runnable_reason"]
    assert task.config["artifacts"] == ["config.yaml", "checkpoints/*.pkl"]
    assert task.config["requirements"][0] == "jax[cuda12]"  # MLGym's list, as published...
    # ...and what the CPU image gets: no CUDA wheels; jax and gymnax capped where today's releases
    # break MLGym's code (tensorflow_probability's import, gymnax's six-value step).
    assert task_requirements(task) == [
        "jax<0.7",
        "gymnax<1",
        "flax",
        "optax",
        "tqdm",
        "numpy",
        "tensorflow_probability",
        "dotmap",
    ]
    folder = task_folder(task)
    source = MLGYM_DIR / "data" / CAR
    evaluator = folder / "evaluator"
    assert (evaluator / "evaluate.py").read_bytes() == (source / "evaluate.py").read_bytes()
    assert (evaluator / "src" / "networks.py").read_bytes() == (source / "src" / "networks.py").read_bytes()
    assert (evaluator / MODEL_WRAPPER.name).is_file()
    assert (folder / "workspace" / "src" / "train.py").is_file() and (folder / "workspace" / "evaluate.py").is_file()
    assert task.config["baseline"]["command"] == "python3 src/train.py && cp src/config.yaml config.yaml"


def test_it_leaves_the_model_tasks_it_has_not_tried_unlaunchable_with_the_reason(mlgym):
    reinforce = mlgym("rlMountainCarContinuousReinforce")
    assert not reinforce.config["runnable"]
    assert "not been run behind its walls yet" in reinforce.config["not_runnable_reason"]


def test_it_matches_a_pattern_artifact_in_its_own_folder_only():
    assert artifact_matches("checkpoints/config-42-0.pkl", "checkpoints/*.pkl")
    assert not artifact_matches("checkpoints/deeper/x.pkl", "checkpoints/*.pkl")
    assert not artifact_matches("checkpoints/x.pkl.py", "checkpoints/*.pkl")
    assert not artifact_matches("other/x.pkl", "checkpoints/*.pkl")
    assert artifact_matches("config.yaml", "config.yaml") and not artifact_matches("config.yml", "config.yaml")


def test_it_loads_a_checkpoint_of_arrays_and_refuses_one_that_names_code():
    module = wrapper_module()
    data = {"network": {"params": {"w": np.arange(6, dtype=np.float32).reshape(2, 3)}}, "steps": [1, 2.5]}
    loaded = module.loads(pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL))
    assert np.array_equal(loaded["network"]["params"]["w"], data["network"]["params"]["w"])

    class Evil:
        def __reduce__(self):
            return (os.system, ("echo owned",))

    with pytest.raises(pickle.UnpicklingError, match=r"names posix\.system, which is not data"):
        module.load(io.BytesIO(pickle.dumps({"network": Evil()})))
    with pytest.raises(pickle.UnpicklingError, match="builtins.getattr"):
        module.loads(b"cbuiltins\ngetattr\n.")


def agent_does(task: Task, commands: list[str], *, evaluations: int = 1):
    with open_session(agent_sandbox_spec(task=task, run_code="mlgym-model")) as session:
        workspace_prepare(task=task, session=session)
        scores = []
        for command in commands:
            if command == "EVALUATE":
                scores.append(submission_evaluate(task=task, session=session, split="test"))
                continue
            result = session.run(command, timeout=300)
            assert result.exit_code == 0, result.output
        return scores


@pytest.mark.docker
@pytest.mark.slow
def test_it_scores_the_starter_network_and_ignores_the_agents_evaluate_and_src(mlgym, docker):
    task = mlgym(CAR)
    task_image_ensure(task)
    rig = f"cat > evaluate.py <<'EOF_'\n{FORGED}EOF_\ncp evaluate.py src/helpers.py && cp evaluate.py src/networks.py"
    honest, rigged = agent_does(task, [STARTER_CHECKPOINTS, "EVALUATE", f"cd /workspace && {rig}", "EVALUATE"])
    assert honest.error == "", honest.error + honest.output
    # Untrained networks never reach the goal: a small negative return, the action penalty.
    assert math.isfinite(honest.primary) and -100 < honest.primary < 0
    assert set(honest.metrics) == {"Reward Mean", "Reward Std"}
    # MLGym's own files scored, not the agent's (XLA's threaded float32 sums vary in the last digits).
    assert rigged.error == "" and rigged.metrics == pytest.approx(honest.metrics, rel=1e-5)


@pytest.mark.docker
@pytest.mark.slow
def test_it_refuses_a_checkpoint_that_would_run_code_in_the_evaluator(mlgym, docker):
    task = mlgym(CAR)
    task_image_ensure(task)
    (score,) = agent_does(task, [EVIL_CHECKPOINTS, "EVALUATE"])
    assert score.primary is None and "builtins.exec, which is not data" in score.output, score.output
    assert score.error.startswith("the evaluator exited with code")


@pytest.mark.docker
def test_it_says_when_no_checkpoint_matches(mlgym, docker):
    task = mlgym(CAR)
    task_image_ensure(task)
    setup = "cd /workspace && cp src/config.yaml config.yaml && mkdir -p checkpoints/deeper && touch checkpoints/deeper/a.pkl"
    (score,) = agent_does(task, [setup, "EVALUATE"])
    assert score.primary is None
    assert score.error == "cannot take checkpoints/*.pkl from the workspace: no file there matches it"


def test_evaluate_submission_takes_one_pair_per_checkpoint_and_refuses_one_outside_the_pattern(mlgym, tmp_path):
    from django.core.management.base import CommandError

    from benchmark.management.commands.evaluate_submission import read_artifacts

    task = mlgym(CAR)
    file = tmp_path / "x"
    file.write_bytes(b"data")
    pairs = [f"config.yaml={file}", f"checkpoints/config-42-0.pkl={file}"]
    assert set(read_artifacts(task, pairs)) == {"config.yaml", "checkpoints/config-42-0.pkl"}
    with pytest.raises(CommandError, match="is not an artifact"):
        read_artifacts(task, [*pairs, f"checkpoints/deeper/a.pkl={file}"])
    with pytest.raises(CommandError, match=r"missing checkpoints/\*\.pkl"):
        read_artifacts(task, pairs[:1])


def test_it_says_on_the_task_page_that_mlgyms_memory_file_is_not_used(mlgym, researcher, client_for):
    from django.urls import reverse

    task = mlgym(CAR)
    assert task.config["memory_path"] == "data/rlMountainCarContinuous/memory.json"
    page = client_for(researcher).get(reverse("benchmark:task_detail", args=[task.code])).content.decode()
    assert "memory_path data/rlMountainCarContinuous/memory.json (not in this checkout)" in page
    assert "Referee&#x27;s agents have no memory tool" in page


def test_it_refuses_a_hub_dataset_task_saying_nothing_downloads(mlgym, settings):
    settings.MLGYM_HF_DATASETS_DIR = ""
    cifar = mlgym("imageClassificationCifar10")
    assert not cifar.config["runnable"] and cifar.data_status == Task.DataStatus.MISSING
    assert "uoft-cs/cifar10 has no local copy: set MLGYM_HF_DATASETS_DIR" in cifar.data_detail
    assert "Nothing is downloaded here" in cifar.data_detail
