"""evaluate(): a fresh sandbox, the evaluator read-only, metrics only from a JSON line."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.evaluation import evaluate, parse_metrics


@pytest.fixture
def evaluator(public_dir: Path) -> Path:
    path = public_dir / "evaluator"
    path.mkdir()
    (path / "score.py").write_text(
        "import json, sys\n"
        "prediction = open('prediction.txt').read().split()\n"
        "labels = open(sys.argv[1]).read().split()\n"
        "print('scoring', len(labels), 'rows')\n"
        "print(json.dumps({'accuracy': sum(p == l for p, l in zip(prediction, labels)) / len(labels)}))\n"
    )
    (path / "labels.txt").write_text("1 0 1 1\n")
    return path


def run(evaluator: Path, backend: str, prediction: bytes, command: str = "", timeout: float = 60):
    command = command or "python3 $EVALUATOR_DIR/score.py $EVALUATOR_DIR/labels.txt"
    return evaluate(
        evaluator_dir=evaluator,
        artifacts={"prediction.txt": prediction},
        command=command,
        timeout=timeout,
        backend=backend,
    )


def test_it_returns_the_metrics_of_the_last_json_line(backend, evaluator: Path) -> None:
    result = run(evaluator, backend, b"1 0 0 1\n")
    assert result.ok and result.error is None
    assert result.metrics == {"accuracy": 0.75}
    assert "scoring 4 rows" in result.output


def test_it_calls_output_without_metrics_an_error_and_shows_it(backend, evaluator: Path) -> None:
    result = run(evaluator, backend, b"", command="echo 'accuracy: 0.99'; echo '[1, 2]'")
    assert not result.ok and result.metrics is None
    assert "no JSON object" in (result.error or "")
    assert "accuracy: 0.99" in result.output


def test_it_reports_a_crashing_evaluator_with_its_traceback(backend, evaluator: Path) -> None:
    result = run(evaluator, backend, b"1\n", command="python3 -c 'import json; print(json.dumps({\"a\": 1})); 1/0'")
    assert not result.ok and result.metrics is None
    assert "exited with code 1" in (result.error or "")
    assert "ZeroDivisionError" in result.output


def test_it_reports_a_timeout(backend, evaluator: Path) -> None:
    result = run(evaluator, backend, b"", command="echo '{\"accuracy\": 1}'; sleep 60", timeout=1)
    assert not result.ok and result.metrics is None
    assert "timed out" in (result.error or "")


def test_it_rejects_artifacts_that_escape_the_workspace(evaluator: Path) -> None:
    result = evaluate(evaluator_dir=evaluator, artifacts={"../x.py": b""}, command="true", backend="bwrap")
    assert not result.ok and "../x.py" in (result.error or "")


@pytest.mark.parametrize(
    ("output", "metrics", "error"),
    [
        ('log\n{"acc": 0.5, "loss": 2}\n', {"acc": 0.5, "loss": 2.0}, None),
        ('{"acc": 0.1}\n{"acc": 0.9}\ntrailing text\n', {"acc": 0.9}, None),
        ('{"acc": "high"}\n', None, "'acc' is not a finite number"),
        ('{"acc": true}\n', None, "'acc' is not a finite number"),
        ('{"acc": NaN}\n', None, "'acc' is not a finite number"),
        ("{}\n", None, "empty"),
        ("{not json}\n", None, "no JSON object"),
    ],
)
def test_it_parses_only_numeric_metric_objects(output: str, metrics: dict | None, error: str | None) -> None:
    parsed, why = parse_metrics(output)
    assert parsed == metrics
    assert (error is None and why is None) or (error and error in (why or ""))
