"""MLGym's Hugging Face datasets from a local copy (MLGYM_HF_DATASETS_DIR): resolution at load, what the
task and launch pages say when the copy is absent or unusable, and the split walls (the agent's
workspace holds the scored split with its labels withheld; the evaluator scores against the copy).

The walls are tried on a tiny MLGym-format checkout in tmp_path whose task names a made-up hub dataset
(testorg/tiny), with an evaluate.py shaped like MLGym's (load_dataset("testorg/tiny", split="test")) and
`datasets` as its generic package list (its image variant: about a minute to build, cached by hash;
MLGym's real list adds torch and transformers, gigabytes). Neither pyarrow nor datasets is in
Referee's requirements, so the synthetic data is written by pyarrow inside a sandbox on that variant,
in both layouts: the hub's parquet files, and the files DatasetDict.save_to_disk writes
(dataset_dict.json, <split>/state.json, dataset_info.json and an Arrow stream), written out by hand.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from django.urls import reverse

from benchmark.models import Task
from benchmark.tasks.evaluation import agent_sandbox_spec, submission_evaluate, task_folder, workspace_prepare
from benchmark.tasks.loader import task_sync
from benchmark.tasks.mlgym import HUB_COMMAND
from benchmark.tasks.resources import task_gpus, task_requirements
from sandbox import SandboxSpec, open_session
from tests.benchmark.tasks.mlgym_fixtures import build_dir, docker, mlgym, needs_mlgym

__all__ = ["build_dir", "docker", "mlgym"]  # fixtures, imported for pytest

pytestmark = pytest.mark.django_db

TRAIN_LABELS = [0, 1, 2, 0, 1, 2, 0, 1]
TEST_LABELS = [2, 0, 1, 1, 0, 2]
FEATURES = {
    "text": {"dtype": "string", "_type": "Value"},
    "label": {"names": ["a", "b", "c"], "_type": "ClassLabel"},
}

TASK_YAML = """\
id: tinyHub
name: Tiny hub task
description: |-
  Classify texts. {dataset_docs}
dataset_configs:
- datasets/tiny.yaml
task_entrypoint: CSVSubmissionTasks
training_timeout: 600
use_generic_conda: true
metric: accuracy
direction: max
starter_code:
- data/tinyHub/evaluate.py
- data/tinyHub/sample_submission.csv
baseline_scores:
- accuracy: 0.5
evaluation_paths:
- evaluate.py
"""

DATASET_YAML = "name: Tiny\ndata_path: testorg/tiny\nis_local: false\ndescription: six texts, three classes\n"

# MLGym's evaluate.py for CIFAR-10, on testorg/tiny (its accuracy_score written out: no scikit-learn needed).
EVALUATE = """\
import argparse, json
import pandas as pd
from datasets import load_dataset
parser = argparse.ArgumentParser()
parser.add_argument("--submission_file", type=str)
args = parser.parse_args()
test_data = load_dataset("testorg/tiny", split="test")
submission = pd.read_csv(args.submission_file)
assert len(submission) == len(test_data), "Submission file does not match the test set size"
true_labels, predicted = test_data["label"], submission["label"].values
print(json.dumps({"accuracy": sum(int(p) == int(t) for p, t in zip(predicted, true_labels)) / len(true_labels)}))
"""

WRITE_DATA = """\
import json, pathlib, sys
import pyarrow as pa, pyarrow.ipc as ipc, pyarrow.parquet as pq
features = json.loads(sys.argv[1]); splits = json.loads(sys.argv[2])
meta = {b"huggingface": json.dumps({"info": {"features": features}}).encode()}
out = pathlib.Path("/workspace/out")
def table(labels):
    return pa.table({"text": [f"t{i}" for i in range(len(labels))], "label": pa.array(labels, pa.int64())}).replace_schema_metadata(meta)
for name, labels in splits.items():
    p = out / "parquet" / "plain_text" / f"{name}-00000-of-00001.parquet"
    p.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table(labels), p)
    d = out / "disk" / name
    d.mkdir(parents=True, exist_ok=True)
    with ipc.new_stream(d / "data-00000-of-00001.arrow", table(labels).schema) as w:
        w.write_table(table(labels))
    (d / "state.json").write_text(json.dumps({"_data_files": [{"filename": "data-00000-of-00001.arrow"}], "_split": name}))
    (d / "dataset_info.json").write_text(json.dumps({"features": features}))
(out / "disk" / "dataset_dict.json").write_text(json.dumps({"splits": list(splits)}))
"""

# Run in the agent's sandbox: every parquet file of the workspace with its labels, and what the starter
# code's call load_dataset("<org>/<name>") gives there (no network, no edit).
READ_WORKSPACE = """cd /workspace && python3 - <<'EOF_'
import glob, json, os, pyarrow.parquet as pq
from datasets import load_dataset
loaded = load_dataset("testorg/tiny")
print(json.dumps({
    "files": {f: pq.read_table(f).column("label").to_pylist() for f in sorted(glob.glob("**/*.parquet", recursive=True))},
    "loaded": {split: list(loaded[split]["label"]) for split in loaded},
    "label_names": loaded["test"].features["label"].names,
    "offline": os.environ.get("HF_DATASETS_OFFLINE"),
}))
EOF_"""


def checkout(root: Path) -> Path:
    """A tiny MLGym checkout: one CSV task on hub dataset testorg/tiny."""
    (root / "configs" / "tasks").mkdir(parents=True)
    (root / "configs" / "datasets").mkdir()
    (root / "configs" / "tasks" / "tinyHub.yaml").write_text(TASK_YAML)
    (root / "configs" / "datasets" / "tiny.yaml").write_text(DATASET_YAML)
    (root / "data" / "tinyHub").mkdir(parents=True)
    (root / "data" / "tinyHub" / "evaluate.py").write_text(EVALUATE)
    (root / "data" / "tinyHub" / "sample_submission.csv").write_text("label\n0\n")
    (root / "dockerfiles").mkdir()
    (root / "dockerfiles" / "generic_conda_requirements.txt").write_text("datasets\n")
    return root


@pytest.fixture
def tiny(tmp_path, settings, build_dir):
    """(sync the tiny task, the hub folder) with MLGYM_HF_DATASETS_DIR set to an empty folder."""
    root = checkout(tmp_path / "mlgym")
    hub = tmp_path / "hub"
    hub.mkdir()
    settings.MLGYM_HF_DATASETS_DIR = str(hub)
    settings.MLGYM_BUILD_DIR = str(build_dir)
    return (lambda: task_sync(root / "configs" / "tasks" / "tinyHub.yaml")), hub


def touch(folder: Path, *names: str) -> None:
    for name in names:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(b"not read at load")


# -- resolution at load ------------------------------------------------------------------------


def test_it_makes_the_task_runnable_from_the_hubs_parquet_files(tiny):
    sync, hub = tiny
    touch(hub / "testorg" / "tiny", "plain_text/train-00000-of-00001.parquet", "plain_text/test-00000-of-00001.parquet")
    task = sync()
    assert task.config["runnable"], task.config["not_runnable_reason"]
    assert task.data_status == Task.DataStatus.OK and task.data_detail == ""
    copy = task.config["hub_datasets"]["testorg/tiny"]
    assert copy["layout"] == "parquet" and copy["folder"] == str(hub / "testorg" / "tiny")
    assert copy["splits"] == {
        "train": ["plain_text/train-00000-of-00001.parquet"],
        "test": ["plain_text/test-00000-of-00001.parquet"],
    }
    assert task.config["evaluator"]["command"] == HUB_COMMAND
    assert task.config["sandbox_env"] == {"HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    assert task_requirements(task) == ["datasets"]  # MLGym's generic list, the checkout's own


def test_it_makes_the_task_runnable_from_a_save_to_disk_folder(tiny):
    sync, hub = tiny
    folder = hub / "testorg" / "tiny"
    touch(
        folder,
        "train/state.json",
        "train/data-00000-of-00001.arrow",
        "test/state.json",
        "test/data-00000-of-00001.arrow",
    )
    (folder / "dataset_dict.json").write_text(json.dumps({"splits": ["train", "test"]}))
    task = sync()
    assert task.config["runnable"], task.config["not_runnable_reason"]
    copy = task.config["hub_datasets"]["testorg/tiny"]
    assert copy["layout"] == "save_to_disk"
    assert copy["splits"]["test"] == ["test/data-00000-of-00001.arrow", "test/state.json"]


def test_it_makes_a_new_version_when_the_copy_appears(tiny):
    sync, hub = tiny
    before = sync()
    touch(hub / "testorg" / "tiny", "data/train-00000-of-00001.parquet", "data/test-00000-of-00001.parquet")
    after = sync()
    assert after.version_hash != before.version_hash and after.is_current
    assert not before.config["runnable"] and after.config["runnable"]


@needs_mlgym
def test_it_makes_mlgyms_cifar10_runnable_on_the_gpu_pool_with_a_copy(mlgym, settings, tmp_path):
    settings.MLGYM_HF_DATASETS_DIR = str(tmp_path)
    touch(
        tmp_path / "uoft-cs" / "cifar10",
        "plain_text/train-00000-of-00001.parquet",
        "plain_text/test-00000-of-00001.parquet",
    )
    task = mlgym("imageClassificationCifar10")
    assert task.config["runnable"], task.config["not_runnable_reason"]
    assert task_gpus(task) == 1  # still a GPU task: the gpu queue, refused at launch with no GPU worker live
    assert "datasets" in task_requirements(task) and "torch" in task_requirements(task)
    assert "computed baseline here is that failure" in " ".join(task.config["notes"])


@needs_mlgym
def test_it_marks_mnli_a_gpu_task_and_says_its_code_loads_other_names(mlgym, settings, tmp_path):
    settings.MLGYM_HF_DATASETS_DIR = str(tmp_path)
    task = mlgym("naturalLanguageInferenceMNLI")
    assert task_gpus(task) == 1
    assert "loads SetFit/mnli, multi_nli, not the dataset config's nyu-mll/multi_nli" in " ".join(task.config["notes"])


# -- what the pages say -----------------------------------------------------------------------


def test_it_says_where_to_put_a_missing_copy_on_the_task_and_launch_pages(tiny, researcher, client_for):
    sync, hub = tiny
    task = sync()
    assert not task.config["runnable"] and task.data_status == Task.DataStatus.MISSING
    expected = f"put a copy in {hub / 'testorg' / 'tiny'}/"
    assert expected in task.data_detail
    assert "dataset_dict.json" in task.data_detail and "train-00000-of-00001.parquet" in task.data_detail
    client = client_for(researcher)
    page = client.get(reverse("benchmark:task_detail", args=[task.code])).content.decode()
    assert expected in page
    launch = client.get(reverse("benchmark:run_launch") + f"?task={task.code}")
    assert launch.status_code == 200
    assert expected in launch.content.decode() and "cannot be launched here" in launch.content.decode()


def test_it_lists_no_blocker_for_a_runnable_task_or_a_bad_code_on_the_launch_page(tiny, researcher, client_for):
    sync, hub = tiny
    touch(hub / "testorg" / "tiny", "data/train-00000-of-00001.parquet", "data/test-00000-of-00001.parquet")
    task = sync()
    client = client_for(researcher)
    runnable = client.get(reverse("benchmark:run_launch") + f"?task={task.code}").content.decode()
    assert "cannot be launched here" not in runnable
    bad = client.get(reverse("benchmark:run_launch") + "?task=not-a-uuid")
    assert bad.status_code == 200 and "cannot be launched here" not in bad.content.decode()


def test_it_says_which_setting_to_set_when_no_folder_is_named(tiny, settings):
    sync, _ = tiny
    settings.MLGYM_HF_DATASETS_DIR = ""
    task = sync()
    assert "set MLGYM_HF_DATASETS_DIR to a folder and put a copy in <that folder>/testorg/tiny/" in task.data_detail


def test_it_names_the_folder_of_a_copy_with_no_recognisable_layout(tiny, researcher, client_for):
    sync, hub = tiny
    touch(hub / "testorg" / "tiny", "cifar.tar.gz", "notes.txt")
    task = sync()
    assert not task.config["runnable"] and task.data_status == Task.DataStatus.MISSING
    assert f"{hub / 'testorg' / 'tiny'} has no recognisable layout" in task.data_detail
    page = client_for(researcher).get(reverse("benchmark:task_detail", args=[task.code]))
    assert page.status_code == 200 and "has no recognisable layout" in page.content.decode()


@pytest.mark.parametrize(
    ("files", "index", "says"),
    [
        (
            ["train/state.json", "train/data-00000-of-00001.arrow", "test/state.json"],
            {"splits": ["train", "test"]},
            "test is not a saved split: dataset_dict.json names it, but it lacks state.json or data-*.arrow",
        ),
        ([], "{not json", "is not a save_to_disk index"),
        ([], {"splits": []}, "lists no usable splits"),
        (["state.json", "data-00000-of-00001.arrow"], None, "holds one Dataset saved with save_to_disk"),
    ],
)
def test_it_names_what_is_wrong_with_a_broken_save_to_disk_folder(tiny, files, index, says):
    sync, hub = tiny
    folder = hub / "testorg" / "tiny"
    touch(folder, *files)
    if index is not None:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "dataset_dict.json").write_text(index if isinstance(index, str) else json.dumps(index))
    task = sync()
    assert not task.config["runnable"]
    assert says in task.data_detail and str(folder) in task.data_detail


def test_it_refuses_a_copy_without_the_split_that_is_scored(tiny):
    sync, hub = tiny
    touch(hub / "testorg" / "tiny", "data/train-00000-of-00001.parquet", "data/validation-00000-of-00001.parquet")
    task = sync()
    assert not task.config["runnable"]
    assert "has the splits train, validation but not 'test', the split MLGym's evaluate.py scores" in task.data_detail


# -- the walls, in real sandboxes ---------------------------------------------------------------


@pytest.fixture(scope="module")
def datasets_image():
    """The tiny task's image variant (datasets and pyarrow from the package registry; cached by its hash)."""
    from sandbox.variants import variant_build

    return variant_build(["datasets"], log=lambda line: None)


def synthetic(image: str, target: Path) -> None:
    """The tiny dataset in both layouts under target/parquet and target/disk, written by pyarrow."""
    splits = json.dumps({"train": TRAIN_LABELS, "test": TEST_LABELS})
    with open_session(SandboxSpec(network=False, image=image, labels={"referee.role": "test"})) as session:
        session.put_file("/workspace/write.py", WRITE_DATA.encode())
        run = session.run(f"python3 /workspace/write.py '{json.dumps(FEATURES)}' '{splits}'", timeout=120)
        assert run.exit_code == 0, run.output
        listing = session.run("cd /workspace/out && find . -type f", timeout=30).output.split()
        for name in listing:
            (target / name[2:]).parent.mkdir(parents=True, exist_ok=True)
            (target / name[2:]).write_bytes(session.get_file(f"/workspace/out/{name[2:]}"))


def submit(task: Task, predictions: list[int], extra: list[str] = ()) -> tuple[object, dict]:
    """Prepare the agent's workspace, read what it holds, write submission.csv, score it (test split)."""
    with open_session(agent_sandbox_spec(task=task, run_code="hub-walls")) as session:
        workspace_prepare(task=task, session=session)
        seen = session.run(READ_WORKSPACE, timeout=120)
        assert seen.exit_code == 0, seen.output
        csv = "label\n" + "\n".join(str(p) for p in predictions) + "\n"
        for command in [f"printf '{csv}' > submission.csv", *extra]:
            assert session.run(command, timeout=60).exit_code == 0
        score = submission_evaluate(task=task, session=session, split="test")
    return score, json.loads(seen.output.strip().splitlines()[-1])


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize("layout", ["parquet", "disk"])
def test_it_gives_the_agent_the_test_split_without_labels_and_scores_against_the_copy(
    tiny, docker, datasets_image, tmp_path, layout
):
    sync, hub = tiny
    data = tmp_path / "synthetic"
    synthetic(datasets_image, data)
    (hub / "testorg").mkdir()
    (data / layout).rename(hub / "testorg" / "tiny")
    task = sync()
    assert task.config["runnable"], task.config["not_runnable_reason"]

    score, seen = submit(task, TEST_LABELS)
    test_files = {name: labels for name, labels in seen["files"].items() if "test-" in name}
    train_files = {name: labels for name, labels in seen["files"].items() if "train-" in name}
    assert test_files and all(labels == [-1] * len(TEST_LABELS) for labels in test_files.values())
    assert list(train_files.values()) == [TRAIN_LABELS]  # the split the agent learns from, as it is
    assert all(name.startswith("testorg/tiny/") for name in seen["files"])  # where load_dataset finds it
    assert seen["loaded"] == {"train": TRAIN_LABELS, "test": [-1] * len(TEST_LABELS)}  # the starter code's call
    assert seen["label_names"] == ["a", "b", "c"]  # ClassLabel kept: the features travel in the parquet metadata
    assert seen["offline"] == "1"
    assert score.error == "", score.error + score.output
    assert score.primary == pytest.approx(1.0)  # the evaluator's labels are the real ones

    folder = task_folder(task)
    hidden = folder / "evaluator" / "hidden" / "testorg" / "tiny"
    if layout == "parquet":  # the evaluator's copy is the admin's files, byte for byte
        original = hub / "testorg" / "tiny" / "plain_text" / "test-00000-of-00001.parquet"
        assert (hidden / "plain_text" / "test-00000-of-00001.parquet").read_bytes() == original.read_bytes()
    assert not any("hidden" in part for part in seen["files"])


@pytest.mark.docker
@pytest.mark.slow
def test_it_scores_against_the_copy_not_a_test_split_the_agent_wrote(tiny, docker, datasets_image, tmp_path):
    """The agent overwrites its test split with labels matching its guesses: the evaluator never reads it."""
    sync, hub = tiny
    data = tmp_path / "synthetic"
    synthetic(datasets_image, data)
    (hub / "testorg").mkdir()
    (data / "parquet").rename(hub / "testorg" / "tiny")
    task = sync()
    forge = textwrap.dedent(
        """\
        python3 - <<'EOF_'
        import pyarrow as pa, pyarrow.parquet as pq
        path = "testorg/tiny/plain_text/test-00000-of-00001.parquet"
        table = pq.read_table(path)
        pq.write_table(table.set_column(1, "label", pa.array([0] * table.num_rows, pa.int64())), path)
        EOF_"""
    )
    score, _ = submit(task, [0] * len(TEST_LABELS), extra=[forge])
    assert score.error == "", score.error + score.output
    assert score.primary == pytest.approx(TEST_LABELS.count(0) / len(TEST_LABELS))  # 2 of 6, not 1.0
