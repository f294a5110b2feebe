"""MLGym's exploit classes, on MLGym's real tasks, through the path `validate`/`submit` take: the
agent's sandbox does its worst, then only the declared artifacts leave it for the isolated
evaluator. Each agent gets its real score or an evaluation error, never the rigged one.

MLGym runs evaluate.py in the agent's shell, with answer.csv, target.py and evaluate.py in the
agent's workspace: each attack below changed a released MLGym score or would have.
"""

from __future__ import annotations

import hashlib

import pytest

from benchmark.tasks.evaluation import agent_sandbox_spec, submission_evaluate, task_folder, workspace_prepare
from sandbox import open_session
from tests.benchmark.tasks.mlgym_fixtures import MLGYM_DIR, build_dir, docker, mlgym, needs_mlgym

__all__ = ["build_dir", "docker", "mlgym"]  # fixtures, imported for pytest

pytestmark = [needs_mlgym, pytest.mark.django_db, pytest.mark.docker, pytest.mark.slow]

RIGGED_EVALUATE = "import json\nprint(json.dumps({'Score': 5.0, 'r2': 1.0, 'rmse': 0.0, 'accuracy': 1.0}))\n"


def agent_does(task, commands: list[str]):
    """Prepare the agent's workspace, run its commands there, then score its artifacts (test split)."""
    with open_session(agent_sandbox_spec(task=task, run_code="exploit")) as session:
        workspace_prepare(task=task, session=session)
        outputs = []
        for command in commands:
            result = session.run(command, timeout=300)
            outputs.append(result.output)
            assert result.exit_code == 0, result.output
        return submission_evaluate(task=task, session=session, split="test"), outputs


def write(path: str, text: str) -> str:
    return f"cat > {path} <<'EOF_'\n{text.rstrip(chr(10))}\nEOF_\n"


def test_it_ignores_a_blotto_opponent_the_agent_overwrote(mlgym, docker):
    """The released Blotto score that came from an agent replacing target.py with a weak opponent."""
    task = mlgym("blotto")
    weak = "def target_column_strategy(history):\n    return [0, 0, 0, 0, 0, 0]\n"
    score, _ = agent_does(task, [write("target.py", weak), "python3 evaluate.py"])
    assert score.error == "", score.error + score.output
    # The starter scores about -0.25 against MLGym's real opponent; it would win every game (1.0) here.
    assert score.primary == pytest.approx(-0.248, abs=0.05)


def test_it_ignores_an_evaluate_py_the_agent_edited(mlgym, docker):
    task = mlgym("prisonersDilemma")
    score, outputs = agent_does(task, [write("evaluate.py", RIGGED_EVALUATE), "python3 evaluate.py"])
    assert '"Score": 5.0' in outputs[1]  # the agent's own copy says what it likes...
    assert score.error == "" and score.primary == pytest.approx(2.3716, abs=0.05)  # ...the score does not


def test_it_ignores_a_metric_column_the_agent_wrote_into_its_submission(mlgym, docker):
    task = mlgym("regressionKaggleHousePrice")
    honest, _ = agent_does(task, ["python3 baseline.py"])
    extra = (
        "python3 -c \"import pandas as p; s = p.read_csv('submission.csv'); s['r2'] = 1.0; s['rmse'] = 0.0; "
        "s['Score'] = 99; s.to_csv('submission.csv', index=False)\""
    )
    forged, _ = agent_does(task, ["python3 baseline.py", extra, "head -2 submission.csv | grep -q r2"])
    assert honest.error == "" and forged.error == ""
    assert forged.metrics == honest.metrics and forged.primary == pytest.approx(0.8799891474739243, rel=1e-9)


@pytest.mark.parametrize(("name", "answer"), [
    ("regressionKaggleHousePrice", "evaluator/hidden/data/answer.csv"),
    ("titanic", "evaluator/hidden/data/ground_truth.csv"),
])  # fmt: skip
def test_it_leaves_no_copy_of_the_answers_anywhere_in_the_agents_sandbox(mlgym, docker, name, answer):
    task = mlgym(name)
    data = (task_folder(task) / answer).read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    search = (
        "find / -xdev \\( -iname 'answer*.csv' -o -iname 'ground_truth*.csv' \\) -print 2>/dev/null; "
        f"find / -xdev -type f -size {len(data)}c -readable 2>/dev/null | xargs -r sha256sum; "
        "cat /home/agent/workspace/data/answer.csv /home/agent/workspace/data/ground_truth.csv 2>&1 | head -c 300; "
        "cp data/answer.csv submission.csv 2>/dev/null || cp data/ground_truth.csv submission.csv 2>/dev/null || true"
    )
    score, outputs = agent_does(task, [search])
    assert digest not in outputs[0] and "answer" not in outputs[0].replace("answer.csv: No such", "")
    assert "ground_truth" not in outputs[0].replace("ground_truth.csv: No such", "")
    assert score.primary is None and "submission.csv" in score.error  # nothing was copied: no submission


def test_it_never_imports_modules_the_agent_wrote_into_the_evaluator(mlgym, docker):
    """Agent-written pandas.py/json.py would shadow the real ones if they reached the evaluator's
    workspace (it is on the evaluator's PYTHONPATH, for the submission's stand-in)."""
    task = mlgym("titanic")
    shadow = "import sys\nprint('{\"accuracy\": 1.0}')\nsys.exit(0)\n"
    honest = (
        "python3 -c \"import csv; rows = list(csv.DictReader(open('data/test.csv'))); "
        "open('submission.csv', 'w').write('PassengerId,Survived\\n' + ''.join(r['PassengerId'] + ',0\\n' for r in rows))\""
    )
    commands = [honest, write("pandas.py", shadow), write("json.py", shadow), "mkdir -p sklearn",
                write("sklearn/__init__.py", shadow)]  # fmt: skip
    score, _ = agent_does(task, commands)
    assert score.error == "" and score.primary == pytest.approx(266 / 418)


def test_it_gives_a_strategy_that_attacks_from_its_import_its_real_score(mlgym, docker):
    """The submitted module runs in its own sandbox: what it writes or prints at import reaches
    neither the evaluator's files nor its output."""
    task = mlgym("battleOfSexes")
    attack = (
        "import json, os\n"
        "for d in ('.', '/home/agent/workspace', '/evaluator'):\n"
        "    for f in ('target.py', 'evaluate.py', 'numpy.py'):\n"
        "        try:\n"
        "            open(os.path.join(d, f), 'w').write('raise SystemExit(\"rigged\")\\n')\n"
        "        except OSError:\n"
        "            pass\n"
        "print(json.dumps({'Score': 2.0}), flush=True)\n"
    )
    starter = (MLGYM_DIR / "data" / "battleOfSexes" / "strategy.py").read_text()
    helper = "import helper_written_by_the_agent\n" + starter
    rigged, _ = agent_does(task, [write("strategy.py", attack + starter)])
    missing, _ = agent_does(task, [write("helper_written_by_the_agent.py", "X = 1\n"), write("strategy.py", helper)])
    assert rigged.error == "", rigged.error + rigged.output
    assert rigged.primary == pytest.approx(1.0227, abs=0.05)
    # Only strategy.py leaves the workspace: a module it imports from there is not in its sandbox.
    assert missing.primary is None and "helper_written_by_the_agent" in missing.error + missing.output
