"""MLGym `.traj` files: import them as runs, export any run as one."""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.db import transaction

from benchmark.models import Run, RunGroup, Score, Step, Task
from benchmark.runs.released import (
    MLGYM_METRICS,
    folder_meta,
    has_results,
    has_trajectory,
    known_task,
    mlgym_agent,
    mlgym_task,
    released_run,
    scores_link,
)

SUBMITTING = ("submitted", "autosubmission")


class TrajImportError(ValueError):
    """A file that cannot be imported: one line naming the file, the line in it, the field."""

    def __init__(self, path: Path | str, field: str, message: str, line: int | None = None) -> None:
        where = f"{path}:{line}" if line else str(path)
        super().__init__(f"{where}: {field}: {message}")


# -- locating a field in the JSON text, for messages that name its line ---------------------------
_WS = re.compile(r"[ \t\n\r]*")
_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def json_offset(text: str, field: str) -> int:
    """Offset in `text` of the value at `field` ("trajectory[3].execution_time"), or of the deepest
    enclosing value found (a missing key points at its object). Only called on the error path."""
    decoder = json.JSONDecoder()
    pos = _WS.match(text, 0).end()
    try:
        for key, index in _PART.findall(field):
            opening = "[" if index else "{"
            if text[pos : pos + 1] != opening:
                return pos
            cursor = _WS.match(text, pos + 1).end()
            found = None
            position = 0
            while text[cursor : cursor + 1] not in ("]", "}", ""):
                if not index:
                    name, cursor = decoder.raw_decode(text, cursor)
                    cursor = _WS.match(text, cursor).end() + 1  # the ":"
                    cursor = _WS.match(text, cursor).end()
                    if name == key:
                        found = cursor
                        break
                elif position == int(index):
                    found = cursor
                    break
                _, cursor = decoder.raw_decode(text, cursor)
                cursor = _WS.match(text, cursor).end()
                if text[cursor : cursor + 1] == ",":
                    cursor = _WS.match(text, cursor + 1).end()
                position += 1
            if found is None:
                return pos
            pos = found
    except ValueError:  # the text is not JSON after all: point at where the walk stood
        pass
    return pos


def json_line(text: str, field: str) -> int:
    return text.count("\n", 0, json_offset(text, field)) + 1


class _Doc:
    """A .traj being read: raises TrajImportError and records data issues, both with lines."""

    def __init__(self, path: Path, text: str) -> None:
        self.path, self.text = path, text
        self.issues: list[str] = []

    def error(self, field: str, message: str) -> TrajImportError:
        return TrajImportError(self.path, field, message, json_line(self.text, field))

    def issue(self, field: str, message: str) -> None:
        self.issues.append(f"{self.path}:{json_line(self.text, field)}: {field}: {message}")

    def number(self, value: Any, field: str, *, integer: bool = False) -> float | int | None:
        """A finite number, or None with a data issue: "NaN" and "abc" are not zeros."""
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            self.issue(field, f"{json.dumps(value)[:40]} is not a number: recorded as unknown")
            return None
        if integer and (value < 0 or value != int(value)):
            self.issue(field, f"{value} is not a count: recorded as unknown")
            return None
        return int(value) if integer else float(value)


def _require(data: Any, key: str, kind: type | tuple[type, ...], doc: _Doc, where: str = "") -> Any:
    if not isinstance(data, dict) or key not in data:
        raise doc.error(f"{where}{key}", "missing")
    if not isinstance(data[key], kind):
        names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise doc.error(f"{where}{key}", f"expected {names}, got {type(data[key]).__name__}")
    return data[key]


def _finite(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


# Run field <- info.model_stats key: the numbers a .traj reports about its run.
RUN_NUMBERS = (("cost", "total_cost"), ("tokens_sent", "tokens_sent"), ("tokens_received", "tokens_received"),
               ("api_calls", "api_calls"))  # fmt: skip


def _steps(trajectory: list, doc: _Doc) -> list[dict[str, Any]]:
    steps = []
    for position, raw in enumerate(trajectory):
        where = f"trajectory[{position}]."
        if not isinstance(raw, dict):
            raise doc.error(f"trajectory[{position}]", "expected an object")
        state = raw.get("state") or {}
        if isinstance(state, str):
            try:
                state = json.loads(state)
            except json.JSONDecodeError:
                state = {"raw": state}
        steps.append(
            {
                "thought": str(raw.get("thought") or ""),
                "action": str(_require(raw, "action", str, doc, where)),
                "observation": str(raw.get("observation") or ""),
                "raw_response": str(raw.get("response") or ""),
                "state": state if isinstance(state, dict) else {"raw": state},
                "execution_time": doc.number(raw.get("execution_time"), f"{where}execution_time"),
            }
        )
    return steps


def traj_read(path: Path) -> tuple[_Doc, Any]:
    """The parsed file, or TrajImportError naming the line (and byte) where it stops being JSON."""
    try:
        content = path.read_bytes()
    except OSError as exc:
        raise TrajImportError(path, "file", exc.strerror or str(exc)) from None
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = content.count(b"\n", 0, exc.start) + 1
        raise TrajImportError(path, "file", f"not UTF-8 (byte {exc.start}: 0x{content[exc.start]:02x})", line) from None
    try:
        return _Doc(path, text), json.loads(text)
    except json.JSONDecodeError as exc:
        raise TrajImportError(path, "file", f"not JSON ({exc.msg}, column {exc.colno})", exc.lineno) from None


@dataclass
class _Traj:
    """A .traj file read and checked: what it says about its run."""

    path: Path
    key: str
    meta: dict[str, Any]
    steps: list[dict[str, Any]]
    scores: list[dict[str, Any]]
    numbers: dict[str, float | int | None]
    prompt: dict[str, str]
    exit_status: str
    submission: Any
    issues: list[str]

    @property
    def unknown(self) -> list[str]:
        return sorted(field for field, value in self.numbers.items() if value is None)


def _traj_parse(path: Path, doc: _Doc, data: Any, key: str) -> _Traj:
    """The file's run, or TrajImportError (file, line, field) for a file that cannot be one."""
    if not isinstance(data, dict):
        raise doc.error("(top level)", f"expected an object, got {type(data).__name__}")
    trajectory = _require(data, "trajectory", list, doc)
    info = _require(data, "info", dict, doc)
    stats = info.get("model_stats") or {}
    if not isinstance(stats, dict):
        raise doc.error("info.model_stats", "expected an object")
    scores = info.get("score") or []
    if not isinstance(scores, list):
        raise doc.error("info.score", "expected a list of metric objects")
    for position, entry in enumerate(scores):
        if not isinstance(entry, dict):
            raise doc.error(f"info.score[{position}]", "expected an object of metrics")
    steps = _steps(trajectory, doc)
    numbers = {
        field: doc.number(stats.get(key), f"info.model_stats.{key}", integer=field != "cost")
        for field, key in RUN_NUMBERS
    }
    history = data.get("history") if isinstance(data.get("history"), list) else []
    prompt = {}
    if len(history) >= 2 and all(isinstance(h, dict) for h in history[:2]):
        prompt = {"system": str(history[0].get("content", "")), "task": str(history[1].get("content", ""))}
    meta = folder_meta(path.parent.name, fallback_task=path.stem)
    return _Traj(
        path=path,
        key=key,
        meta=meta,
        steps=steps,
        scores=scores,
        numbers=numbers,
        prompt=prompt,
        exit_status=str(info.get("exit_status") or ""),
        submission=info.get("submission"),
        issues=doc.issues,
    )


def traj_import(
    path: Path | str, *, owner: Any = None, group: RunGroup | None = None, create_task: bool = False
) -> tuple[Run, bool]:
    """Import one .traj file; (run, stored). Importing the same file again returns the first run.

    The run of an MLGym run folder is one run whichever importer came first
    (benchmark.runs.released): a run already imported from the folder's results.json gets this
    file's steps, cost, tokens and exit status (stored: True), and keeps its results.json scores.
    A file error raises TrajImportError (one line: file, line, field) and writes nothing. A value
    that is not a number where one belongs (`"NaN"`, `"abc"`) is a data issue: the run is imported,
    that value is recorded as unknown (never as 0) and the issue is kept in `params["import_issues"]`.
    A task that is not known is an error unless `create_task`.
    """
    path = Path(path)
    doc, data = traj_read(path)
    key = hashlib.sha256(doc.text.encode()).hexdigest()
    folder = path.parent.name if folder_meta(path.parent.name)["released"] else None
    existing = released_run(folder, import_key=key)
    if existing is not None and has_trajectory(existing):
        return existing, False
    traj = _traj_parse(path, doc, data, key)
    slug = traj.meta["task"] or path.stem
    if existing is None and not create_task and not known_task(slug):
        raise TrajImportError(
            path,
            "task",
            f"{slug!r} (from the folder name {path.parent.name!r}) is not a known task: no such task, no MLGym "
            "config for it, not an MLGym-Bench task; load the task first, or pass --create-task",
        )
    with transaction.atomic():
        if existing is None:
            run = _run_create(traj, slug=slug, owner=owner, group=group)
        else:
            run = Run.objects.select_for_update().get(pk=existing.pk)
            if has_trajectory(run):  # another import stored it meanwhile
                return run, False
        _trajectory_attach(run, traj)
    return run, True


def _run_create(traj: _Traj, *, slug: str, owner: Any, group: RunGroup | None) -> Run:
    """A released run known only from its .traj: scored from `info.score` until a results.json comes."""
    task = mlgym_task(slug)
    metric = task.metric or MLGYM_METRICS.get(task.slug, ("", "max"))[0]
    primaries = [_finite(s.get(metric)) for s in traj.scores]
    submitted = bool(traj.scores) and traj.exit_status.startswith(SUBMITTING)
    valid = [p for p in primaries if p is not None]
    better = max if task.direction == Task.Direction.MAX else min
    run = Run.objects.create(
        task=task,
        agent=mlgym_agent(traj.meta),
        group=group,
        owner=owner,
        source=Run.Source.MLGYM,
        method=traj.meta["method"],
        status=Run.Status.FINISHED,
        best_attempt=better(valid) if valid else None,
        best_submission=primaries[-1] if submitted else None,
        params={"mlgym_folder": traj.path.parent.name},
    )
    Score.objects.bulk_create(
        Score(
            run=run,
            kind=Score.Kind.SUBMIT if submitted and position == len(traj.scores) - 1 else Score.Kind.VALIDATE,
            metrics=metrics,
            primary=primary,
        )
        for position, (metrics, primary) in enumerate(zip(traj.scores, primaries, strict=True))
    )
    return run


def _trajectory_attach(run: Run, traj: _Traj) -> None:
    """The file's part of the run: steps, counts, cost, exit status, prompt; its scores linked to steps."""
    Step.objects.bulk_create([Step(run=run, index=i + 1, **fields) for i, fields in enumerate(traj.steps)])
    numbers = traj.numbers
    run.params = {
        **(run.params or {}),
        "import_key": traj.key,
        "import": {**traj.meta, "file": traj.path.name, "folder": traj.path.parent.name, "submission": traj.submission},
        "prompt": traj.prompt,
        "has_trajectory": True,
        # The stored 0 of an unknown number is not a measurement: pages show "unknown".
        "cost_recorded": numbers["cost"] is not None,
        "unknown": traj.unknown,
        "import_issues": traj.issues,
    }
    Run.objects.filter(pk=run.pk).update(
        step_count=len(traj.steps),
        exit_status=traj.exit_status[:60],
        tokens_sent=numbers["tokens_sent"] or 0,
        tokens_received=numbers["tokens_received"] or 0,
        api_calls=numbers["api_calls"] or 0,
        cost=numbers["cost"] or 0.0,
        params=run.params,
    )
    run.refresh_from_db()
    scores_link(run)


# -- export ---------------------------------------------------------------------------------------
def traj_export(run: Run) -> dict[str, Any]:
    """An MLGym-compatible trajectory: the same keys MLGym writes, readable by its tools."""
    steps = list(run.steps.order_by("index"))
    trajectory = []
    prompt = run.params.get("prompt") or {}
    history: list[dict[str, Any]] = []
    if prompt.get("system"):
        history.append({"role": "system", "content": prompt["system"], "agent": "primary_0"})
    if prompt.get("task"):
        history.append({"role": "user", "content": prompt["task"], "agent": "primary_0"})
    for step in steps:
        state = {k: v for k, v in step.state.items() if k in ("open_file", "working_dir")}
        trajectory.append(
            {
                "action": step.action,
                "observation": step.observation,
                "response": step.raw_response or f"{step.thought}```\n{step.action}```",
                "state": json.dumps(state),
                "thought": step.thought,
                "execution_time": step.execution_time,
            }
        )
        history.append(
            {
                "role": "assistant",
                "content": step.raw_response or f"{step.thought}```\n{step.action}```",
                "thought": step.thought,
                "action": step.action,
                "agent": "primary_0",
            }
        )
        history.append({"role": "user", "content": step.observation, "agent": "primary_0"})
    imported = run.params.get("import") or {}
    return {
        "environment": "referee" if run.source == Run.Source.REFEREE else "mlgym_main",
        "trajectory": trajectory,
        "history": history,
        "info": {
            "model_stats": {
                "total_cost": run.cost,
                "task_cost": run.cost,
                "tokens_sent": run.tokens_sent,
                "tokens_received": run.tokens_received,
                "api_calls": run.api_calls,
            },
            "exit_status": run.exit_status,
            "submission": imported.get("submission"),
            "score": [score.metrics for score in run.scores.filter(error="").order_by("created_at", "id")],
            "summarizer": {},
        },
    }


# -- many files ---------------------------------------------------------------------------------
def traj_files(paths: list[str]) -> list[Path]:
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files += sorted(path.rglob("*.traj"))
        elif path.exists():
            files.append(path)
        else:
            raise TrajImportError(path, "(path)", "no such file or folder")
    return files


def traj_import_paths(*, paths: list[str], owner: Any = None, stdout: Any, create_task: bool = False) -> dict[str, int]:
    """Import every file; a bad file is reported by name, line and field, the others still import."""
    files = traj_files(paths)
    group = None
    counts = {"imported": 0, "joined": 0, "existing": 0, "failed": 0}
    for file in files:
        try:
            with transaction.atomic():  # a file that fails leaves nothing, not even the group
                if group is None:
                    group, _ = RunGroup.objects.get_or_create(name="MLGym released trajectories", owner=owner)
                run, created = traj_import(file, owner=owner, group=group, create_task=create_task)
        except TrajImportError as exc:
            if group is not None and not RunGroup.objects.filter(pk=group.pk).exists():
                group = None  # rolled back with the file
            counts["failed"] += 1
            stdout.write(f"  ! {exc}")
            continue
        counts["imported" if created else "existing"] += 1
        if created:
            counts["joined"] += has_results(run)
            for issue in run.params.get("import_issues") or []:
                stdout.write(f"  ~ {issue}")
    joined = f" ({counts['joined']} joined runs first imported from results.json)" if counts["joined"] else ""
    stdout.write(
        f"  MLGym trajectories: {counts['imported']} imported{joined}, {counts['existing']} already present,"
        f" {counts['failed']} failed, of {len(files)}"
    )
    return counts
