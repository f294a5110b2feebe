"""Trajectory items for review tests: a finished agent run with steps and scores, and its campaign."""

from __future__ import annotations

import itertools

from accounts.roles import RESEARCHER
from accounts.services import user_create
from benchmark.models import AgentConfig, ModelEndpoint, Run, Score, Step, Task
from judge.models import Rubric
from judge.rubrics import rubric_load_defaults
from review.assignment.services import campaign_assign
from review.campaigns.services import campaign_create
from review.models import TRAJECTORY, Campaign

_seq = itertools.count(1)


def trajectory_rubric() -> Rubric:
    rubric_load_defaults()
    return Rubric.objects.get(stage=Rubric.Stage.TRAJECTORY, version=1)


def make_run(
    *, model: str = "anthropic:claude-sonnet-4-5", agent_name: str = "ClaudeCoder", owner=None, steps: int = 3
) -> Run:
    """A finished run whose steps name its own model, code, owner, endpoint and import folder and file,
    and record a cost: all must be blinded (see `run_tells`)."""
    n = next(_seq)
    if owner is None:
        owner = user_create(username=f"rita.owner{n}", role=RESEARCHER)
    task, _ = Task.objects.get_or_create(
        slug=f"battle_task{n}", is_current=True,
        defaults={"version_hash": f"t{n}", "kind": Task.Kind.MLGYM, "title": f"Battle of the sexes {n}",
                  "description": "Write a strategy.", "metric": "Score"},
    )  # fmt: skip
    endpoint = ModelEndpoint.objects.create(
        name=f"ritas-gpu-box{n}", scope=ModelEndpoint.Scope.PERSONAL, owner=owner,
        provider=ModelEndpoint.Provider.COMPAT, base_url="http://gpu-box:8000/v1",
    )  # fmt: skip
    agent = AgentConfig.objects.create(name=agent_name, model=model, endpoint=endpoint)
    folder, file = f"uploads-ritabatch{n}", f"battle{n}-seed7.traj"
    params = {"import_key": f"ritakey{n}-9f3ac2", "import": {"folder": folder, "file": file}}
    run = Run.objects.create(
        task=task, agent=agent, owner=owner, method=model, status=Run.Status.FINISHED, step_count=steps, cost=1.2345,
        params=params,
    )  # fmt: skip
    where = f"saved by {owner.get_username()} to /data/imports/{folder}/{file} via {endpoint.name}"
    for i in range(1, steps + 1):
        step = Step.objects.create(
            run=run,
            index=i,
            thought=f"Step {i}: as {model.split(':')[-1]} I will edit strategy.py (run {run.code}).",
            action=f"edit strategy.py {i}" if i < steps else "validate",
            observation=f'output {i}\n{where}\n{{"total_cost": 0.{i}77}}',
            cost=0.5,
            tokens_sent=1000 + i,
        )
        if i == steps:
            Score.objects.create(run=run, step=step, kind=Score.Kind.VALIDATE, metrics={"Score": 1.25}, primary=1.25)
    return run


def run_tells(run: Run) -> list[str]:
    """What points at the run rather than its work: a reviewer must never see any of these."""
    imported = run.params["import"]
    tells = [str(run.code), str(run.agent.code), run.agent.name, run.agent.model, run.agent.endpoint.name]
    return [*tells, run.owner.get_username(), imported["folder"], imported["file"], run.params["import_key"]]


def trajectory_campaign(reviewers, runs=None, name: str = "traj", k: int = 1) -> Campaign:
    runs = runs if runs is not None else [make_run()]
    campaign = campaign_create(
        name=name, rubric=trajectory_rubric(), stage=TRAJECTORY, artifacts=[], runs=runs,
        reviewers=list(reviewers), reviewers_per_item=k,
    )  # fmt: skip
    campaign_assign(campaign=campaign)
    return campaign


def full_trajectory_post(value: int = 6, confidence: int = 3) -> dict[str, str]:
    data = {"confidence": str(confidence)}
    for dim in trajectory_rubric().score_dimensions:
        data[f"score_{dim['key']}"] = str(value)
        data[f"just_{dim['key']}"] = f"Because {dim['key']} is as it is."
    return data
