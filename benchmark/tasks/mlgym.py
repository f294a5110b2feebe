"""MLGym's own task definitions (``configs/tasks/<name>.yaml`` with ``configs/datasets/*.yaml``)
from an MLGym checkout (``MLGYM_DIR``): loaded as Referee tasks, runnable when their data is there.

MLGym copies a task's starter code, evaluation script, opponents and data (answers included)
into the agent's workspace and runs ``evaluate.py`` in the agent's own shell. Referee splits
them (benchmark.tasks.mlgym_build): the agent's workspace gets the starter code, the data without
the answers, and *copies* of ``evaluate.py``/``target.py`` for reading; the evaluator's sandbox
gets MLGym's ``evaluate.py`` and what it imports (``target.py``), pristine from the checkout, and
the answers; submitted code (``strategy.py``) runs in a sandbox of its own that the evaluator
calls over Referee's pipes (``import strategy`` finds a stand-in there). MLGym's scripts print
their metrics as a JSON line, which the evaluator's output is read for (nothing of the
submission prints there).

MLGym keeps the priority metric in code, so its table is reproduced here; a file may carry
``metric:`` / ``direction:`` keys to say it itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from benchmark.leaderboards.mlgym_results import MLGYM_TASKS
from benchmark.models import Task
from benchmark.tasks.mlgym_hub import hub_check, hub_file_parts, hub_names_in_code, hub_notes, hub_root
from benchmark.tasks.spec import (
    SLUG_RE,
    TaskFormatError,
    TaskSpec,
    direction_field,
    hash_parts,
    read_yaml,
    relative_field,
    task_files,
    text_field,
)
from sandbox.evaluation import RUNTIME_DIR

# MLGym's priority metric per task id (from its code, as listed in ../shared/mlgym/README.md).
MLGYM_METRICS: dict[str, tuple[str, str]] = {
    slug: (spec.metric, spec.direction.value) for slug, spec in MLGYM_TASKS.items()
}
# Task files MLGym ships that its README table does not cover: Referee's reading of them, marked
# as such on the task (config["metric_source"]). titanic's evaluate.py prints "accuracy"
# (lower case) although its baseline_scores say "Accuracy".
MLGYM_METRICS_INFERRED: dict[str, tuple[str, str]] = {
    "regressionKaggleHousePriceL1": ("r2", "max"),
    "regressionHousePrice": ("r2", "max"),
    "regressionHousingPrice": ("r2", "max"),
    "rlMountainCarContinuousReinforce": ("Reward Mean", "max"),
    "titanicSurvival": ("accuracy", "max"),
}

# Where MLGym's scripts expect the workspace (its evaluate.py files use this absolute path).
MLGYM_WORKSPACE = "/home/agent/workspace"
# Bumped when the way Referee turns an MLGym task into workspace + evaluator changes: part of
# every MLGym task's version hash, like the runtime's files.
ADAPTER_VERSION = b"referee-mlgym-adapter 3"
# Files in a task's data that decide its score (MLGym's `secret_files` field exists but is unused,
# so the names are Referee's): they go to the evaluator, never into the agent's workspace.
ANSWER_NAMES = {"answer.csv", "answers.csv", "ground_truth.csv", "test_labels.csv"}
# CSV tasks whose answers are one file Referee can keep out of the workspace (workspace-relative, where
# MLGym's evaluate.py reads it). The others (COCO's captions, CIFAR's labels) keep their test labels
# inside the dataset the agent is given: not runnable until those are split out.
CSV_ANSWERS = {
    "titanicSurvival": "data/ground_truth.csv",
    "regressionKaggleHousePrice": "data/answer.csv",
    "regressionKaggleHousePriceL1": "data/answer.csv",
}
# The game tasks: the submitted module and the function MLGym's evaluate.py imports from it.
GAME_MODULE, GAME_FUNCTION = "strategy.py", "row_strategy"
# MLGym's 3-SAT task: the submitted module, its function, and the dataset (formulas with their answers).
SAT_MODULE, SAT_FUNCTION, SAT_DATASET = "heuristic.py", "heuristic_fn", "data/dataset.pkl"
# Published metrics that measure the machine, not the submission: shown, never compared.
MACHINE_BOUND = {"Time"}
# MLGym's Monte-Carlo evaluations (unseeded): their baselines are repeated to measure the spread.
MONTE_CARLO_REPEATS = 5
# Files above this size are identified by size and mtime in the version hash, not read whole.
HASH_BYTES_LIMIT = 16 << 20
# MLGym's model tasks (its RL tasks): a config.yaml and the checkpoints trained with it. MLGym runs
# `evaluate.py --config_fname <the workspace's first *.yaml>`; Referee passes the submitted config.yaml,
# and runs evaluate.py through a wrapper that loads checkpoints as data only (mlgym_compat/model_evaluate.py).
MODEL_CONFIG, MODEL_CHECKPOINTS = "config.yaml", "checkpoints/*.pkl"
MODEL_WRAPPER = Path(__file__).resolve().parent / "mlgym_compat" / "model_evaluate.py"
MODEL_COMMAND = f"python3 /evaluator/{MODEL_WRAPPER.name} /evaluator/evaluate.py --config_fname {MODEL_CONFIG}"
# The model tasks whose evaluation has been run behind Referee's walls here (tests/benchmark/tasks/
# test_mlgym_model.py); the others share the layout but their requirements and evaluation are untried.
MODEL_TASKS_TRIED = {"rlMountainCarContinuous"}
CSV_COMMAND = "cp -R /evaluator/hidden/. . && python3 /evaluator/evaluate.py --submission_file submission.csv"
GAME_COMMAND = "python3 /evaluator/evaluate.py"
SAT_COMMAND = "cp -R /evaluator/hidden/. . && python3 /evaluator/evaluate.py"
# Hugging Face datasets read offline (documented by `datasets` and `huggingface_hub`): a local folder named
# like the hub dataset is found by load_dataset(<org>/<name>) before any hub lookup (benchmark.tasks.mlgym_hub).
HF_OFFLINE_ENV = {"HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
HUB_COMMAND = (
    'cp -R /evaluator/hidden/. . && HF_DATASETS_OFFLINE=1 HF_HUB_OFFLINE=1 HF_HOME="$PWD/.hf-home" '
    "python3 /evaluator/evaluate.py --submission_file submission.csv"
)
# MLGym's packages for `use_generic_conda: true` tasks (datasets, torch, transformers...): the hub tasks'
# starter code and evaluate.py import them. Only the hub tasks take it: the CPU tasks run on the sandbox image.
GENERIC_REQUIREMENTS = "dockerfiles/generic_conda_requirements.txt"


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


def _split_generator(root: Path, data_path: str) -> Path | None:
    """MLGym's own split script for a dataset it makes at set-up (house prices): the data folder's
    sibling ``_helpers/_generate_split.py``, which writes ``../data/*`` from ``_helpers/``."""
    script = (root / data_path).parent / "_helpers" / "_generate_split.py"
    return script if script.is_file() else None


def _task_dir(root: Path, starter: list[str], datasets: dict[str, dict]) -> Path | None:
    """The task's folder in the checkout (``data/<task>``): where its starter code lives."""
    for path in starter:
        parts = Path(path).parts
        if len(parts) >= 2 and parts[0] == "data":
            return root / parts[0] / parts[1]
    for dataset in datasets.values():
        parts = Path(dataset["data_path"]).parts
        if dataset.get("is_local", True) and len(parts) >= 2 and parts[0] == "data":
            return root / parts[0] / parts[1]
    return None


def _file_parts(folder: Path, label: str) -> list[bytes]:
    """Every file of folder (name and bytes; size and mtime for big files) for the version hash."""
    parts = []
    for path in task_files(folder):
        name = f"{label}/{path.relative_to(folder).as_posix()}".encode()
        stat = path.stat()
        if stat.st_size > HASH_BYTES_LIMIT:
            parts.append(name + f" size={stat.st_size} mtime={stat.st_mtime_ns}".encode())
        else:
            parts += [name, path.read_bytes()]
    return parts


def _plan(*, task_id: str, data: dict, file: Path, starter: list[str], hub: bool = False) -> tuple[dict | None, str]:
    """How Referee evaluates this task behind its walls: (config fragment, or None and why not).
    hub: its datasets are Hugging Face datasets (their scored split is withheld by mlgym_build)."""
    entrypoint = data.get("task_entrypoint") or ""
    names = [Path(path).name for path in starter]
    evaluation = [Path(path).name for path in _string_list(data, file, "evaluation_paths")]
    if evaluation != ["evaluate.py"] or "evaluate.py" not in names:
        return None, "Referee runs MLGym tasks whose evaluation is one evaluate.py among the starter code"
    baseline_paths = [Path(path).name for path in data.get("baseline_paths") or []]
    timeout = data.get("training_timeout") or 1800
    if entrypoint == "PythonSubmissionTasks" and GAME_MODULE in names:
        return _game_plan(), ""
    if entrypoint == "CSVSubmissionTasks" and hub:
        return _hub_plan(baseline_paths=baseline_paths, names=names, timeout=timeout), ""
    if entrypoint == "CSVSubmissionTasks" and task_id not in CSV_ANSWERS:
        return None, (
            "its test labels are part of the dataset MLGym puts in the agent's workspace; Referee runs a CSV task "
            "only where it knows the answer file to keep on the evaluator's side"
        )
    if entrypoint == "CSVSubmissionTasks":
        return _csv_plan(task_id=task_id, baseline_paths=baseline_paths, names=names, timeout=timeout), ""
    if entrypoint == "ModelSubmissionTasks" and task_id in MODEL_TASKS_TRIED and "src" in names:
        return _model_plan(data=data, timeout=timeout), ""
    if entrypoint == "ModelSubmissionTasks":
        return None, (
            "Referee evaluates MLGym's model tasks (config.yaml and checkpoints/*.pkl, checkpoints loaded as data "
            f"only) and has tried it on {', '.join(sorted(MODEL_TASKS_TRIED))}; this task's requirements and "
            "evaluation have not been run behind its walls yet"
        )
    if entrypoint == "PythonSubmissionTasks" and task_id == "3SATTime" and SAT_MODULE in names:
        return _sat_plan(timeout=timeout), ""
    return None, f"Referee does not yet evaluate MLGym's {entrypoint or 'unnamed'} tasks behind its walls"


def _submission_plan(*, module: str, function: str) -> dict:
    """The submitted module runs in a sandbox of its own that the evaluator calls over Referee's pipes."""
    return {
        "module": module,
        "functions": [function],
        "files": [module],
        "call_timeout": 5.0,
        "load_timeout": 60.0,
        "max_reply_bytes": 1 << 20,
        "stub": True,
    }


def _game_plan() -> dict:
    """A game task (strategy.py against MLGym's opponents)."""
    return {
        "artifacts": [GAME_MODULE],
        # MLGym's evaluate.py never reads the CPU time of a call: no relay to sign it.
        "submission": {**_submission_plan(module=GAME_MODULE, function=GAME_FUNCTION), "cpu_charge": False},
        "evaluator": {"dir": "evaluator", "command": GAME_COMMAND, "timeout": 900, "metrics": "stdout"},
        # The starter strategy is MLGym's baseline (baseline_paths names evaluate.py itself).
        "baseline": {"dir": None, "command": f"python3 -c 'import {GAME_MODULE[:-3]}'", "timeout": 120},
        "monte_carlo_repeats": MONTE_CARLO_REPEATS,
        "sandbox": {"memory_mb": 1024, "cpus": 1.0},
    }


def _hub_plan(*, baseline_paths: list[str], names: set[str] | list[str], timeout: float) -> dict:
    """A CSV task on Hugging Face datasets: MLGym's evaluate.py against the admin's untouched copy."""
    scripts = [name for name in baseline_paths if name.endswith(".py") and name in names]
    return {
        "artifacts": ["submission.csv"],
        "submission": None,
        "evaluator": {"dir": "evaluator", "command": HUB_COMMAND, "timeout": 1800, "metrics": "stdout"},
        "baseline": {
            "dir": None,
            "command": f"python3 {scripts[0]}" if scripts else "",
            "timeout": min(int(timeout), 3600),
        },
        "monte_carlo_repeats": 1,
        "sandbox": {"memory_mb": 8192, "cpus": 2.0},
        "sandbox_env": dict(HF_OFFLINE_ENV),
    }


def _csv_plan(*, task_id: str, baseline_paths: list[str], names: list[str], timeout: int) -> dict:
    """A CSV task whose answer file Referee knows, so it stays on the evaluator's side."""
    scripts = [name for name in baseline_paths if name.endswith(".py") and name in names]
    return {
        "artifacts": ["submission.csv"],
        "hidden_files": [CSV_ANSWERS[task_id]],
        "submission": None,
        "evaluator": {"dir": "evaluator", "command": CSV_COMMAND, "timeout": 600, "metrics": "stdout"},
        "baseline": {
            "dir": None,
            "command": f"python3 {scripts[0]}" if scripts else "",
            "timeout": min(int(timeout), 3600),
        },
        "monte_carlo_repeats": 1,
        "sandbox": {"memory_mb": 4096, "cpus": 1.0},
    }


def _model_plan(*, data: dict, timeout: int) -> dict:
    """A model task Referee has tried (config.yaml and checkpoints, loaded as data only)."""
    scripts = [path for path in baseline_paths_full(data) if path.endswith(".py")]
    return {
        "artifacts": [MODEL_CONFIG, MODEL_CHECKPOINTS],
        "submission": None,
        # MLGym's src/ (helpers, networks) goes to the evaluator pristine: evaluate.py imports it.
        "evaluator_starter_dirs": True,
        "evaluator": {"dir": "evaluator", "command": MODEL_COMMAND, "timeout": 1800, "metrics": "stdout"},
        # MLGym's baseline: src/train.py from the workspace, whose config is src/config.yaml.
        "baseline": {
            "dir": None,
            "command": f"python3 {scripts[0]} && cp src/{MODEL_CONFIG} {MODEL_CONFIG}" if scripts else "",
            "timeout": min(int(timeout), 3600),
        },
        "monte_carlo_repeats": 1,
        "sandbox": {"memory_mb": 4096, "cpus": 1.0},
    }


def _sat_plan(*, timeout: int) -> dict:
    """3SATTime: heuristic_fn runs in the submission's sandbox; its int-keyed dicts cross the pipes intact
    (sandbox/runtime/arena_wire.py). The dataset holds each formula's answer (is_sat): evaluator only."""
    return {
        "artifacts": [SAT_MODULE],
        "hidden_files": [SAT_DATASET],
        "submission": _submission_plan(module=SAT_MODULE, function=SAT_FUNCTION),
        "evaluator": {"dir": "evaluator", "command": SAT_COMMAND, "timeout": int(timeout), "metrics": "stdout"},
        "baseline": {"dir": None, "command": f"python3 -c 'import {SAT_MODULE[:-3]}'", "timeout": 120},
        "monte_carlo_repeats": 1,
        "sandbox": {"memory_mb": 2048, "cpus": 1.0},
    }


def baseline_paths_full(data: dict) -> list[str]:
    return [str(path) for path in data.get("baseline_paths") or [] if isinstance(path, str)]


def _notes(*, root: Path, sample: str | None, datasets: dict[str, dict]) -> list[str]:
    """What the task page says about the released data beyond what is missing."""
    if not sample or not (root / sample).is_file():
        return []
    data = (root / sample).read_bytes()
    for dataset in datasets.values():
        folder = root / dataset["data_path"]
        if not dataset.get("is_local", True) or not folder.is_dir():
            continue
        for path in task_files(folder):
            if path.name.lower() in ANSWER_NAMES and path.read_bytes() == data:
                return [
                    f"MLGym's sample submission {sample} is byte for byte its answers "
                    f"({path.relative_to(root).as_posix()}): Referee keeps it out of the workspace. A copy of it "
                    "scores 1.0 against these answers, so a published baseline below 1.0 cannot come from them."
                ]
    return []


def _why_not(*, runnable: bool, missing: list[str], plan_note: str) -> str:
    if runnable:
        return ""
    if missing and plan_note:
        return f"its data is missing on this machine (see Data), and {plan_note}"
    return plan_note or "its data is missing on this machine (see Data)"


def _requirement_lines(root: Path, relative: object) -> list[str]:
    """The pip lines of a task's `requirements_path` (MLGym's RL tasks), [] when it names none."""
    if not isinstance(relative, str) or not relative.strip():
        return []
    path = root / relative
    if not path.is_file():
        return []
    return [line.strip() for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]


def _metric(data: dict, file: Path, task_id: str) -> tuple[str, str, str]:
    """(metric, direction, where it comes from): the task file's own, else MLGym's README table,
    else the name its evaluate.py prints; the source is kept so that a page can say which."""
    if data.get("metric") is not None:
        return text_field(data, file, "metric"), direction_field(data, file), "task file"
    if task_id in MLGYM_METRICS:
        metric, direction = MLGYM_METRICS[task_id]
        return metric, direction, "MLGym (table in its README)"
    if task_id in MLGYM_METRICS_INFERRED:
        metric, direction = MLGYM_METRICS_INFERRED[task_id]
        return metric, direction, "inferred by Referee (not in MLGym's table; the name its evaluate.py prints)"
    raise TaskFormatError(file, "metric", f"no metric is known for task id {task_id!r}: add metric: and direction:")


class _Datasets(NamedTuple):
    """The task's datasets as found in this checkout: what loaded, what MLGym's script makes at
    build time (data_path -> script), what is missing (said, never made up), their docs."""

    datasets: dict[str, dict]
    generated: dict[str, str]
    missing: list[str]
    docs: list[str]
    hub: dict[str, dict]  # data_path -> its local copy (benchmark.tasks.mlgym_hub.hub_check)


def _mlgym_datasets(data: dict, file: Path, configs_dir: Path, root: Path, parts: list) -> _Datasets:
    """Looks up each dataset config and its files, adding what it reads to the content hash's
    `parts` (in order), so that data appearing on the machine makes a new task version."""
    found = _Datasets({}, {}, [], [], {})
    for reference in _string_list(data, file, "dataset_configs"):
        dataset, note = _mlgym_dataset(configs_dir, reference, file)
        if dataset is None:
            found.missing.append(note)
            continue
        found.datasets[reference] = dataset
        parts.append((configs_dir / reference).read_bytes())
        found.docs.append(f"{dataset['name']}:\n{(dataset.get('description') or '').strip()}")
        if dataset.get("is_local", True):
            path = root / dataset["data_path"]
            generator = _split_generator(root, dataset["data_path"])
            if path.exists():
                parts += _file_parts(path, dataset["data_path"])
            elif generator is not None:
                found.generated[dataset["data_path"]] = generator.relative_to(root).as_posix()
            else:
                found.missing.append(
                    f"dataset {dataset['name']}: put its files in {path} (this checkout has neither "
                    f"{dataset['data_path']} nor MLGym's _helpers/_generate_split.py to make it; Referee does not make up data in its place: "
                    "it would be another task, and MLGym's published baseline would not apply to it)"
                )
        else:
            copy, note = hub_check(dataset=dataset, root=hub_root())
            if copy is None:
                found.missing.append(note)
            else:
                found.hub[dataset["data_path"]] = copy
                parts += hub_file_parts(copy)
    return found


def _adapter_notes(
    *, generated: dict[str, str], memory_path: Any, root: Path, plan: dict | None, timeout: int | None
) -> list[str]:
    """What Referee does differently from MLGym for this task, shown on the task page: the generated
    split's pandas shim, the memory file no agent here reads, how model checkpoints are scored."""
    notes = []
    for data_path, script in generated.items():
        notes.append(
            f"{data_path} is made at build time by MLGym's own {script}, in a sandbox; its answers stay with "
            "the evaluator. The script's df.drop(columns=..., axis=1) is refused by pandas 3 (the sandbox "
            "image's), so it runs with a shim that drops the redundant axis (benchmark/tasks/mlgym_compat)."
        )
    if isinstance(memory_path, str) and memory_path.strip():
        where = "in this checkout, unused" if (root / memory_path).is_file() else "not in this checkout"
        notes.append(
            f"memory_path {memory_path} ({where}): the file of MLGym's memory tool (memory_write / memory_read, "
            "its default_memory agent). Referee's agents have no memory tool: the file is neither given to the "
            "agent nor read, and nothing carries over between runs, as with MLGym's default agent."
        )
    if plan is not None and plan.get("evaluator_starter_dirs"):
        notes.append(
            "Scoring takes config.yaml and checkpoints/*.pkl from the workspace. The evaluator imports MLGym's own "
            "src/ (helpers, networks), never the workspace's, and loads the checkpoints as data only (NumPy/JAX "
            "arrays, dicts, FrozenDict, DotMap): a checkpoint that names any other Python object is refused. "
            "MLGym's baseline (src/train.py) trains 5 PPO models for its config's num_train_steps on a GPU; "
            f"within training_timeout ({timeout or 1800} s) on one CPU it does not finish, so its computed "
            "baseline here is the timeout, and the published value stands alone."
        )
    return notes


def _task_fields(data: dict, file: Path) -> tuple[list[str], list[dict], int | None, str | None]:
    """(starter code, published baseline scores, training timeout, sample submission), each checked
    here so that a malformed task file is refused at load, naming the field."""
    for name in ("starter_code", "baseline_paths", "evaluation_paths"):
        _string_list(data, file, name)
    starter = _string_list(data, file, "starter_code")
    baseline_scores = data.get("baseline_scores", [])
    if not isinstance(baseline_scores, list) or not all(isinstance(item, dict) for item in baseline_scores):
        raise TaskFormatError(file, "baseline_scores", "must be a list of metric mappings")
    timeout = data.get("training_timeout")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int)):
        raise TaskFormatError(file, "training_timeout", f"must be whole seconds, not {timeout!r}")
    sample = data.get("sample_submission")
    if sample is not None:
        sample = relative_field(sample, file, "sample_submission")
    return starter, baseline_scores, timeout, sample


def _runtime_parts(*, plan: dict | None, generated: dict[str, str]) -> list[bytes]:
    """Referee's own code the task runs with (the pandas shim, the evaluation runtime), as content
    hash parts: a change to it is a new task version."""
    parts = []
    if generated:
        parts.append((Path(__file__).resolve().parent / "mlgym_compat" / "sitecustomize.py").read_bytes())
    if plan is not None:
        parts += [
            (f"(referee runtime)/{p.relative_to(RUNTIME_DIR).as_posix()}").encode() for p in task_files(RUNTIME_DIR)
        ]
        parts += [p.read_bytes() for p in task_files(RUNTIME_DIR)]
    return parts


def _task_header(data: dict, file: Path) -> tuple[str, str, str]:
    """(id, name, description); the id becomes part of a URL, so it must be a slug."""
    task_id = text_field(data, file, "id")
    if not SLUG_RE.match(task_id):
        raise TaskFormatError(file, "id", f"{task_id!r} cannot be used as a slug")
    return task_id, text_field(data, file, "name"), text_field(data, file, "description")


def _data_status(*, missing: list[str], datasets: dict[str, dict]) -> tuple[str, str]:
    """(data status, what is missing, one per line) for the task row."""
    if missing:
        data_status = Task.DataStatus.MISSING
    else:
        data_status = Task.DataStatus.OK if datasets else Task.DataStatus.NOT_NEEDED
    return data_status, "\n".join(missing)


def _missing_files(*, root: Path, starter: list[str], sample: str | None) -> list[str]:
    """The starter code and sample submission the task names that are not in the checkout."""
    missing = [f"starter code: {root / path}" for path in starter if not (root / path).exists()]
    if sample and not (root / sample).is_file():
        missing.append(f"sample submission: {root / sample}")
    return missing


def _released_fields(
    *, data: dict, baseline_scores: list[dict], timeout: int | None, sample: str | None
) -> dict[str, Any]:
    """What the task's YAML says, kept on the config as MLGym gives it (the task page shows it)."""
    published = baseline_scores[0] if baseline_scores else {}
    return {
        "published_baseline_scores": published,
        "machine_bound_metrics": sorted(MACHINE_BOUND & set(published)),
        "task_entrypoint": data.get("task_entrypoint", ""),
        "training_timeout": timeout,
        "memory_path": data.get("memory_path") or "",
        "sample_submission": sample or "",
    }


def _scoring_note(artifacts: list[str]) -> str:
    """Told to the agent: the workspace's evaluator is a copy, so editing it changes no score."""
    return (
        "\n\n(Referee) Scoring never reads your workspace's evaluate.py or target.py: they are copies for "
        "reading. `validate` and `submit` run MLGym's pristine evaluator in a separate sandbox with the hidden "
        f"answers, on {', '.join(artifacts)} only; as in MLGym, both score the same test data."
    )


def _hub_scoring_note() -> str:
    """Told to the agent of a hub-dataset task: where the data is and which labels are withheld."""
    return (
        '\n\n(Referee) The dataset is in your workspace as local files, where `load_dataset("<org>/<name>")` '
        "finds it from the workspace folder without network. The split that is scored has its labels withheld "
        "(set to -1); `validate` and `submit` run MLGym's pristine evaluate.py in a separate sandbox on "
        "submission.csv only, against the untouched copy."
    )


# The script that withholds a hub task's scored labels (run by benchmark.tasks.mlgym_build): part of the version.
HUB_SPLIT_SCRIPT = Path(__file__).resolve().parent / "mlgym_compat" / "hub_split.py"


def _hub_needs(
    *, root: Path, data: dict, datasets: dict, starter: list[str], plan: dict | None, missing: list[str]
) -> list[str]:
    """A hub task's notes; what it lacks is added to ``missing``."""
    if data.get("use_generic_conda") and not (root / GENERIC_REQUIREMENTS).is_file():
        missing.append(f"MLGym's package list for its generic environment: {root / GENERIC_REQUIREMENTS}")
    return hub_notes(datasets=datasets, code_names=hub_names_in_code(root, starter), plan=plan)


def _task_requirements(*, root: Path, data: dict, hub: bool) -> list[str]:
    """The task's own package list; a hub task on MLGym's generic environment takes that one."""
    requirements = _requirement_lines(root, data.get("requirements_path"))
    if hub and data.get("use_generic_conda") and not requirements:
        requirements = list(dict.fromkeys(_requirement_lines(root, GENERIC_REQUIREMENTS)))  # it lists datasets twice
    return requirements


def mlgym_task_load(file: Path, *, mlgym_dir: Path | None = None) -> TaskSpec:
    """Load one of MLGym's ``configs/tasks/*.yaml``; code and data are looked up under mlgym_dir.

    A task whose starter code and data are in the checkout, and whose kind Referee evaluates, is
    runnable (built on first use, benchmark.tasks.mlgym_build); otherwise it loads as data
    "missing" or not runnable, saying exactly what is missing and where it was looked for.
    """
    file = Path(file).resolve()
    configs_dir = file.parent.parent
    root = Path(mlgym_dir).resolve() if mlgym_dir else configs_dir.parent
    data = read_yaml(file)
    task_id, title, description = _task_header(data, file)
    metric, direction, metric_source = _metric(data, file, task_id)
    starter, baseline_scores, timeout, sample = _task_fields(data, file)

    parts = [ADAPTER_VERSION, file.read_bytes()]
    found = _mlgym_datasets(data, file, configs_dir, root, parts)
    datasets, generated, missing = found.datasets, found.generated, found.missing
    missing += _missing_files(root=root, starter=starter, sample=sample)
    task_dir = _task_dir(root, starter, datasets)
    if task_dir is not None and task_dir.is_dir():
        parts += _file_parts(task_dir, task_dir.relative_to(root).as_posix())
    description = description.replace("{dataset_docs}", "\n\n".join(found.docs) or "(no dataset)")

    notes = _notes(root=root, sample=sample, datasets=datasets)
    hub = bool(datasets) and not any(dataset.get("is_local", True) for dataset in datasets.values())
    plan, not_runnable = _plan(task_id=task_id, data=data, file=file, starter=starter, hub=hub)
    if hub:
        notes += _hub_needs(root=root, data=data, datasets=datasets, starter=starter, plan=plan, missing=missing)
        parts.append(HUB_SPLIT_SCRIPT.read_bytes())
    notes += _adapter_notes(
        generated=generated, memory_path=data.get("memory_path"), root=root, plan=plan, timeout=timeout
    )
    if plan is not None and plan.get("evaluator_starter_dirs"):
        parts.append(MODEL_WRAPPER.read_bytes())
    data_status, data_detail = _data_status(missing=missing, datasets=datasets)
    runnable = plan is not None and not missing
    parts += _runtime_parts(plan=plan, generated=generated)
    # Data appearing on the machine is a new version: the row's data status is part of what it is.
    parts.append(f"{data_status}\n{data_detail}".encode())

    config = {
        "format": "mlgym",
        "runnable": runnable,
        "not_runnable_reason": _why_not(runnable=runnable, missing=missing, plan_note=not_runnable),
        "mlgym_id": task_id,
        "mlgym_root": str(root),
        "task_dir": task_dir.relative_to(root).as_posix() if task_dir is not None else "",
        "metric_source": metric_source,
        **_released_fields(data=data, baseline_scores=baseline_scores, timeout=timeout, sample=sample),
        "generated_data": generated,
        "notes": notes,
        "mlgym": data,
        "datasets": datasets,
        "hub_datasets": found.hub,
        "workspace_dir": "workspace",
        "evaluator_workdir": MLGYM_WORKSPACE,
    }
    requirements = _task_requirements(root=root, data=data, hub=hub)
    if requirements:  # the task's own packages: an image variant of the sandbox image (sandbox.variants)
        config["requirements"] = requirements
        parts.append("\n".join(requirements).encode())
    if plan is not None:
        config.update(plan)
    if runnable:
        description += _hub_scoring_note() if hub else _scoring_note(config["artifacts"])
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
