"""Read MLGym's released results (`<run folder>/results.json`) into scoring inputs.

A run folder is named `<model>__<task>__<agent config>__t-<temp>__p-<top_p>__c-<cost>__
install-<n>__parallel_agents_run_<i>`; the method is the model field without `metagen-`.
The priority metric and its direction live in MLGym's code, not its YAML; they are copied
here from ../shared/mlgym/README.md. No Django: the `aup` command, the importer and the
benchmark all use this module.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmark.leaderboards.scoring import (
    BASELINE,
    Direction,
    Issue,
    Leaderboard,
    MethodTaskScore,
    RunScore,
    Scoring,
    clean_value,
    leaderboard,
    method_task_score,
    run_score,
)


@dataclass(frozen=True)
class TaskSpec:
    metric: str
    direction: Direction


MLGYM_TASKS: dict[str, TaskSpec] = {
    "regressionKaggleHousePrice": TaskSpec("r2", Direction.MAX),
    "3SATTime": TaskSpec("Time", Direction.MIN),
    "imageClassificationCifar10": TaskSpec("accuracy", Direction.MAX),
    "imageClassificationFMnist": TaskSpec("accuracy", Direction.MAX),
    "imageCaptioningCOCO": TaskSpec("BLEU Score", Direction.MAX),
    "languageModelingFineWeb": TaskSpec("val_loss", Direction.MIN),
    "naturalLanguageInferenceMNLI": TaskSpec("validation_accuracy", Direction.MAX),
    "battleOfSexes": TaskSpec("Score", Direction.MAX),
    "prisonersDilemma": TaskSpec("Score", Direction.MAX),
    "blotto": TaskSpec("Score", Direction.MAX),
    "rlBreakoutMinAtar": TaskSpec("Reward Mean", Direction.MAX),
    "rlMetaMazeMisc": TaskSpec("Reward Mean", Direction.MAX),
    "rlMountainCarContinuous": TaskSpec("Reward Mean", Direction.MAX),
}

# The 12 models of MLGym's published leaderboard (the data also holds gemini-20-pro).
PUBLISHED_MODELS: tuple[str, ...] = (
    "gpt4o2",
    "gpt-o3-mini",
    "gpt-o1",
    "deepseek-r1",
    "llama3-405b-tools",
    "llama4-17b-16",
    "llama4-17b-128",
    "claude-35-sonnet-new",
    "claude-37-sonnet",
    "gemini-15-pro",
    "gemini-20-flash-thinking",
    "gemini-25-pro",
)

_NUMBER = re.compile(r"^(t|p|c)-(\d+(?:\.\d+)?)$")
_RUN = re.compile(r"^(?P<run_set>.+?)_(?P<index>\d+)$")
_FOLDER_SHAPE = "<model>__<task>__<agent config>__t-<temp>__p-<top_p>__c-<cost>__install-<n>__<run set>_<i>"


@dataclass(frozen=True)
class RunFolder:
    name: str
    model: str
    method: str
    task: str
    agent_config: str
    temperature: float
    top_p: float
    cost_limit: float
    run_set: str
    run_index: int


def parse_run_folder(name: str) -> RunFolder:
    """Split a run folder name; ValueError names the folder and the part that does not fit."""
    parts = name.split("__")
    if len(parts) < 8:
        raise ValueError(f"run folder {name!r} does not look like {_FOLDER_SHAPE}")
    model, task = parts[0], parts[1]
    agent_config = "__".join(parts[2:-5])
    numbers: dict[str, float] = {}
    for part, key in zip(parts[-5:-2], ("t", "p", "c"), strict=True):
        match = _NUMBER.match(part)
        if not match or match.group(1) != key:
            raise ValueError(f"run folder {name!r}: expected {key}-<number>, got {part!r}")
        numbers[key] = float(match.group(2))
    if not parts[-2].startswith("install-"):
        raise ValueError(f"run folder {name!r}: expected install-<n>, got {parts[-2]!r}")
    run = _RUN.match(parts[-1])
    if not run:
        raise ValueError(f"run folder {name!r}: expected <run set>_<i>, got {parts[-1]!r}")
    if not model or not task or not agent_config:
        raise ValueError(f"run folder {name!r} does not look like {_FOLDER_SHAPE}")
    return RunFolder(
        name=name,
        model=model,
        method=model.removeprefix("metagen-"),
        task=task,
        agent_config=agent_config,
        temperature=numbers["t"],
        top_p=numbers["p"],
        cost_limit=numbers["c"],
        run_set=run.group("run_set"),
        run_index=int(run.group("index")),
    )


@dataclass
class RunResult:
    folder: RunFolder
    path: Path
    agent: list[Any]  # raw metric dicts, validations then the submission
    baseline: dict[str, Any]
    score: RunScore


@dataclass
class ResultsSet:
    runs: list[RunResult]
    baselines: dict[str, float]  # task -> baseline priority-metric value
    issues: list[Issue] = field(default_factory=list)

    @property
    def methods(self) -> list[str]:
        return sorted({r.folder.method for r in self.runs})

    @property
    def tasks(self) -> list[str]:
        return [t for t in MLGYM_TASKS if any(r.folder.task == t for r in self.runs)]


def _load_json(path: Path) -> tuple[Any, Issue | None]:
    try:
        with path.open("rb") as handle:
            return json.load(handle), None
    except (
        OSError,
        ValueError,
    ) as error:  # JSONDecodeError and UnicodeDecodeError are ValueError
        return None, Issue(str(path), "file", f"unreadable: {error}")


def read_results_dir(
    root: str | Path,
    *,
    models: Sequence[str] | None = None,
    tasks: dict[str, TaskSpec] | None = None,
) -> ResultsSet:
    """Every `results.json` under `root` (one level of run folders, or deeper).

    Problems (bad folder names, unknown tasks, unreadable JSON, missing or non-numeric
    metrics) are collected as issues; everything valid is kept.
    """
    root = Path(root)
    task_specs = tasks or MLGYM_TASKS
    wanted = set(models) if models is not None else None
    issues: list[Issue] = []
    if not root.is_dir():
        return ResultsSet([], {}, [Issue(str(root), "path", "not a directory")])
    runs: list[RunResult] = []
    baseline_values: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for path in sorted(root.rglob("results.json")):
        name = path.parent.name
        try:
            folder = parse_run_folder(name)
        except ValueError as error:
            issues.append(Issue(str(path), "folder", str(error)))
            continue
        if wanted is not None and folder.method not in wanted:
            continue
        spec = task_specs.get(folder.task)
        if spec is None:
            issues.append(Issue(name, "task", f"unknown task {folder.task!r}"))
            continue
        data, issue = _load_json(path)
        if issue:
            issues.append(issue)
            continue
        if not isinstance(data, dict):
            issues.append(Issue(name, "results.json", "expected an object with 'agent', 'baseline'"))
            continue
        baseline_raw = data.get("baseline")
        baseline: float | None = None
        if isinstance(baseline_raw, dict) and spec.metric in baseline_raw:
            baseline, problem = clean_value(baseline_raw[spec.metric], source=f"{name} baseline", metric=spec.metric)
            if problem:
                issues.append(problem)
            elif baseline is not None:
                baseline_values[folder.task].append((baseline, name))
        elif baseline_raw is not None:
            issues.append(Issue(name, "baseline", f"no {spec.metric!r} in baseline"))
        agent = data.get("agent", [])
        score = run_score(
            agent,
            metric=spec.metric,
            direction=spec.direction,
            source=name,
            baseline=baseline,
        )
        issues.extend(score.issues)
        runs.append(
            RunResult(
                folder=folder,
                path=path,
                agent=agent if isinstance(agent, list) else [],
                baseline=baseline_raw if isinstance(baseline_raw, dict) else {},
                score=score,
            )
        )
    baselines: dict[str, float] = {}
    for task, values in baseline_values.items():
        value, problem = first_baseline([(name, v) for v, name in values], task=task)
        if value is not None:
            baselines[task] = value
        if problem:
            issues.append(problem)
    return ResultsSet(runs, baselines, issues)


def first_baseline(values: Sequence[tuple[str, float | None]], *, task: str) -> tuple[float | None, Issue | None]:
    """A task's baseline as MLGym reads it from `(run folder, baseline)` pairs in folder order: the
    first folder's that has one. All agree in the release; the issue says so when they do not. The
    leaderboard page reads the baselines its imported runs store the same way (board.py)."""
    usable = [(name, v) for name, v in values if v is not None]
    if not usable:
        return None, None
    first = usable[0][1]
    counts = Counter(v for _, v in usable)
    if len(counts) > 1:
        return first, Issue(task, "baseline", f"runs disagree on the baseline: {sorted(counts)}; using {first}")
    return first, None


def baseline_cell(task: str, value: float | None) -> MethodTaskScore:
    return MethodTaskScore(BASELINE, task, 0, 0, value, value, value, None, value, None)


def results_leaderboard(results: ResultsSet, *, models: Sequence[str] | None = None) -> Leaderboard:
    """MLGym's AUP over `models` (default: every method found) plus the baseline."""
    methods = list(models) if models is not None else results.methods
    missing = [m for m in methods if all(r.folder.method != m for r in results.runs)]
    tasks = [t for t in MLGYM_TASKS if any(r.folder.task == t for r in results.runs)]
    by_cell: dict[tuple[str, str], list[RunScore]] = defaultdict(list)
    for run in results.runs:
        by_cell[(run.folder.method, run.folder.task)].append(run.score)
    cells = {
        (m, t): method_task_score(method=m, task=t, runs=scores, direction=MLGYM_TASKS[t].direction)
        for (m, t), scores in by_cell.items()
    }
    for t in tasks:
        cells[(BASELINE, t)] = baseline_cell(t, results.baselines.get(t))
    board = leaderboard(
        cells=cells,
        methods=[*methods, BASELINE],
        tasks=tasks,
        directions={t: MLGYM_TASKS[t].direction for t in tasks},
        baselines=results.baselines,
    )
    board.issues[:0] = [
        *results.issues,
        *(Issue("results", m, "no runs for this method") for m in missing),
    ]
    return board


def aup_report(board: Leaderboard, *, results_dir: str) -> dict[str, Any]:
    """What `manage.py aup --format json` prints: AUP per method and scoring, tau_max, issues."""
    return {
        "results": results_dir,
        "methods": board.methods,
        "tasks": board.tasks,
        "tau_max": board.tau_max,
        "aup": {m: {s.value: board.results[s].aup[m] for s in Scoring} for m in board.methods},
        "issues": [str(i) for i in board.issues],
    }


# MLGym's action families (its analysis plots Edit, View, Validate, Submit, Search, Python, Bash).
ACTION_FAMILIES: dict[str, str] = {
    "edit": "edit",
    "insert": "edit",
    "create": "edit",
    "append": "edit",
    "open": "view",
    "goto": "view",
    "scroll_up": "view",
    "scroll_down": "view",
    "validate": "validate",
    "submit": "submit",
    "search_dir": "search",
    "search_file": "search",
    "find_file": "search",
    "literature_search": "search",
    "parse_pdf_url": "search",
    "python": "python",
    "python3": "python",
    "torchrun": "python",
    "accelerate": "python",
}
ACTION_ORDER = ("edit", "view", "validate", "submit", "search", "python", "bash")


def action_family(action: str) -> str:
    """The family of one agent action; anything unrecognised is a shell command."""
    words = action.strip().split(maxsplit=1)
    return ACTION_FAMILIES.get(words[0], "bash") if words else "bash"


@dataclass
class TrajectorySummary:
    path: Path
    exit_status: str
    steps: int
    actions: Counter[str]
    cost: float | None
    tokens_sent: int | None
    tokens_received: int | None
    api_calls: int | None


def read_trajectory(path: Path) -> tuple[TrajectorySummary | None, list[Issue]]:
    """Exit status, action families, cost and tokens of one `<task>.traj` file."""
    data, issue = _load_json(path)
    if issue:
        return None, [issue]
    issues: list[Issue] = []
    if not isinstance(data, dict):
        return None, [Issue(str(path), "traj", "expected an object")]
    steps = data.get("trajectory") if isinstance(data.get("trajectory"), list) else []
    if "trajectory" not in data:
        issues.append(Issue(str(path), "trajectory", "missing"))
    info = data.get("info") if isinstance(data.get("info"), dict) else {}
    stats = info.get("model_stats") if isinstance(info.get("model_stats"), dict) else {}

    def number(key: str) -> float | None:
        value = stats.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
            return value
        issues.append(Issue(str(path), f"model_stats.{key}", "missing or not a number"))
        return None

    actions: Counter[str] = Counter(action_family(step.get("action", "")) for step in steps if isinstance(step, dict))
    exit_status = info.get("exit_status") or "unknown"
    cost, sent, received, calls = (
        number("total_cost"),
        number("tokens_sent"),
        number("tokens_received"),
        number("api_calls"),
    )
    return (
        TrajectorySummary(
            path=path,
            exit_status=str(exit_status),
            steps=len(steps),
            actions=actions,
            cost=cost,
            tokens_sent=int(sent) if sent is not None else None,
            tokens_received=int(received) if received is not None else None,
            api_calls=int(calls) if calls is not None else None,
        ),
        issues,
    )


def read_trajectories(results: ResultsSet) -> tuple[dict[str, TrajectorySummary], list[Issue]]:
    """The `.traj` next to each run's results.json, by run folder name (only some runs have one)."""
    found: dict[str, TrajectorySummary] = {}
    issues: list[Issue] = []
    for run in results.runs:
        for path in sorted(run.path.parent.glob("*.traj")):
            summary, problems = read_trajectory(path)
            issues.extend(problems)
            if summary is not None:
                found[run.folder.name] = summary
    return found, issues
