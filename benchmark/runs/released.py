"""MLGym's released runs: one `Run` per MLGym run folder, whichever of its files is imported first.

A released run has two files: `results.json` (every validation's metrics, the last one the
submission, and the baseline's; `import_mlgym_results`, benchmark.leaderboards.imports) and,
for some runs, `<task>.traj` (steps, cost, tokens, exit status; `import_mlgym_traj`,
benchmark.runs.trajectories). Each importer owns its part of the run and only fills that part:

* results.json: the scores (`Score` rows, best attempt / best submission, MLGym's semantics: the
  last score is the submission) and the baseline (`params["mlgym_baseline"]`);
* .traj: the steps, step count, tokens, API calls, cost, exit status and prompt.

Both name the run's task, agent and method through the functions below, so the run is the same
whichever importer created it: importing A then B and B then A give the same run, and importing
either again changes nothing. A .traj without a results.json keeps the scores its `info.score`
gives until a results.json replaces them.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from django.conf import settings

from benchmark.leaderboards.mlgym_results import MLGYM_TASKS, parse_run_folder
from benchmark.models import AgentConfig, Run, Score, Step, Task

# MLGym keeps the priority metric and its direction in code; the released README lists them.
MLGYM_METRICS: dict[str, tuple[str, str]] = {
    slug: (spec.metric, spec.direction.value) for slug, spec in MLGYM_TASKS.items()
}
# The four numbers a .traj reports about its run; a run imported from results.json alone lacks them.
TRAJ_NUMBERS = ("api_calls", "cost", "tokens_received", "tokens_sent")


def folder_meta(folder: str, *, fallback_task: str = "") -> dict[str, Any]:
    """What an MLGym run folder's name says: model field, method, task, agent config, temperature,
    top_p, cost limit and run index (MLGym's own format, benchmark.leaderboards.mlgym_results);
    a name that is not one gives model "unknown" and `fallback_task`."""
    try:
        parsed = parse_run_folder(folder)
    except ValueError:
        return {"model": "unknown", "method": "unknown", "task": fallback_task, "released": False}
    return {
        "model": parsed.method,
        "method": parsed.method,
        "model_field": parsed.model,
        "task": parsed.task,
        "agent_config": parsed.agent_config,
        "temperature": parsed.temperature,
        "top_p": parsed.top_p,
        "cost_limit": parsed.cost_limit,
        "run_set": parsed.run_set,
        "run_index": parsed.run_index,
        "released": True,
    }


def released_run(folder: str | None, *, import_key: str = "") -> Run | None:
    """The run already imported for this MLGym run folder (or, for a file outside one, this file)."""
    runs = Run.objects.filter(source=Run.Source.MLGYM)
    if folder:
        run = runs.filter(params__mlgym_folder=folder).order_by("pk").first()
        if run is not None:
            return run
    return runs.filter(params__import_key=import_key).order_by("pk").first() if import_key else None


def has_trajectory(run: Run) -> bool:
    """Whether the run's steps are in: from a .traj (import_key), or steps an older import stored."""
    return bool((run.params or {}).get("import_key")) or run.step_count > 0


def has_results(run: Run) -> bool:
    """Whether a results.json gave the run its scores and baseline."""
    return bool((run.params or {}).get("results_imported"))


def mlgym_agent(meta: dict[str, Any], cache: dict[tuple, AgentConfig] | None = None) -> AgentConfig:
    """The agent config of a released run: its model and the settings its folder name states."""
    method = meta.get("method") or meta.get("model") or "unknown"
    agent_config = str(meta.get("agent_config") or "")
    key = (method, meta.get("temperature", 0.0), meta.get("top_p", 0.95), meta.get("cost_limit", 4.0), agent_config)
    if cache is not None and key in cache:
        return cache[key]
    name = f"{method} ({agent_config}, MLGym)" if agent_config else f"{method} (MLGym)"
    agent, _ = AgentConfig.objects.get_or_create(
        name=name,
        kind=AgentConfig.Kind.MODEL,
        model=f"mlgym:{meta.get('model_field') or method}",
        temperature=key[1],
        top_p=key[2],
        cost_limit=key[3],
        defaults={"extra": {"source": "mlgym", "agent_config": agent_config}},
    )
    if cache is not None:
        cache[key] = agent
    return agent


def known_task(slug: str, *, mlgym_dir: Path | str | None = None) -> bool:
    """A Task that exists, an MLGym config in the checkout, or one of MLGym-Bench's task ids."""
    if slug in MLGYM_TASKS or Task.objects.filter(slug=slug, is_current=True).exists():
        return True
    root = mlgym_dir or settings.MLGYM_DIR
    return bool(root) and Path(root, "configs", "tasks", f"{slug}.yaml").is_file()


def mlgym_task(slug: str, *, mlgym_dir: Path | str | None = None) -> Task:
    """The current task for an MLGym id: loaded by the tasks loader from the checkout's config when
    it has one (the task MLGym's own runs ran on), else a listed stub with MLGym's metric."""
    task = Task.objects.filter(slug=slug, is_current=True).first()
    if task is not None:
        return task
    root = Path(mlgym_dir or settings.MLGYM_DIR or "")
    config = root / "configs" / "tasks" / f"{slug}.yaml"
    if str(root) not in ("", ".") and config.is_file():
        from benchmark.tasks.loader import task_sync_spec
        from benchmark.tasks.mlgym import mlgym_task_load
        from benchmark.tasks.spec import TaskFormatError

        try:
            loaded = task_sync_spec(mlgym_task_load(config, mlgym_dir=root))
        except TaskFormatError:
            loaded = None  # the config is broken: the run still lands, on a stub
        if loaded is not None and loaded.slug == slug:
            return loaded
    metric, direction = MLGYM_METRICS.get(slug, ("", "max"))
    task, _ = Task.objects.get_or_create(
        slug=slug,
        version_hash=hashlib.sha256(f"mlgym-stub:{slug}".encode()).hexdigest(),
        defaults={
            "kind": Task.Kind.MLGYM,
            "title": slug,
            "metric": metric,
            "direction": direction,
            "source": "mlgym",
            "data_status": Task.DataStatus.MISSING,
            "data_detail": "imported with MLGym's released runs; the task's files are not on this machine",
        },
    )
    return task


def scores_link(run: Run) -> None:
    """Attach each of the run's scores to the step that produced it: validations to the validate
    steps that printed a score, in order; the submission to the last submit step. Run after
    either importer, so scores and steps meet whichever came first."""
    steps = list(Step.objects.filter(run=run).order_by("index").only("id", "action", "observation"))
    if not steps:
        return
    validate_steps = [s for s in steps if s.action.strip() == "validate" and "Evaluation Score" in s.observation]
    submit_steps = [s for s in steps if s.action.strip() == "submit"]
    changed = []
    validations = 0
    for score in Score.objects.filter(run=run).order_by("id"):
        if score.kind == Score.Kind.SUBMIT:
            step = submit_steps[-1] if submit_steps else None
        else:
            step = validate_steps[validations] if validations < len(validate_steps) else None
            validations += 1
        if score.step_id != (step.pk if step else None):
            score.step = step
            changed.append(score)
    Score.objects.bulk_update(changed, ["step"], batch_size=500)
