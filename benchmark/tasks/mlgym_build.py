"""Build an MLGym task version into a Referee task folder: ``workspace/`` (what the agent gets)
and ``evaluator/`` (MLGym's pristine evaluate.py and what it imports, and ``hidden/``: the answers
that MLGym keeps in the agent's workspace, copied into the evaluator's workspace just before
evaluate.py runs).

Built once per version, from the checkout (read at run time, never copied into the repository),
into ``VAR_DIR/mlgym-tasks/<slug>-<version>``. A separate folder is needed, not a mount of
MLGym's ``data/<task>``: that folder holds the starter ``strategy.py``, which would shadow the
stand-in that calls the submission. Data MLGym makes at set-up (the house-price splits) is made
by MLGym's own ``_generate_split.py``, run in a sandbox without network; its ``answer.csv`` goes
to the evaluator's side only.
"""

from __future__ import annotations

import json
import shlex
import shutil
import tempfile
from pathlib import Path, PurePosixPath

from django.conf import settings

from benchmark.models import Task
from benchmark.tasks.mlgym import ANSWER_NAMES, MODEL_WRAPPER, mlgym_task_load
from benchmark.tasks.resources import task_image
from benchmark.tasks.spec import task_files
from sandbox import SandboxError, SandboxSpec, open_session
from sandbox.base import Mount

BUILT_MARKER = ".referee-built.json"
COMPAT_DIR = Path(__file__).resolve().parent / "mlgym_compat"  # see its sitecustomize.py
COMPAT_MOUNT = "/referee-mlgym-compat"
GENERATOR_TIMEOUT = 600
HUB_MOUNT = "/referee-hub-copy"
HUB_OUT = "/workspace/referee-hub-out"
HUB_TIMEOUT = 1800
MAX_GENERATED_BYTES = 512 << 20


class MlgymBuildError(RuntimeError):
    """The task version cannot be built here (checkout changed, data missing, generator failed)."""


def build_root() -> Path:
    return Path(getattr(settings, "MLGYM_BUILD_DIR", "") or Path(settings.VAR_DIR) / "mlgym-tasks")


def _copy(source: Path, target: Path) -> None:
    if source.is_dir():
        for path in task_files(source):
            _copy(path, target / path.relative_to(source))
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)


def _readable(folder: Path) -> None:
    # The sandboxes' users differ from the worker's (uid 1000 in the image; bwrap's unprivileged uid).
    for path in [folder, *folder.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)


def _generate(*, root: Path, script: str, data_path: str, target: Path) -> list[str]:
    """Run MLGym's split script in a sandbox; its outputs land in target (relative to the task dir)."""
    helpers = (root / script).parent
    base = PurePosixPath("/workspace/mlgym") / PurePosixPath(helpers.relative_to(root).as_posix()).parent
    spec = SandboxSpec(
        network=False,
        memory_mb=2048,
        labels={"referee.role": "mlgym-build"},
        mounts=[Mount(source=str(COMPAT_DIR), target=COMPAT_MOUNT, read_only=True)],
        env={"PYTHONPATH": COMPAT_MOUNT, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    made: list[str] = []
    try:
        with open_session(spec) as session:
            for path in task_files(helpers):
                session.put_file(f"{base}/_helpers/{path.relative_to(helpers).as_posix()}", path.read_bytes())
            run = session.run(
                f"cd {shlex.quote(str(base / '_helpers'))} && python3 {shlex.quote(Path(script).name)}",
                timeout=GENERATOR_TIMEOUT,
            )
            if run.exit_code != 0 or run.timed_out:
                raise MlgymBuildError(f"MLGym's {script} failed (exit {run.exit_code}):\n{run.output[-2000:]}")
            out_dir = PurePosixPath("/workspace/mlgym") / data_path
            listing = session.run(f"cd {shlex.quote(str(out_dir))} && find . -type f | sort", timeout=60)
            if listing.exit_code != 0:
                raise MlgymBuildError(f"MLGym's {script} wrote nothing to {data_path}:\n{listing.output[-2000:]}")
            for line in listing.output.splitlines():
                name = line.strip()[2:]
                if not name:
                    continue
                data = session.get_file(f"{out_dir}/{name}", max_bytes=MAX_GENERATED_BYTES)
                (target / name).parent.mkdir(parents=True, exist_ok=True)
                (target / name).write_bytes(data)
                made.append(name)
    except SandboxError as exc:
        raise MlgymBuildError(f"the sandbox that runs MLGym's {script} failed: {exc}") from None
    if not made:
        raise MlgymBuildError(f"MLGym's {script} wrote no files to {data_path}")
    return made


def _sandbox_files(session, folder: str, target: Path) -> list[str]:  # noqa: ANN001 (a sandbox Session)
    """Every file under folder in the sandbox, fetched into target; their relative names."""
    listing = session.run(f"cd {shlex.quote(folder)} && find . -type f | sort", timeout=60)
    if listing.exit_code != 0:
        raise MlgymBuildError(f"{folder} was not written:\n{listing.output[-2000:]}")
    names = [line.strip()[2:] for line in listing.output.splitlines() if line.strip()[2:]]
    for name in names:
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        (target / name).write_bytes(session.get_file(f"{folder}/{name}", max_bytes=MAX_GENERATED_BYTES))
    return names


def _hub_copy(*, task: Task, data_path: str, copy: dict, workspace: Path, hidden: Path) -> list[str]:
    """The local copy of a hub dataset: untouched for the evaluator (hidden/<org>/<name>/, copied into its
    workspace before evaluate.py runs), and for the agent at <org>/<name>/ with the scored split's labels
    set to -1. Reading Arrow/Parquet takes pyarrow, which the task's image has and the worker has not:
    mlgym_compat/hub_split.py does it in a sandbox without network. Returns the workspace's files."""
    folder, layout, split = Path(copy["folder"]), copy["layout"], copy["scoring_split"]
    agent_dir, evaluator_dir = workspace / data_path, hidden / data_path
    scored = set(copy["splits"][split])
    if layout == "parquet":
        for path in task_files(folder):
            relative = path.relative_to(folder).as_posix()
            _copy(path, evaluator_dir / relative)
            if relative not in scored:
                _copy(path, agent_dir / relative)  # the splits the agent may see, README and the like as they are
    spec = SandboxSpec(
        network=False,
        memory_mb=4096,
        labels={"referee.role": "mlgym-build"},
        mounts=[
            Mount(source=str(COMPAT_DIR), target=COMPAT_MOUNT, read_only=True),
            Mount(source=str(folder), target=HUB_MOUNT, read_only=True),
        ],
        env={"PYTHONDONTWRITEBYTECODE": "1"},
        image=task_image(task),
    )
    try:
        with open_session(spec) as session:
            session.put_file(f"{HUB_OUT}.json", json.dumps(copy["splits"]).encode())
            command = " ".join(
                shlex.quote(part)
                for part in (
                    "python3",
                    f"{COMPAT_MOUNT}/hub_split.py",
                    HUB_MOUNT,
                    HUB_OUT,
                    layout,
                    split,
                    copy["label_column"],
                    f"{HUB_OUT}.json",
                )
            )
            run = session.run(command, timeout=HUB_TIMEOUT)
            if run.exit_code != 0 or run.timed_out:
                raise MlgymBuildError(
                    f"withholding the {split!r} labels of {folder} failed (exit {run.exit_code}):\n{run.output[-2000:]}"
                )
            made = _sandbox_files(session, f"{HUB_OUT}/agent", agent_dir)
            if layout != "parquet":
                _sandbox_files(session, f"{HUB_OUT}/evaluator", evaluator_dir)
    except SandboxError as exc:
        raise MlgymBuildError(f"the sandbox that prepares {data_path} failed: {exc}") from None
    if not made:
        raise MlgymBuildError(f"no files were written for the {split!r} split of {folder}")
    return made


def _build(task: Task, root: Path, folder: Path) -> dict:
    config = task.config
    workspace, evaluator = folder / "workspace", folder / "evaluator"
    hidden = evaluator / "hidden"
    workspace.mkdir(parents=True)
    evaluator.mkdir()
    starter = config["mlgym"].get("starter_code") or []
    baseline_names = {Path(path).name for path in config["mlgym"].get("baseline_paths") or []}
    evaluation_names = {Path(path).name for path in config["mlgym"].get("evaluation_paths") or []}
    # MLGym's game tasks name evaluate.py as their baseline path: it is still the evaluator.
    baseline_names -= evaluation_names
    submitted = set(config.get("artifacts", []))
    for path in starter:
        source = root / path
        _copy(source, workspace / source.name)  # MLGym puts starter code at the workspace's top
        if source.suffix == ".py" and source.name not in submitted and source.name not in baseline_names:
            _copy(source, evaluator / source.name)  # evaluate.py and what it imports (target.py): pristine
        elif source.is_dir() and config.get("evaluator_starter_dirs"):
            _copy(source, evaluator / source.name)  # the model tasks' src/ package, which evaluate.py imports
    if config.get("evaluator_starter_dirs"):
        _copy(MODEL_WRAPPER, evaluator / MODEL_WRAPPER.name)
    if not (evaluator / "evaluate.py").is_file():
        raise MlgymBuildError("MLGym's evaluate.py is not among the task's starter code")
    data_dir = workspace / "data"
    for dataset in config.get("datasets", {}).values():
        if not dataset.get("is_local", True):
            continue
        source = root / dataset["data_path"]
        if source.exists():
            _copy(source, data_dir)
    for data_path, script in config.get("generated_data", {}).items():
        _generate(root=root, script=script, data_path=data_path, target=data_dir)
    for data_path, copy in config.get("hub_datasets", {}).items():
        _hub_copy(task=task, data_path=data_path, copy=copy, workspace=workspace, hidden=hidden)
    moved = []
    hidden_files = set(config.get("hidden_files", []))
    for path in task_files(workspace):
        relative = path.relative_to(workspace)
        if path.name.lower() in ANSWER_NAMES or relative.as_posix() in hidden_files:
            (hidden / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.move(path, hidden / relative)
            moved.append(relative.as_posix())
    hidden.mkdir(exist_ok=True)
    absent = [name for name in config.get("hidden_files", []) if not (hidden / name).is_file()]
    if absent:
        raise MlgymBuildError(f"the answer file {absent[0]} was not found in the task's data: nothing to score against")
    sample = config.get("sample_submission")
    withheld = ""
    if sample:
        data = (root / sample).read_bytes()
        if any(data == path.read_bytes() for path in task_files(hidden)):
            withheld = Path(sample).name  # it *is* the answers (titanic): never in the workspace
        else:
            (workspace / Path(sample).name).write_bytes(data)
    return {"hidden": moved, "withheld": withheld, "version": task.version_hash}


def mlgym_task_folder(task: Task) -> Path:
    """The built folder of this MLGym task version; built here on first use (checked against the
    checkout: a changed checkout is a new version, to be loaded with `manage.py load_tasks`)."""
    root = Path(task.config.get("mlgym_root") or "")
    try:
        spec = mlgym_task_load(Path(task.path), mlgym_dir=root)
    except (OSError, ValueError) as exc:
        raise MlgymBuildError(f"cannot read {task.path}: {exc}") from None
    if spec.content_hash != task.version_hash:
        raise MlgymBuildError(
            f"{root} no longer holds version {task.version_hash[:8]} of {task.slug} "
            "(it changed since it was loaded: run `manage.py load_tasks` to load the new version)"
        )
    if not spec.runnable:
        raise MlgymBuildError(spec.config.get("not_runnable_reason") or spec.data_detail)
    target = build_root() / f"{task.slug}-{task.version_hash[:16]}"
    if (target / BUILT_MARKER).is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{task.slug}-", dir=target.parent))
    try:
        built = _build(task, root, staging / "task")
        (staging / "task" / BUILT_MARKER).write_text(json.dumps(built, indent=1))
        _readable(staging / "task")
        try:
            (staging / "task").rename(target)  # atomic: a concurrent build of the same version loses
        except OSError:
            if not (target / BUILT_MARKER).is_file():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def mlgym_build_notes(folder: Path) -> dict:
    try:
        return json.loads((folder / BUILT_MARKER).read_text())
    except (OSError, ValueError):
        return {}
