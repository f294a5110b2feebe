"""A task's score is its primary metric as the evaluator reported it: an evaluator that reports
other metrics only gives an evaluation error and no score (never 0.0, which would rank)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmark.tasks.evaluation import artifacts_evaluate
from benchmark.tasks.loader import task_sync

pytestmark = pytest.mark.django_db

TASK_YAML = """title: Other metrics only
metric: Score
direction: max
description: d
artifacts: [answer.txt]
evaluator:
  dir: evaluator
  command: python3 {evaluator_dir}/evaluate.py {split}
  timeout: 60
baseline:
  command: 'true'
"""

# Reports a metric, finite and plausible, but not the task's: `Score` is missing.
EVALUATOR = """import sys
from arena import emit
answer = open('answer.txt').read().strip()
print('evaluated', sys.argv[1], answer)
emit({'accuracy': 0.75, 'rows': 4})
"""


@pytest.fixture
def other_metrics_task(public_dir: Path):
    folder = public_dir / "other_metrics_only"
    (folder / "workspace").mkdir(parents=True)
    (folder / "evaluator").mkdir()
    (folder / "task.yaml").write_text(TASK_YAML)
    (folder / "evaluator" / "evaluate.py").write_text(EVALUATOR)
    for path in (folder, folder / "workspace", folder / "evaluator"):
        path.chmod(0o755)
    return task_sync(folder)


def test_it_gives_an_error_and_no_score_when_the_primary_metric_is_missing(task_backend, other_metrics_task):
    result = artifacts_evaluate(task=other_metrics_task, artifacts={"answer.txt": b"42\n"}, split="test")
    assert "evaluated test 42" in result.output  # the evaluator really ran and reported
    assert result.metrics == {"accuracy": 0.75, "rows": 4}  # what it did report is kept, shown as is
    assert result.primary is None
    assert result.error == "the evaluator reported no finite value for the metric 'Score'"
