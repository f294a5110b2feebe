"""MLGym's own tasks end to end as runs: the starter-code agent and an LLM agent (HTTP faked at the
transport) in a real sandbox, scored by the isolated evaluator."""

from __future__ import annotations

import pytest

from benchmark.models import AgentConfig, Run
from benchmark.runs.services import run_execute
from tests.benchmark.runs_support import agent, make_run
from tests.benchmark.tasks.mlgym_fixtures import build_dir, docker, mlgym, needs_mlgym

__all__ = ["build_dir", "docker", "mlgym"]  # fixtures, imported for pytest

pytestmark = [needs_mlgym, pytest.mark.django_db(transaction=True), pytest.mark.docker, pytest.mark.slow]


def finish(run: Run) -> Run:
    run_execute(run_id=run.pk)
    run.refresh_from_db()
    return run


def test_it_runs_the_starter_code_agent_on_mlgyms_house_prices(researcher, mlgym, docker, redis_client):
    task = mlgym("regressionKaggleHousePrice")
    run = finish(make_run(owner=researcher, task=task, agent_config=agent(AgentConfig.Kind.BASELINE)))
    assert (run.status, run.exit_status) == (Run.Status.FINISHED, "submitted"), run.error
    assert run.best_submission == pytest.approx(0.8799891474739243, rel=1e-9)
    assert [step.action.strip() for step in run.steps.order_by("index")] == [
        "python3 baseline.py",
        "validate",
        "submit",
    ]


def test_it_runs_an_llm_agent_on_mlgyms_battle_of_sexes(researcher, mlgym, docker, fake_llm, redis_client):
    task = mlgym("battleOfSexes")
    write = "printf 'def row_strategy(history):\\n    return 0\\n' > strategy.py"
    for thought, command in [("Always play 0.", write), ("Score it.", "validate"), ("Done.", "submit")]:
        fake_llm.anthropic(f"DISCUSSION\n{thought}\n\n```\n{command}\n```")
    run = finish(make_run(owner=researcher, task=task, agent_config=agent(AgentConfig.Kind.MODEL, model="anthropic:t")))
    assert (run.status, run.exit_status) == (Run.Status.FINISHED, "submitted"), run.error
    first = fake_llm.calls[0]["body"]["messages"][0]["content"]
    assert "Battle of the" in first and "(Referee) Scoring never reads" in first
    # Against MLGym's target.py, always 0 earns 0 in round one, then 2 with probability 0.8: 1.44.
    assert run.best_submission == pytest.approx(1.44, abs=0.03)
