"""`manage.py evaluate_submission`: the public face of evaluation, its output and its errors."""

from __future__ import annotations

import json
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from benchmark.tasks.loader import BUILTIN_DIR, task_sync
from tests.benchmark.expected_scores import EXPECTED

pytestmark = pytest.mark.django_db

STARTER = BUILTIN_DIR / "prisoners_dilemma" / "workspace" / "strategy.py"


def run(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("evaluate_submission", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_it_prints_the_metrics_and_the_primary_score_as_a_table(task_backend):
    task_sync(BUILTIN_DIR / "prisoners_dilemma")
    out, err = run("prisoners_dilemma", "--split", "dev", f"strategy.py={STARTER}")
    want = EXPECTED["prisoners_dilemma"]()["dev"]
    assert "dev split" in out and "rounds" in out and "opponents" in out
    primary = next(line for line in out.splitlines() if line.strip().startswith("primary"))
    assert f"{want:.6g}" in primary and "(Score, higher is better)" in primary
    assert err == ""


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["no_such_task", "--split", "dev", "strategy.py=x"], "no current task 'no_such_task'"),
        (["prisoners_dilemma", "--split", "dev", "policy.py=x"], "'policy.py' is not an artifact"),
        (["prisoners_dilemma", "--split", "dev", "strategy.py"], "write NAME=PATH"),
        (["prisoners_dilemma", "--split", "dev", "strategy.py=/nonexistent/s.py"], "no such file"),
        (["prisoners_dilemma", "--split", "dev", f"strategy.py={STARTER}", f"strategy.py={STARTER}"], "given twice"),
    ],
)
def test_it_names_what_is_wrong_with_the_arguments(args, words):
    task_sync(BUILTIN_DIR / "prisoners_dilemma")
    with pytest.raises(CommandError, match=words):
        run(*args)


def test_it_names_the_missing_artifacts(tmp_path):
    folder = tmp_path / "two"
    (folder / "workspace").mkdir(parents=True)
    (folder / "evaluator").mkdir()
    (folder / "task.yaml").write_text(
        "title: t\nmetric: m\ndirection: max\ndescription: d\nartifacts: [a.csv, b.csv]\n"
        "evaluator:\n  command: python3 {evaluator_dir}/e.py {split}\nbaseline:\n  command: 'true'\n"
    )
    (tmp_path / "a.csv").write_text("x\n")
    task_sync(folder)
    with pytest.raises(CommandError, match="missing b.csv"):
        run("two", "--split", "test", f"a.csv={tmp_path / 'a.csv'}")


def test_it_exits_non_zero_with_the_evaluation_error_in_json(task_backend, tmp_path):
    task_sync(BUILTIN_DIR / "colonel_blotto")
    broken = tmp_path / "strategy.py"
    broken.write_text("def row_strategy(history):\n    return [200, 0, 0, 0, 0, 0]\n")
    out = StringIO()
    with pytest.raises(SystemExit) as exited:
        call_command("evaluate_submission", "colonel_blotto", "--split", "test", "--format", "json",
                     f"strategy.py={broken}", stdout=out)  # fmt: skip
    report = json.loads(out.getvalue())
    assert exited.value.code == 1
    assert report["primary"] is None and report["error"] and "120" in report["output"]


def test_it_runs_as_a_command_line_program():
    """Exit status 2 and the message on stderr for a bad argument, as a shell script sees it."""
    result = subprocess.run(
        [sys.executable, "manage.py", "evaluate_submission", "prisoners_dilemma", "--split", "valid", "s=x"],
        cwd=Path(settings.BASE_DIR),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2 and "invalid choice: 'valid'" in result.stderr
