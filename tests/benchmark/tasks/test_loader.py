"""The task format: loader errors naming file and field, MLGym's configs, content-hash versioning."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest
from django.conf import settings

from benchmark.models import Task
from benchmark.tasks.loader import BUILTIN_DIR, task_load, task_sync, tasks_load, tasks_sync
from benchmark.tasks.spec import TaskFormatError, content_hash

MLGYM_DIR = Path(settings.MLGYM_DIR or Path(settings.BASE_DIR).parent / "shared" / "mlgym")
needs_mlgym = pytest.mark.shared_data(MLGYM_DIR / "configs")

GOOD_YAML = """\
title: Tiny task
metric: accuracy
direction: max
description: "# Tiny\\nPredict things."
artifacts: [submission.csv]
evaluator:
  command: python3 {evaluator_dir}/evaluate.py --split {split}
baseline:
  command: python3 baseline.py
"""


def make_task(root: Path, yaml_text: str = GOOD_YAML, name: str = "tiny") -> Path:
    folder = root / name
    (folder / "workspace").mkdir(parents=True)
    (folder / "evaluator").mkdir()
    (folder / "workspace" / "baseline.py").write_text("print('hi')\n")
    (folder / "evaluator" / "evaluate.py").write_text("print('{}')\n")
    (folder / "task.yaml").write_text(yaml_text)
    return folder


def test_it_loads_a_valid_folder(tmp_path):
    spec = task_load(make_task(tmp_path))
    assert (spec.slug, spec.metric, spec.direction, spec.source) == ("tiny", "accuracy", "max", "folder")
    assert spec.config["artifacts"] == ["submission.csv"]
    assert spec.config["runnable"] is True
    assert spec.content_hash == content_hash(tmp_path / "tiny")


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (("direction: max", "direction: up"), "direction"),
        (("metric: accuracy\n", ""), "metric"),
        (("title: Tiny task", "title: 7"), "title"),
        (("artifacts: [submission.csv]", "artifacts: []"), "artifacts"),
        (("artifacts: [submission.csv]", "artifacts: [../../etc/passwd]"), "artifacts"),
        (("--split {split}", "--split dev"), "evaluator.command"),
        (("--split {split}", "--split {split} {oops}"), "evaluator.command"),
        (("  command: python3 baseline.py", "  commnd: python3 baseline.py"), "baseline.commnd"),
        (("title: Tiny task", "title: Tiny task\nmetirc: x"), "metirc"),
        (
            ("baseline:\n  command: python3 baseline.py\n", "baseline:\n  command: x\n  timeout: -3\n"),
            "baseline.timeout",
        ),
        (("artifacts: [submission.csv]", "artifacts: [submission.csv]\nworkspace: nowhere"), "workspace"),
    ],
)
def test_it_names_the_file_and_field_of_a_bad_definition(tmp_path, change, field):
    folder = make_task(tmp_path, GOOD_YAML.replace(*change))
    with pytest.raises(TaskFormatError) as caught:
        task_load(folder)
    assert caught.value.field == field
    assert caught.value.file == str(folder / "task.yaml")
    assert str(folder / "task.yaml") in str(caught.value) and field in str(caught.value)


def test_it_reports_broken_yaml_with_its_line(tmp_path):
    folder = make_task(tmp_path, "title: [unclosed\nmetric: x\n")
    with pytest.raises(TaskFormatError) as caught:
        task_load(folder)
    assert caught.value.field == "(file)" and "line" in caught.value.message


def test_it_keeps_the_valid_tasks_when_one_is_bad(tmp_path):
    make_task(tmp_path, name="good")
    make_task(tmp_path, GOOD_YAML.replace("direction: max", "direction: sideways"), name="bad")
    specs, errors = tasks_load(tmp_path)
    assert [spec.slug for spec in specs] == ["good"]
    assert len(errors) == 1 and errors[0].field == "direction" and "bad" in errors[0].file


def test_it_marks_declared_data_that_is_absent_as_missing(tmp_path):
    spec = task_load(make_task(tmp_path, GOOD_YAML + "data: [workspace/data/train.csv]\n"))
    assert spec.data_status == Task.DataStatus.MISSING
    assert "workspace/data/train.csv" in spec.data_detail
    assert spec.config["runnable"] is False


def test_it_loads_every_builtin_task():
    specs, errors = tasks_load(BUILTIN_DIR)
    assert errors == []
    assert {spec.slug for spec in specs} == {
        "prisoners_dilemma", "battle_of_sexes", "colonel_blotto", "sat_solver",
        "mountain_car_continuous", "digits_classification", "diabetes_regression",
    }  # fmt: skip
    assert {spec.slug: spec.direction for spec in specs}["sat_solver"] == "min"
    assert all(spec.source == "builtin" and spec.config["runnable"] for spec in specs)


@needs_mlgym
def test_it_loads_every_mlgym_config():
    files = sorted((MLGYM_DIR / "configs" / "tasks").glob("*.yaml"))
    specs, errors = tasks_load(MLGYM_DIR)
    assert errors == []
    assert len(specs) == len(files) == 19
    by_slug = {spec.slug: spec for spec in specs}
    assert len(by_slug) == len(specs), "every file gets its own slug"
    # The README's table: metric and direction.
    assert (by_slug["3SATTime"].metric, by_slug["3SATTime"].direction) == ("Time", "min")
    assert (by_slug["imageCaptioningCOCO"].metric, by_slug["imageCaptioningCOCO"].direction) == ("BLEU Score", "max")
    assert (by_slug["languageModelingFineWeb"].metric, by_slug["languageModelingFineWeb"].direction) == (
        "val_loss",
        "min",
    )
    assert by_slug["rlMetaMazeMisc"].metric == "Reward Mean"  # slug is MLGym's id, not the file name
    assert "imageClassificationCifar10L1" in by_slug  # same id as the Cifar10 file: named by its file
    # The CPU tasks whose data ships with MLGym run; the others say what is missing, and where.
    runnable = {spec.slug for spec in specs if spec.runnable}
    assert runnable == {
        "battleOfSexes", "prisonersDilemma", "blotto", "titanicSurvival",
        "regressionKaggleHousePrice", "regressionKaggleHousePriceL1", "rlMountainCarContinuous",
    }  # fmt: skip
    assert all(spec.data_status == Task.DataStatus.MISSING for spec in specs if "data/" in spec.data_detail)
    assert str(MLGYM_DIR / "data" / "3SATTime" / "data") in by_slug["3SATTime"].data_detail
    assert "uoft-cs/cifar10" in by_slug["imageClassificationCifar10"].data_detail
    assert "datasets/housePrice.yaml not found" in by_slug["regressionHousePrice"].data_detail
    assert "model tasks" in by_slug["rlMountainCarContinuousReinforce"].config["not_runnable_reason"]
    assert by_slug["titanicSurvival"].metric == "accuracy"  # what its evaluate.py prints
    assert "{dataset_docs}" not in by_slug["regressionKaggleHousePrice"].description
    assert by_slug["prisonersDilemma"].config["published_baseline_scores"] == {"Score": 2.3716301918029785}


def test_it_rejects_an_mlgym_config_without_a_known_metric(tmp_path):
    (tmp_path / "configs" / "tasks").mkdir(parents=True)
    (tmp_path / "configs" / "datasets").mkdir()
    bad = tmp_path / "configs" / "tasks" / "mystery.yaml"
    bad.write_text("id: mystery\nname: Mystery\ndescription: solve it\n")
    with pytest.raises(TaskFormatError) as caught:
        task_load(bad)
    assert caught.value.field == "metric" and caught.value.file == str(bad.resolve())
    bad.write_text("id: mystery\nname: Mystery\ndescription: solve it\nmetric: loss\ndirection: min\n")
    assert task_load(bad).metric == "loss"


def test_it_names_the_bad_field_of_an_mlgym_dataset_config(tmp_path):
    (tmp_path / "configs" / "tasks").mkdir(parents=True)
    (tmp_path / "configs" / "datasets").mkdir()
    task = tmp_path / "configs" / "tasks" / "blotto.yaml"
    task.write_text("id: blotto\nname: B\ndescription: d\ndataset_configs: [datasets/d.yaml]\n")
    dataset = tmp_path / "configs" / "datasets" / "d.yaml"
    dataset.write_text("name: D\ndata_path: data/d\nis_local: sometimes\n")
    with pytest.raises(TaskFormatError) as caught:
        task_load(task)
    assert caught.value.field == "is_local" and caught.value.file == str(dataset.resolve())


@pytest.mark.django_db
def test_it_creates_a_new_version_when_the_folder_changes(tmp_path):
    folder = make_task(tmp_path)
    first = task_sync(folder)
    first.baseline_scores = {"dev": {"primary": 0.5}}
    first.save()
    assert task_sync(folder).pk == first.pk  # unchanged content: same row

    (folder / "workspace" / "baseline.py").write_text("print('better')\n")
    second = task_sync(folder)
    first.refresh_from_db()
    assert second.pk != first.pk and second.version_hash != first.version_hash
    assert second.is_current and not first.is_current
    # The old version is untouched (never edited in place), baseline scores included.
    assert first.baseline_scores == {"dev": {"primary": 0.5}} and second.baseline_scores == {}
    assert Task.objects.filter(slug="tiny").count() == 2

    (folder / "workspace" / "baseline.py").write_text("print('hi')\n")  # back to the first content
    again = task_sync(folder)
    assert again.pk == first.pk and again.is_current
    assert list(Task.objects.filter(slug="tiny", is_current=True)) == [again]


def test_it_ignores_caches_in_the_content_hash(tmp_path):
    folder = make_task(tmp_path)
    before = content_hash(folder)
    (folder / "workspace" / "__pycache__").mkdir()
    (folder / "workspace" / "__pycache__" / "baseline.cpython-311.pyc").write_bytes(b"\0")
    assert content_hash(folder) == before
    (folder / "workspace" / "notes.txt").write_text("x")
    assert content_hash(folder) != before


@pytest.mark.django_db
def test_it_syncs_a_dropped_in_folder_next_to_the_builtins(tmp_path):
    root = tmp_path / "tasks"
    shutil.copytree(BUILTIN_DIR / "diabetes_regression", root / "diabetes_copy")
    make_task(root)
    tasks, errors = tasks_sync(root)
    assert errors == [] and sorted(task.slug for task in tasks) == ["diabetes_copy", "tiny"]
    assert all(task.is_current for task in tasks)


@needs_mlgym
@pytest.mark.django_db
def test_it_syncs_mlgym_configs_idempotently():
    tasks, errors = tasks_sync(MLGYM_DIR)
    again, _ = tasks_sync(MLGYM_DIR)
    assert errors == [] and len(tasks) == 19
    assert [t.pk for t in tasks] == [t.pk for t in again]
    assert Task.objects.filter(source="mlgym").count() == 19


def test_it_documents_the_format_in_a_builtin_example():
    text = (BUILTIN_DIR / "prisoners_dilemma" / "task.yaml").read_text()
    assert "{evaluator_dir}" in text and "{split}" in text
    assert textwrap.dedent(text).startswith("#")


@pytest.mark.django_db
def test_it_loads_folders_with_the_command_and_reports_bad_ones(tmp_path):
    from io import StringIO

    from django.core.management import CommandError, call_command

    make_task(tmp_path, name="good")
    make_task(tmp_path, GOOD_YAML.replace("metric: accuracy", "metric: [1, 2]"), name="bad")
    out, err = StringIO(), StringIO()
    with pytest.raises(CommandError):
        call_command("load_tasks", str(tmp_path), stdout=out, stderr=err)
    assert "good@" in out.getvalue()
    assert str(tmp_path / "bad" / "task.yaml") in err.getvalue() and "'metric'" in err.getvalue()
    assert Task.objects.filter(slug="good", is_current=True).exists()
    assert not Task.objects.filter(slug="bad").exists()


@pytest.mark.django_db
def test_it_refuses_baselines_for_an_unknown_slug():
    from django.core.management import CommandError, call_command

    with pytest.raises(CommandError, match="no current task"):
        call_command("compute_baselines", "--task", "nope")


@pytest.mark.django_db
def test_it_seeds_and_records_why_baselines_are_missing(settings, tmp_path):
    """Without a usable sandbox the demo records the reason, never a made-up score."""
    from io import StringIO

    from benchmark import demo

    settings.SANDBOX_BACKEND = "local"
    settings.SANDBOX_ALLOW_LOCAL = False
    settings.MLGYM_DIR = str(MLGYM_DIR) if MLGYM_DIR.is_dir() else ""
    out = StringIO()
    demo.seed(stdout=out)
    demo.seed(stdout=out)  # idempotent
    builtin = Task.objects.filter(source="builtin")
    assert builtin.count() == 7 and all(task.is_current for task in builtin)
    for task in builtin:
        assert "sandbox unavailable" in task.baseline_scores["error"]
        assert "dev" not in task.baseline_scores
    if MLGYM_DIR.is_dir():
        assert Task.objects.filter(source="mlgym").count() == 19


CODE_YAML = GOOD_YAML.replace("artifacts: [submission.csv]", "artifacts: [strategy.py]")


@pytest.mark.parametrize(
    ("yaml_text", "field", "words"),
    [
        (CODE_YAML, "submission", "is code"),
        (GOOD_YAML.replace("artifacts: [submission.csv]", "artifacts: [model.pkl]"), "submission", "is code"),
        (CODE_YAML + "submission:\n  module: other.py\n  functions: [f]\n", "submission", "not one of the artifacts"),
        (CODE_YAML + "submission:\n  module: strategy.py\n  functions: [1bad]\n", "submission.functions", "names"),
        (
            CODE_YAML + "submission:\n  module: strategy.py\n  functions: [f]\n  call_timeout: 0\n",
            "submission.call_timeout",
            "",
        ),
        (CODE_YAML + "submission:\n  module: strategy.py\n  functions: [f]\n  shell: yes\n", "submission.shell", ""),
        (GOOD_YAML.replace("--split {split}", "--split {split}\n  metrics: log"), "evaluator.metrics", "file"),
        (
            GOOD_YAML.replace("artifacts: [submission.csv]", "artifacts: [.referee/metrics.json]"),
            "artifacts",
            "Referee",
        ),
    ],
)
def test_it_refuses_code_artifacts_that_would_run_next_to_the_evaluator(tmp_path, yaml_text, field, words):
    with pytest.raises(TaskFormatError) as caught:
        task_load(make_task(tmp_path, yaml_text))
    assert caught.value.field == field and words in caught.value.message


def test_it_loads_a_submission_section_with_its_limits(tmp_path):
    text = CODE_YAML + "submission:\n  module: strategy.py\n  functions: [row_strategy]\n  call_timeout: 1.5\n"
    config = task_load(make_task(tmp_path, text)).config
    assert config["submission"] == {
        "module": "strategy.py",
        "functions": ["row_strategy"],
        "files": ["strategy.py"],
        "call_timeout": 1.5,
        "load_timeout": 60.0,
        "max_reply_bytes": 1 << 20,
        "stub": True,
    }
    assert config["evaluator"]["metrics"] == "file"
