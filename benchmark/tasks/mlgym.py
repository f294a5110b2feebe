"""MLGym's own task definitions (``configs/tasks/<name>.yaml`` with ``configs/datasets/*.yaml``).

MLGym keeps the priority metric in code, so its table is reproduced here; a file may carry
``metric:`` / ``direction:`` keys to say it itself.
"""

from __future__ import annotations

from pathlib import Path

from benchmark.leaderboards.mlgym_results import MLGYM_TASKS
from benchmark.models import Task
from benchmark.tasks.spec import (
    SLUG_RE,
    TaskFormatError,
    TaskSpec,
    direction_field,
    hash_parts,
    read_yaml,
    relative_field,
    text_field,
)

# MLGym's priority metric per task id (from its code, as listed in ../shared/mlgym/README.md).
MLGYM_METRICS: dict[str, tuple[str, str]] = {
    slug: (spec.metric, spec.direction.value) for slug, spec in MLGYM_TASKS.items()
}
# Task files MLGym ships that its README table does not cover: Referee's reading of them, marked
# as such on the task (config["metric_source"]).
MLGYM_METRICS_INFERRED: dict[str, tuple[str, str]] = {
    "regressionKaggleHousePriceL1": ("r2", "max"),
    "regressionHousePrice": ("r2", "max"),
    "regressionHousingPrice": ("r2", "max"),
    "rlMountainCarContinuousReinforce": ("Reward Mean", "max"),
    "titanicSurvival": ("Accuracy", "max"),
}


# -- MLGym task definitions ------------------------------------------------------------------


def _string_list(data: dict, file: Path, name: str) -> list[str]:
    value = data.get(name, [])
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, str) and item.strip() for item in value):
        raise TaskFormatError(file, name, f"must be a list of paths, not {value!r}")
    return value


def _mlgym_slug(file: Path, task_id: str) -> str:
    """The MLGym id, unless another file in the folder owns that id (e.g. the L1 variants)."""
    if file.stem != task_id and (file.parent / f"{task_id}{file.suffix}").is_file():
        return file.stem
    return task_id


def _mlgym_dataset(configs_dir: Path, reference: str, file: Path) -> tuple[dict | None, str]:
    """(the dataset config or None, a note when it is missing)."""
    dataset_file = configs_dir / relative_field(reference, file, "dataset_configs")
    if not dataset_file.is_file():
        return None, f"dataset config {reference} not found in {configs_dir}"
    dataset = read_yaml(dataset_file)
    text_field(dataset, dataset_file, "name")
    text_field(dataset, dataset_file, "data_path")
    is_local = dataset.get("is_local", True)
    if not isinstance(is_local, bool):
        raise TaskFormatError(dataset_file, "is_local", f"must be true or false, not {is_local!r}")
    return dataset, ""


def mlgym_task_load(file: Path, *, mlgym_dir: Path | None = None) -> TaskSpec:
    """Load one of MLGym's ``configs/tasks/*.yaml``; code and data are looked up under mlgym_dir.

    MLGym's released data has no code files, so these tasks usually load as data "missing"
    (saying which paths): they are listed, compared and used by imported trajectories, but not run.
    """
    file = Path(file).resolve()
    configs_dir = file.parent.parent
    root = Path(mlgym_dir).resolve() if mlgym_dir else configs_dir.parent
    data = read_yaml(file)
    task_id = text_field(data, file, "id")
    if not SLUG_RE.match(task_id):
        raise TaskFormatError(file, "id", f"{task_id!r} cannot be used as a slug")
    title = text_field(data, file, "name")
    description = text_field(data, file, "description")

    if data.get("metric") is not None:
        metric, direction, metric_source = text_field(data, file, "metric"), direction_field(data, file), "task file"
    elif task_id in MLGYM_METRICS:
        (metric, direction), metric_source = MLGYM_METRICS[task_id], "MLGym (table in its README)"
    elif task_id in MLGYM_METRICS_INFERRED:
        (metric, direction), metric_source = (
            MLGYM_METRICS_INFERRED[task_id],
            "inferred by Referee (not in MLGym's table)",
        )
    else:
        raise TaskFormatError(file, "metric", f"no metric is known for task id {task_id!r}: add metric: and direction:")

    for name in ("starter_code", "baseline_paths", "evaluation_paths"):
        _string_list(data, file, name)
    baseline_scores = data.get("baseline_scores", [])
    if not isinstance(baseline_scores, list) or not all(isinstance(item, dict) for item in baseline_scores):
        raise TaskFormatError(file, "baseline_scores", "must be a list of metric mappings")
    timeout = data.get("training_timeout")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int)):
        raise TaskFormatError(file, "training_timeout", f"must be whole seconds, not {timeout!r}")

    missing: list[str] = []
    datasets: dict[str, dict] = {}
    parts = [file.read_bytes()]
    docs = []
    for reference in _string_list(data, file, "dataset_configs"):
        dataset, note = _mlgym_dataset(configs_dir, reference, file)
        if dataset is None:
            missing.append(note)
            continue
        datasets[reference] = dataset
        parts.append((configs_dir / reference).read_bytes())
        docs.append(f"{dataset['name']}:\n{(dataset.get('description') or '').strip()}")
        if dataset.get("is_local", True):
            if not (root / dataset["data_path"]).exists():
                missing.append(f"dataset {dataset['name']}: {root / dataset['data_path']}")
        else:
            missing.append(
                f"dataset {dataset['name']}: Hugging Face dataset {dataset['data_path']} (no downloads here)"
            )
    for path in _string_list(data, file, "starter_code"):
        if not (root / path).exists():
            missing.append(f"starter code: {root / path}")
    description = description.replace("{dataset_docs}", "\n\n".join(docs) or "(no dataset)")

    if missing:
        data_status = Task.DataStatus.MISSING
    else:
        data_status = Task.DataStatus.OK if datasets else Task.DataStatus.NOT_NEEDED
    data_detail = "\n".join(missing)
    # Data appearing on the machine is a new version: the row's data status is part of what it is.
    parts.append(f"{data_status}\n{data_detail}".encode())

    config = {
        "format": "mlgym",
        # Running MLGym's own code needs its repository; Referee only lists these tasks.
        "runnable": False,
        "not_runnable_reason": "MLGym's task code and data are not part of the released data on this machine",
        "mlgym_id": task_id,
        "metric_source": metric_source,
        "published_baseline_scores": baseline_scores[0] if baseline_scores else {},
        "task_entrypoint": data.get("task_entrypoint", ""),
        "training_timeout": timeout,
        "mlgym": data,
        "datasets": datasets,
    }
    return TaskSpec(
        slug=_mlgym_slug(file, task_id),
        title=title,
        source="mlgym",
        description=description,
        metric=metric,
        direction=direction,
        path=str(file),
        content_hash=hash_parts(parts),
        config=config,
        category=str(data.get("task_entrypoint") or ""),
        data_status=data_status,
        data_detail=data_detail,
    )
