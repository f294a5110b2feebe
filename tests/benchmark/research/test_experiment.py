"""The experiment stage with Referee's own agent in a real sandbox; model replies faked at the transport."""

from __future__ import annotations

import importlib.util

import pytest
from django.db import transaction

from benchmark.llm.transport import override_transport
from benchmark.models import Artifact, ResearchRun, Run, Task
from benchmark.research.files import read_bytes
from benchmark.research.services import research_execute, research_launch
from tests.benchmark.runs.conftest import redis_control  # noqa: F401 (fixture: this session's Redis may be killed)
from tests.benchmark.runs.faults_support import RedisKiller
from tests.redis_plugin import session_redis_start

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


@pytest.mark.usefixtures("redis_control")
def test_it_interrupts_the_experiment_stage_when_redis_stays_away_past_the_limit(
    fake_llm, researcher, settings, tmp_path, client_for
):
    """The runs' own outage limit (LiveChannelDown) stops the stage: interrupted, never failed."""
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.RESEARCH_EXPERIMENT_AGENT = ""
    settings.RUN_REDIS_OUTAGE_LIMIT = 1.0
    task = Task.objects.create(
        slug="iclr2025_tiny", version_hash="t" * 64, kind=Task.Kind.MLR, title="Tiny", description="# Tiny",
    )  # fmt: skip
    fake_llm.anthropic(reply("Read the proposal.", "cat proposal.md"), 1000, 50)
    fake_llm.anthropic(reply("Make the figure.", MAKE_FIGURE), 1100, 60)
    with transaction.atomic():
        run = research_launch(
            owner=researcher, task=task, backbone="anthropic:claude-sonnet-4-5", stages=["experiment", "paper"],
            given={"idea": "# Idea", "literature": "Lit", "proposal": "# Proposal"},
        )  # fmt: skip
    with override_transport(RedisKiller(fake_llm, at=2)):  # Redis dies after the agent's 2nd model call
        research_execute(research_run_id=run.pk)
    run.refresh_from_db()
    experiment = run.artifacts.get(stage="experiment")
    assert (run.status, experiment.status) == (ResearchRun.Status.INTERRUPTED, Artifact.Status.INTERRUPTED)
    assert run.error.startswith("Experiment interrupted: Redis (the job queue and live updates) was unreachable")
    assert "ConnectionError" not in run.error and "Resume runs the stage again" in run.error
    agent_run = experiment.experiment_run
    assert (agent_run.status, agent_run.exit_status) == (Run.Status.INTERRUPTED, "interrupted")
    assert agent_run.steps.count() == 2  # step 2 was committed before its push gave up
    assert not run.artifacts.filter(stage="paper").exists()  # the next stage never started
    session_redis_start()
    page = client_for(researcher).get(f"/research/{run.code}/").content.decode()
    assert "Interrupted: Redis (the job queue and live updates) was unreachable for more than 1 s" in page
    assert "Resume from the first stage not done" in page
