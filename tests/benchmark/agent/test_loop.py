"""The agent's tool set in a real Docker sandbox, and a real `baseline` run end to end."""

from __future__ import annotations

import pytest

from benchmark.agent.environment import Environment
from benchmark.agent.loop import submission_status
from benchmark.agent.memory import Memory
from benchmark.agent.parsing import FormatError, parse_reply
from benchmark.models import Run, Score
from benchmark.tasks.evaluation import ScoreResult
from tests.benchmark.runs_support import builtin_task, make_run

pytestmark = pytest.mark.django_db(transaction=True)


def test_it_parses_one_discussion_and_one_command():
    parsed = parse_reply("DISCUSSION\nLook around first.\n\n```\nls -a\n```")
    assert parsed.thought.strip() == "DISCUSSION\nLook around first."
    assert parsed.action == "ls -a\n"


def test_it_rejects_replies_without_or_with_two_commands():
    with pytest.raises(FormatError, match="no command block"):
        parse_reply("I will just think.")
    with pytest.raises(FormatError, match="2 command blocks"):
        parse_reply("```\nls\n```\nthen\n```\npwd\n```")


def test_it_keeps_fences_inside_an_edit_body():
    reply = "DISCUSSION\nfix readme\n```\nedit 1:1\n# Title\n```\ncode\n```\nend_of_edit\n```"
    parsed = parse_reply(reply)
    assert parsed.action.startswith("edit 1:1\n# Title\n```\ncode\n```\nend_of_edit")


def test_it_retrieves_memory_notes_by_relevance():
    memory = Memory()
    memory.write("learning rate 0.1 diverged on cifar")
    memory.write("tit for tat scores 2.4 against the mixed opponents")
    memory.write("random forest with 200 trees reached r2 0.45")
    assert memory.read("which strategy beat the opponents")[0][1].startswith("tit for tat")
    assert memory.read("zebra") == []


def test_it_names_exit_statuses_in_mlgym_vocabulary():
    ok = ScoreResult(split="test", metrics={"Score": 1.0}, primary=1.0)
    missing = ScoreResult(split="test", error="submission file strategy.py not found")
    broken = ScoreResult(split="test", error="Traceback: ValueError")
    assert submission_status(ok, "submit") == "submitted"
    assert submission_status(ok, "max_steps") == "autosubmission (max_steps)"
    assert submission_status(ok, "exit_cost") == "autosubmission (exit_cost)"
    assert submission_status(missing, "max_steps") == "submission_not_found (max_steps)"
    assert submission_status(broken, "submit") == "evaluation_format_error (submit)"
    assert submission_status(ok, "exit_format") == "exit_format"
    assert submission_status(broken, "exit_cost") == "exit_cost"


@pytest.fixture(scope="module")
def sandbox_session(docker_available):
    from sandbox import SandboxSpec, open_session

    session = open_session(SandboxSpec(workdir="/workspace"))
    yield session
    session.close()


@pytest.fixture
def env(sandbox_session):
    sandbox_session.run("rm -rf /workspace/* && cd /workspace")
    sandbox_session.put_file("/workspace/model.py", b"import os\n\n\ndef f(x):\n    return x + 1\n")
    sandbox_session.put_file("/workspace/sub/notes.txt", b"alpha\nbeta needle\ngamma\n")
    environment = Environment(session=sandbox_session, evaluate=lambda split: None)
    environment.state.working_dir = "/workspace"
    return environment


@pytest.mark.docker
def test_it_opens_scrolls_and_searches_files(env):
    shown = env.execute('open "model.py" 4').text
    assert shown.startswith("[File: /workspace/model.py (5 lines total)]")
    assert "4:def f(x):" in shown
    assert env.state.open_file == "/workspace/model.py"
    assert "1:import os" in env.execute("goto 1").text
    assert "5:    return x + 1" in env.execute("scroll_down").text
    assert "not found" in env.execute("open missing.py").text
    assert "is a directory" in env.execute("open sub").text
    assert 'Found 1 matches for "needle"' in env.execute("search_dir needle").text
    assert "Line 2:beta needle" in env.execute("search_file needle sub/notes.txt").text
    assert "/workspace/sub/notes.txt" in env.execute("find_file notes.txt").text
    assert "No matches" in env.execute("find_file nothing.here").text


@pytest.mark.docker
def test_it_keeps_the_shell_directory_between_steps(env):
    env.execute("cd sub")
    assert env.state.working_dir == "/workspace/sub"
    assert env.execute("cat notes.txt").text.startswith("alpha")
    assert "3:gamma" in env.execute("open notes.txt").text


@pytest.mark.docker
def test_it_applies_a_clean_edit_and_rejects_one_that_adds_lint_errors(env, sandbox_session):
    env.execute("open model.py")
    applied = env.execute("edit 5:5\n    return x + 2\nend_of_edit\n").text
    assert "File updated" in applied and "5:    return x + 2" in applied
    assert sandbox_session.get_file("/workspace/model.py").decode().endswith("return x + 2\n")

    rejected = env.execute("edit 5:5\n    return y + 2\nend_of_edit\n").text
    assert "Your changes have NOT been applied" in rejected
    assert "F821 undefined name 'y'" in rejected
    assert "return y + 2" not in sandbox_session.get_file("/workspace/model.py").decode()

    broken = env.execute("insert 4\n  oops(\nend_of_insert\n").text
    assert "E999" in broken and "NOT been applied" in broken

    inserted = env.execute("insert 5\n\n\nX = f(1)\nend_of_insert\n").text
    assert "8:X = f(1)" in inserted


@pytest.mark.docker
def test_it_creates_files_and_refuses_to_overwrite(env, sandbox_session):
    assert "[File: /workspace/new/train.py (0 lines total)]" in env.execute("create new/train.py").text
    assert "already exists" in env.execute("create new/train.py").text
    env.execute("insert 0\nprint('hi')\nend_of_insert\n")
    assert env.execute("python3 new/train.py").text == "hi"


@pytest.mark.docker
def test_it_has_memory_and_says_when_literature_tools_are_unavailable(env):
    assert "Saved to memory (1 notes)" in env.execute("memory_write gradient clipping fixed the nan loss").text
    assert "gradient clipping" in env.execute("memory_read nan loss").text
    assert "not available" in env.execute("literature_search game theory").text
    assert "literature_search" not in env.available_tools


@pytest.mark.docker
def test_it_runs_the_baseline_agent_end_to_end(researcher, redis_client):
    from benchmark.runs.services import run_execute
    from tests.benchmark.runs_support import agent

    task = builtin_task("prisoners_dilemma")
    run = make_run(owner=researcher, task=task, agent_config=agent("baseline"))
    run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert (run.status, run.exit_status, run.error) == (Run.Status.FINISHED, "submitted", "")
    steps = list(run.steps.order_by("index"))
    assert [s.index for s in steps] == [1, 2, 3]
    assert [s.action.strip() for s in steps][1:] == ["validate", "submit"]
    assert "Evaluation Score" in steps[1].observation
    scores = {s.kind: s for s in run.scores.all()}
    assert scores[Score.Kind.VALIDATE].primary is not None and scores[Score.Kind.VALIDATE].step == steps[1]
    assert run.best_submission == scores[Score.Kind.SUBMIT].primary
    assert run.best_attempt is not None and run.started_at and run.finished_at


@pytest.mark.docker
def test_it_replays_a_run_in_a_fresh_sandbox_and_reports_differences(researcher, redis_client):
    from benchmark.runs import progress
    from benchmark.runs.services import run_execute
    from tests.benchmark.runs_support import agent

    task = builtin_task("prisoners_dilemma")
    original = make_run(owner=researcher, task=task, agent_config=agent("baseline"), status=Run.Status.FINISHED)
    for action, observation in [("echo same\n", "same"), ("date +%N\n", "123"), ("submit\n", "")]:
        progress.step_append(run=original, thought="t\n", action=action, observation=observation, publish=False)
    replay = make_run(owner=researcher, task=task, agent_config=agent("replay"), replay_of=original)
    run_execute(run_id=replay.pk)
    replay.refresh_from_db()
    assert (replay.status, replay.exit_status) == (Run.Status.FINISHED, "submitted")
    states = [s.state["replay"] for s in replay.steps.order_by("index")]
    assert [s["same"] for s in states] == [True, False, False]
    assert "-123" in states[1]["diff"]
    assert replay.params["replay"] == {"compared": 3, "differing_steps": [2, 3]}


@pytest.mark.docker
def test_it_times_validate_and_submit_which_run_the_evaluator(sandbox_session):
    """The evaluator's sandboxes take real time: a validate step is not shown as 0.00 s."""
    import time

    def evaluate(split: str) -> ScoreResult:
        time.sleep(0.3)  # the copy-out and the evaluator's own sandbox
        return ScoreResult(split=split, metrics={"Score": 1.0}, primary=1.0)

    environment = Environment(session=sandbox_session, evaluate=evaluate)
    for action in ("validate", "submit"):
        observation = environment.execute(action)
        assert observation.kind == action and 0.3 <= observation.duration < 5
