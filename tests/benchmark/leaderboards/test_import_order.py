"""MLGym's released runs imported in any order: results.json first, .traj first, or both from one
folder (as `make up` does); each gives the same runs, and importing again changes nothing.

The .traj-first and results-first orders need the two kinds of files apart: the results.json files
are linked into a tree of their own (a results import there finds no .traj), the .traj files are
read where they lie."""

from __future__ import annotations

import hashlib
import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from benchmark.leaderboards.mlgym_results import PUBLISHED_MODELS
from benchmark.leaderboards.published import PUBLISHED_AUP, PUBLISHED_TAU_MAX
from benchmark.models import AgentConfig, Run, RunGroup, Step, Task
from tests.benchmark.leaderboards.test_aup_command import mlgym_results_dir, needs_mlgym_results
from tests.benchmark.leaderboards.test_pages import download


def results_only(tmp_path: Path) -> Path:
    """The released results.json files, linked into run folders that hold nothing else."""
    root = tmp_path / "results-only" / "mlgym_bench_v0"
    for path in mlgym_results_dir().glob("*/results.json"):
        folder = root / path.parent.name
        folder.mkdir(parents=True)
        (folder / "results.json").symlink_to(path)
    return root


def released_steps() -> tuple[int, int, int]:
    """(.traj files, steps in them, files that state an exit status) in the release, from the files."""
    data = [json.loads(f.read_bytes()) for f in sorted(mlgym_results_dir().glob("*/*.traj"))]
    return len(data), sum(len(d["trajectory"]) for d in data), sum(bool(d["info"].get("exit_status")) for d in data)


def snapshot() -> dict[str, tuple]:
    """Every released run as the pages read it: what it is, its numbers, scores and steps."""
    state = {}
    for run in Run.objects.filter(source=Run.Source.MLGYM).select_related("task", "agent"):
        scores = [
            (s.kind, s.primary, s.error, s.step.index if s.step_id else None, json.dumps(s.metrics, sort_keys=True))
            for s in run.scores.select_related("step").order_by("id")
        ]
        steps = hashlib.sha256(
            json.dumps(list(run.steps.order_by("index").values_list("index", "action", "observation"))).encode()
        ).hexdigest()
        state[run.params["mlgym_folder"]] = (
            run.method,
            run.task.slug,
            (run.agent.name, run.agent.model, run.agent.temperature, run.agent.top_p, run.agent.cost_limit),
            (run.status, run.exit_status, run.best_attempt, run.best_submission),
            (run.step_count, run.tokens_sent, run.tokens_received, run.api_calls, run.cost),
            json.dumps(run.params, sort_keys=True),
            scores,
            steps,
        )
    return state


def results_import(directory: Path) -> str:
    out = StringIO()
    call_command("import_mlgym_results", str(directory), stdout=out, stderr=StringIO())
    return out.getvalue()


def traj_import() -> str:
    out = StringIO()
    call_command("import_mlgym_traj", str(mlgym_results_dir()), stdout=out)
    return out.getvalue()


def wipe() -> None:
    Run.objects.all().delete()
    for model in (Task, AgentConfig, RunGroup):
        model.objects.all().delete()


def published_figures(client) -> tuple[float, dict[str, tuple[float, float]]]:
    data = json.loads(client.get(download("json"), {"methods": list(PUBLISHED_MODELS)}).content)
    aup = {m: (round(v["best_attempt"], 3), round(v["best_submission"], 3)) for m, v in data["aup"].items()}
    return data["tau_max"], aup


@needs_mlgym_results
@pytest.mark.django_db
def test_it_gives_the_same_runs_whichever_importer_runs_first(tmp_path, client_for, researcher):
    files, steps, exits = released_steps()
    published = (PUBLISHED_TAU_MAX, {m: (r.best_attempt, r.best_submission) for m, r in PUBLISHED_AUP.items()})
    client = client_for(researcher)

    # results.json first, then the .traj files: the trajectories join the runs
    assert results_import(results_only(tmp_path)).startswith("imported 676 runs")
    assert Step.objects.count() == 0
    assert f"{files} imported ({files} joined runs first imported from results.json)" in traj_import()
    first = snapshot()
    assert len(first) == 676 and Step.objects.count() == steps
    with_steps = Run.objects.filter(step_count__gt=0)
    assert with_steps.count() == files and with_steps.filter(cost__gt=0).count() == files
    assert with_steps.exclude(exit_status="").count() == exits
    assert published_figures(client) == published
    # again, either of them: nothing changes
    assert f"0 imported, {files} already present" in traj_import()
    assert "skipped 676 already imported" in results_import(results_only(tmp_path / "again"))
    assert snapshot() == first

    # the .traj files first, then results.json: the runs get the release's scores and baselines
    wipe()
    assert f"{files} imported, 0 already present" in traj_import()
    assert Run.objects.count() == files
    out = results_import(results_only(tmp_path / "second"))
    assert out.startswith(f"imported {676 - files} runs") and f"completed {files} runs" in out
    assert snapshot() == first
    assert published_figures(client) == published

    # both from the release's own folders, as `make up` imports them (results.json, then .traj)
    wipe()
    assert f"attached {files} trajectories ({steps} steps)" in results_import(mlgym_results_dir())
    assert f"0 imported, {files} already present" in traj_import()
    assert snapshot() == first
