"""The experiment stage with Referee's own agent in a real sandbox; model replies faked at the transport."""

from __future__ import annotations

import importlib.util

import pytest
from django.db import transaction

from benchmark.models import Artifact, ResearchRun, Run, Task
from benchmark.research.files import read_bytes
from benchmark.research.services import research_execute, research_launch

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.docker,
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("benchmark.agent") is None, reason="Referee's agent (benchmark.agent) is not installed"
    ),
]

# A 1x1 PNG written by the agent's own command: a real file made in the sandbox, read back after.
MAKE_FIGURE = (
    "mkdir -p figures && python3 -c \"import base64;open('figures/acc.png','wb').write(base64.b64decode("
    "'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='))\""
)
WRITE_RESULTS = (
    "printf '# Results\\n\\nBaseline 0.50, ours 0.61 (seed 0).\\n\\n![acc](figures/acc.png)\\n' > results.md"
)


def reply(thought: str, command: str) -> str:
    return f"DISCUSSION\n{thought}\n\n```\n{command}\n```"


def test_it_runs_the_experiment_agent_in_a_sandbox_and_keeps_its_trace(
    fake_llm, researcher, redis_client, settings, tmp_path
):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.RESEARCH_EXPERIMENT_AGENT = ""
    task = Task.objects.create(
        slug="iclr2025_tiny", version_hash="t" * 64, kind=Task.Kind.MLR, title="Tiny", description="# Tiny\n\nA tiny workshop.",
    )  # fmt: skip
    fake_llm.anthropic(reply("Read the proposal.", "cat proposal.md"), 1000, 50)
    fake_llm.anthropic(reply("Make the figure.", MAKE_FIGURE), 1100, 60)
    fake_llm.anthropic(reply("Write results.", WRITE_RESULTS), 1200, 70)
    fake_llm.anthropic(reply("Done.", "submit"), 1300, 20)
    with transaction.atomic():
        run = research_launch(
            owner=researcher, task=task, backbone="anthropic:claude-sonnet-4-5", stages=["experiment"],
            given={"idea": "# Idea", "literature": "Lit", "proposal": "# Proposal\n\nCompare with the baseline."},
        )  # fmt: skip
    research_execute(research_run_id=run.pk)
    run.refresh_from_db()
    experiment = run.artifacts.get(stage="experiment")
    assert run.status == ResearchRun.Status.FINISHED, experiment.error
    assert experiment.content.startswith("# Results") and "0.61" in experiment.content
    assert "figures/acc.png" in experiment.files
    assert read_bytes(experiment.code, "figures/acc.png").startswith(b"\x89PNG")
    # The full trace is the agent run's steps; the proposal was in the workspace.
    agent_run = experiment.experiment_run
    assert agent_run.status == Run.Status.FINISHED and agent_run.exit_status == "submitted"
    steps = list(agent_run.steps.order_by("index"))
    assert [s.action.strip() for s in steps][0] == "cat proposal.md"
    assert "Compare with the baseline." in steps[0].observation
    assert not agent_run.scores.exists()  # nothing is scored: there is no evaluator
    assert experiment.tokens_sent == 4600 and experiment.cost > 0
    assert "never fabricate" in fake_llm.calls[0]["body"]["messages"][0]["content"].lower()
    assert Artifact.objects.filter(research_run=run).count() == 4
