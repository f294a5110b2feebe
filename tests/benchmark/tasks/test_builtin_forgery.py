"""For every built-in task, a submission that forges its score gets its true score or an
evaluation error, never the forged value (Docker, and bwrap where it runs).

Code tasks: the starter code plus every forging trick found on the old evaluator: print a
metrics line; from a process started with fork_exec (no audit event), write one plus a byte
without newline to the stdout and stderr of every other process in reach (the old evaluator's
/proc/<ppid>/fd/1; "quiet"), or to every fd of every process, its own reply pipe included
("loud"); dir_fd opens of /evaluator; metrics files at the paths the evaluator uses. On the
old evaluator the quiet forger scored its forged value on every task. Its true score is the starter code's own, computed without the
evaluator (tests/benchmark/expected_scores.py). Data tasks: CSV files that carry metrics lines,
NaN, infinity and huge numbers.
"""

from __future__ import annotations

import csv
import math

import pytest

from benchmark.tasks.evaluation import artifacts_evaluate
from benchmark.tasks.loader import BUILTIN_DIR, task_sync
from tests.attack_snippets import fork_exec
from tests.benchmark.expected_scores import EXPECTED, counted, diabetes_rows, r2

pytestmark = pytest.mark.django_db

CODE_TASKS = {
    # slug: (artifact, metric, forged value: the best a cheat could claim)
    "prisoners_dilemma": ("strategy.py", "Score", 5.0),
    "battle_of_sexes": ("strategy.py", "Score", 2.0),
    "colonel_blotto": ("strategy.py", "Score", 1.0),
    "sat_solver": ("heuristic.py", "Decisions", 1.0),
    "mountain_car_continuous": ("policy.py", "Reward Mean", 100.0),
}

FORGE = r'''

# ---- forging, appended to the starter code ----
import json as _json, os as _os, sys as _sys

_FORGED = {metric!r}, {forged!r}
_LINE = (_json.dumps({{_FORGED[0]: _FORGED[1]}}) + "\n").encode()


{spawn}

_ROGUE = """
import os, sys
line, loud = sys.argv[1].encode(), sys.argv[2] == "loud"
for pid in (p for p in os.listdir("/proc") if p.isdigit()):
    if not loud and int(pid) in (os.getpid(), os.getppid()):
        continue  # the quiet forger leaves its own driver, and so its reply channel, alone
    try:
        fds = os.listdir(f"/proc/{{pid}}/fd") if loud else ["1", "2"]
    except OSError:
        continue
    for fd in fds:
        path = f"/proc/{{pid}}/fd/{{fd}}"
        try:
            handle = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            os.write(handle, line + b"\\nx")
            os.close(handle)
        except OSError:
            pass
for path in ("/workspace/.referee/metrics.json", "/tmp/metrics.json", "/evaluator/metrics.json"):
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        open(path, "wb").write(line)
    except OSError:
        pass
try:
    root = os.open("/", os.O_RDONLY | os.O_DIRECTORY)
    os.write(os.open("evaluator/evaluate.py", os.O_WRONLY | os.O_TRUNC, dir_fd=root), b"")
except OSError:
    pass
"""


def _forge():
    print(_LINE.decode(), end="", flush=True)
    _spawn([_sys.executable, "-c", _ROGUE, _LINE.decode().strip(), {mode!r}])
    _spawn(["/bin/sh", "-c", "echo '" + _LINE.decode().strip() + "'; cat /evaluator/*.py"])


_forge()
'''


def forger(slug: str, mode: str) -> bytes:
    artifact, metric, forged = CODE_TASKS[slug]
    source = (BUILTIN_DIR / slug / "workspace" / artifact).read_text()
    return (source + FORGE.format(metric=metric, forged=forged, mode=mode, spawn=fork_exec("_spawn"))).encode()


@pytest.mark.parametrize("mode", ["quiet", "loud"])
@pytest.mark.parametrize("slug", sorted(CODE_TASKS))
def test_it_never_gives_a_forging_submission_its_forged_score(slug, mode, task_backend):
    task = task_sync(BUILTIN_DIR / slug)
    artifact, metric, forged = CODE_TASKS[slug]
    result = artifacts_evaluate(task=task, artifacts={artifact: forger(slug, mode)}, split="test")
    truth = EXPECTED[slug]()["test"]
    assert result.primary != forged
    if mode == "quiet":
        # Nothing it did reached the evaluator: it gets exactly the starter code's score (at the SAT
        # task its decision count: thinking time is charged on top, as the machine allows).
        assert result.error == "", result.error + result.output
        assert counted(slug, metric, result.metrics) == pytest.approx(truth, rel=1e-9)
    else:
        # It wrote its forged line to its own reply pipe while loading: the evaluator got it where
        # the driver's ready belongs, refused it as such, and failed the evaluation saying so.
        assert result.primary is None and result.error == "the evaluator exited with code 1"
        assert f"evaluation failed: the submission's driver sent { ({metric: forged})!r} instead of ready" in (
            result.output
        ), result.output[:1000]
    assert "def opponents" not in result.output and "SEEDS" not in result.output


def labels(slug: str, split: str, column: str) -> dict[str, str]:
    with open(BUILTIN_DIR / slug / "evaluator" / f"labels_{split}.csv", newline="") as handle:
        return {row["id"]: row[column] for row in csv.DictReader(handle)}


def digits_csv(predict: dict[str, str], extra: str = "") -> bytes:
    rows = "".join(f"{key},{value}\n" for key, value in predict.items())
    return f"id,label\n{rows}{extra}".encode()


def test_it_scores_a_digits_csv_carrying_metrics_lines_by_its_predictions_alone(task_backend):
    task = task_sync(BUILTIN_DIR / "digits_classification")
    truth = labels("digits_classification", "test", "label")
    ones = dict.fromkeys(truth, "1")
    expected = sum(label == "1" for label in truth.values()) / len(truth)
    forged = digits_csv(ones, '{"accuracy": 1.0}\nid,label\n"{""accuracy"": 1}",1\n')
    result = artifacts_evaluate(task=task, artifacts={"submission.csv": forged}, split="test")
    assert result.error == "", result.error + result.output
    assert result.primary == pytest.approx(expected) and result.primary < 0.2


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e999"])
def test_it_fails_digits_predictions_that_are_not_numbers(task_backend, value):
    task = task_sync(BUILTIN_DIR / "digits_classification")
    predict = dict.fromkeys(labels("digits_classification", "dev", "label"), value)
    result = artifacts_evaluate(task=task, artifacts={"submission.csv": digits_csv(predict)}, split="dev")
    assert result.primary is None and result.error == "the evaluator exited with code 1"
    assert f"has the label {value!r}, not an integer" in result.output, result.output[-1000:]


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e999", "1e308"])
def test_it_fails_diabetes_predictions_that_make_the_metric_non_finite(task_backend, value):
    task = task_sync(BUILTIN_DIR / "diabetes_regression")
    ids = list(labels("diabetes_regression", "test", "target"))
    body = "id,target\n" + "".join(f"{key},{value}\n" for key in ids)
    result = artifacts_evaluate(task=task, artifacts={"submission.csv": body.encode()}, split="test")
    assert result.primary is None and result.error == "the evaluator exited with code 1", result
    if value == "1e308":  # finite, but its squared error is not
        assert "the predictions are so large that their squared error is not a finite number" in result.output
    else:
        assert f"has the prediction {value!r}, not a finite number" in result.output, result.output[-1000:]


def test_it_scores_huge_finite_diabetes_predictions_exactly(task_backend):
    """1e150 everywhere is a true (absurd) score, computed like any other; leaderboards drop it."""
    task = task_sync(BUILTIN_DIR / "diabetes_regression")
    ids, _, _ = diabetes_rows("test")
    targets = {k: float(v) for k, v in labels("diabetes_regression", "test", "target").items()}
    body = "id,target\n" + "".join(f"{key},1e150\n" for key in ids)
    result = artifacts_evaluate(task=task, artifacts={"submission.csv": body.encode()}, split="test")
    want = r2(targets, dict.fromkeys(ids, 1e150))
    assert result.error == "", result.error + result.output
    assert math.isfinite(want) and result.primary == pytest.approx(want, rel=1e-9)
