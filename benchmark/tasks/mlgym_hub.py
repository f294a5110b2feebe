"""MLGym's Hugging Face datasets (``is_local: false``, ``data_path: <org>/<name>``) from a local copy.

Nothing downloads here. The admin puts a copy of each dataset under ``MLGYM_HF_DATASETS_DIR`` as
``<dir>/<org>/<name>/``, in one of two layouts:

- ``save_to_disk``: what ``DatasetDict.save_to_disk`` writes (``dataset_dict.json`` and one folder per
  split holding ``state.json`` and ``data-*.arrow``);
- ``parquet``: the hub's own files (``plain_text/train-00000-of-00001.parquet``,
  ``data/test-*.parquet``...), one split per file-name prefix.

The starter code calls ``load_dataset("uoft-cs/cifar10")``; ``datasets`` documents that a ``path``
naming a local folder is loaded from that folder's data files with a generic builder, before any
hub lookup. So the copy goes to ``<workspace>/<org>/<name>/`` as parquet files, where that call
finds it unedited from the workspace folder (with HF_DATASETS_OFFLINE=1 and HF_HUB_OFFLINE=1 set).
The split that decides the score (``test`` for the vision tasks, ``validation_matched`` for MNLI's
evaluate.py) is there with its label column set to -1, the hub's own mark of a withheld label
(``ClassLabel`` accepts it; GLUE's test splits carry it); the evaluator gets the copy untouched.
The rewrite reads Arrow/Parquet, which the worker cannot (no pyarrow in Referee's requirements): it
runs at build time in a sandbox on the task's image, which has ``datasets`` and so ``pyarrow``
(mlgym_compat/hub_split.py).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import NamedTuple

from django.conf import settings

from benchmark.tasks.spec import task_files

SAVE_TO_DISK, PARQUET = "save_to_disk", "parquet"
LAYOUTS_TEXT = (
    "either a `datasets` save_to_disk folder (dataset_dict.json and one folder per split, e.g. train/ and "
    "test/ with state.json and data-*.arrow) or the hub's parquet files, one split per file-name prefix "
    "(e.g. plain_text/train-00000-of-00001.parquet and plain_text/test-00000-of-00001.parquet, or data/train-*.parquet)"
)
# The split MLGym's evaluate.py scores and its label column, per hub dataset (read from each task's
# evaluate.py: load_dataset(..., split="test") and test_data['label']; MNLI's scores
# validation_matched['label']). Anything else: "test" and "label".
SCORING: dict[str, tuple[str, str]] = {
    "uoft-cs/cifar10": ("test", "label"),
    "zalando-datasets/fashion_mnist": ("test", "label"),
    "nyu-mll/multi_nli": ("validation_matched", "label"),
}
DEFAULT_SCORING = ("test", "label")
SPLIT_NAME = re.compile(r"^[A-Za-z0-9_]+$")
LOAD_DATASET = re.compile(r"""load_dataset\(\s*["']([^"']+)["']""")


class HubCopyError(ValueError):
    """The folder exists but holds no layout Referee recognises (named in the message)."""


class HubCopy(NamedTuple):
    folder: Path
    layout: str
    splits: dict[str, list[str]]  # split -> its files, relative to folder


def hub_root() -> Path | None:
    value = getattr(settings, "MLGYM_HF_DATASETS_DIR", "") or ""
    return Path(value).resolve() if value else None


def hub_scoring(data_path: str) -> tuple[str, str]:
    return SCORING.get(data_path, DEFAULT_SCORING)


def _save_to_disk(folder: Path) -> HubCopy:
    index = folder / "dataset_dict.json"
    try:
        names = json.loads(index.read_text())["splits"]
    except (OSError, ValueError, KeyError, TypeError):
        raise HubCopyError(f"{index} is not a save_to_disk index (a JSON object with a list of splits)") from None
    if not isinstance(names, list) or not names or not all(isinstance(n, str) and SPLIT_NAME.match(n) for n in names):
        raise HubCopyError(f"{index} lists no usable splits: {names!r}")
    splits = {}
    for name in names:
        split_dir = folder / name
        arrows = sorted(p for p in split_dir.glob("*.arrow") if p.is_file())
        if not (split_dir / "state.json").is_file() or not arrows:
            raise HubCopyError(
                f"{split_dir} is not a saved split: dataset_dict.json names it, but it lacks state.json or data-*.arrow"
            )
        splits[name] = [p.relative_to(folder).as_posix() for p in task_files(split_dir)]
    return HubCopy(folder, SAVE_TO_DISK, splits)


def _parquet(folder: Path, files: list[Path]) -> HubCopy:
    splits: dict[str, list[str]] = {}
    for path in files:
        split = path.stem.split("-", 1)[0]
        if not SPLIT_NAME.match(split):
            raise HubCopyError(f"{path}: no split in its name (expected e.g. train-00000-of-00001.parquet)")
        splits.setdefault(split, []).append(path.relative_to(folder).as_posix())
    return HubCopy(folder, PARQUET, splits)


def hub_copy_find(data_path: str, root: Path | None = None) -> HubCopy | None:
    """The local copy of hub dataset data_path under root (default MLGYM_HF_DATASETS_DIR): None when
    its folder is absent; HubCopyError when the folder is there but no layout is recognisable."""
    root = root if root is not None else hub_root()
    if root is None:
        return None
    folder = root / data_path
    if not folder.is_dir():
        return None
    if (folder / "dataset_dict.json").is_file():
        return _save_to_disk(folder)
    if (folder / "state.json").is_file():
        raise HubCopyError(
            f"{folder} holds one Dataset saved with save_to_disk (state.json, no splits): save the whole "
            "DatasetDict (load_dataset(name).save_to_disk(folder)) so that its splits are named"
        )
    parquet = sorted(
        p
        for p in folder.rglob("*.parquet")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )  # not huggingface_hub's .cache/ of a snapshot_download(local_dir=...)
    if parquet:
        return _parquet(folder, parquet)
    raise HubCopyError(f"{folder} has no recognisable layout: expected {LAYOUTS_TEXT}")


def hub_missing_text(*, name: str, data_path: str, root: Path | None) -> str:
    """What the Data section says when the copy is absent: the full path and the accepted layouts."""
    where = (
        f"put a copy in {root / data_path}/"
        if root is not None
        else f"set MLGYM_HF_DATASETS_DIR to a folder and put a copy in <that folder>/{data_path}/"
    )
    return (
        f"dataset {name}: Hugging Face dataset {data_path} has no local copy: {where}, as {LAYOUTS_TEXT}. "
        "Nothing is downloaded here; make the copy on a machine with network, e.g. "
        f"datasets.load_dataset({data_path!r}).save_to_disk(...), then run `manage.py load_tasks`."
    )


def hub_check(*, dataset: dict, root: Path | None) -> tuple[dict | None, str]:
    """(the copy's description for the task config, or None and what the Data section says)."""
    data_path = dataset["data_path"]
    try:
        copy = hub_copy_find(data_path, root)
    except HubCopyError as exc:
        return None, f"dataset {dataset['name']}: the local copy of {data_path} is unusable: {exc}"
    except OSError as exc:
        return None, f"dataset {dataset['name']}: cannot read the local copy of {data_path}: {exc}"
    if copy is None:
        return None, hub_missing_text(name=dataset["name"], data_path=data_path, root=root)
    split, label = hub_scoring(data_path)
    if split not in copy.splits:
        return None, (
            f"dataset {dataset['name']}: the local copy in {copy.folder} has the splits {', '.join(sorted(copy.splits))} "
            f"but not {split!r}, the split MLGym's evaluate.py scores"
        )
    return {
        "folder": str(copy.folder),
        "layout": copy.layout,
        "splits": copy.splits,
        "scoring_split": split,
        "label_column": label,
    }, ""


def hub_file_parts(copy: dict) -> list[bytes]:
    """The copy's files for the version hash: names, sizes and mtimes (the files may be gigabytes)."""
    folder = Path(copy["folder"])
    parts = []
    for files in copy["splits"].values():
        for name in files:
            stat = (folder / name).stat()
            parts.append(f"hub/{folder.name}/{name} size={stat.st_size} mtime={stat.st_mtime_ns}".encode())
    return parts


def hub_names_in_code(root: Path, starter: list[str]) -> set[str]:
    """The dataset names the starter code passes to load_dataset (MNLI's differ from its YAML's)."""
    names: set[str] = set()
    for path in starter:
        file = root / path
        if file.suffix == ".py" and file.is_file():
            names.update(LOAD_DATASET.findall(file.read_text(errors="replace")))
    return names


def hub_notes(*, datasets: dict[str, dict], code_names: set[str], plan: dict | None) -> list[str]:
    """What the task page says about a hub task beyond its data status."""
    notes = []
    for dataset in datasets.values():
        data_path = dataset["data_path"]
        split, label = hub_scoring(data_path)
        notes.append(
            f"{data_path}: the agent's workspace gets a copy at ./{data_path}/ (parquet files), where the starter "
            f"code's load_dataset({data_path!r}) finds it offline; its {split!r} split, which MLGym's evaluate.py "
            f"scores, has its {label!r} column set to -1 (the hub's mark of a withheld label). The evaluator reads "
            "the copy under MLGYM_HF_DATASETS_DIR, untouched."
        )
        others = sorted(name for name in code_names if name != data_path)
        if others:
            notes.append(
                f"The starter code loads {', '.join(others)}, not the dataset config's {data_path}: "
                "those names find no local copy unless the code is edited (Referee does not edit MLGym's code)."
            )
    if plan is not None and plan.get("baseline", {}).get("command"):
        notes.append(
            "MLGym's baseline.py evaluates on the test split with its labels every epoch and keeps the best epoch "
            "by test loss (load_best_model_at_end): with the labels withheld that loss is undefined (PyTorch's "
            "cross_entropy refuses a target of -1), so run unchanged it should stop at its first evaluation and its "
            "computed baseline here is that failure; the published value stands alone. (Read from its code: not yet "
            "run behind these walls, which takes its torch image and a GPU.)"
        )
    return notes
