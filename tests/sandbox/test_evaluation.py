"""evaluate(): fresh sandboxes, the evaluator read-only, metrics only from the evaluator's own file."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.evaluation import evaluate, parse_metrics, parse_metrics_file


@pytest.fixture
def evaluator(public_dir: Path) -> Path:
    path = public_dir / "evaluator"
    path.mkdir()
    (path / "score.py").write_text(
        "import sys\n"
        "from arena import emit\n"
        "prediction = open('prediction.txt').read().split()\n"
        "labels = open(sys.argv[1]).read().split()\n"
        "print('scoring', len(labels), 'rows')\n"
        "print('{\"accuracy\": 1.0}')  # a printed JSON line is output, never the metrics\n"
        "emit({'accuracy': sum(p == l for p, l in zip(prediction, labels)) / len(labels)})\n"
    )
    (path / "labels.txt").write_text("1 0 1 1\n")
    return path


def run(evaluator: Path, backend: str, prediction: bytes, command: str = "", timeout: float = 60, **kwargs):
    command = command or "python3 $EVALUATOR_DIR/score.py $EVALUATOR_DIR/labels.txt"
    return evaluate(
        evaluator_dir=evaluator,
        artifacts={"prediction.txt": prediction},
        command=command,
        timeout=timeout,
        backend=backend,
        **kwargs,
    )


def test_it_takes_the_metrics_from_the_evaluators_file_not_its_output(backend, evaluator: Path) -> None:
    result = run(evaluator, backend, b"1 0 0 1\n")
    assert result.ok and result.error is None
    assert result.metrics == {"accuracy": 0.75}
    assert "scoring 4 rows" in result.output and '{"accuracy": 1.0}' in result.output


def test_it_calls_printed_metrics_without_a_metrics_file_an_error(backend, evaluator: Path) -> None:
    result = run(evaluator, backend, b"", command="echo '{\"accuracy\": 0.99}'")
    assert not result.ok and result.metrics is None
    assert "wrote no metrics" in (result.error or "")
    assert "0.99" in result.output


def test_it_reads_printed_metrics_only_when_the_task_says_so(backend, evaluator: Path) -> None:
    result = run(evaluator, backend, b"", command="echo log; echo '{\"accuracy\": 0.5}'", metrics="stdout")
    assert result.ok and result.metrics == {"accuracy": 0.5}


@pytest.mark.parametrize("value", ["float('nan')", "float('inf')", "'high'", "True"])
def test_it_refuses_metrics_that_are_not_finite_numbers(backend, evaluator: Path, value: str) -> None:
    # Written around arena.emit (which refuses them itself), straight into the metrics file.
    command = (
        "python3 -c \"import json, os; os.makedirs('.referee', exist_ok=True); "
        f"open(os.environ['REFEREE_METRICS'], 'w').write(json.dumps({{'accuracy': {value}}}))\""
    )
    result = run(evaluator, backend, b"", command=command)
    assert not result.ok and result.metrics is None
    assert "accuracy" in (result.error or "") or "not a finite number" in (result.error or "")


def test_it_reports_a_crashing_evaluator_with_its_traceback(backend, evaluator: Path) -> None:
    command = "python3 -c 'from arena import emit; emit({\"a\": 1}); 1/0'"
    result = run(evaluator, backend, b"1\n", command=command)
    assert not result.ok and result.metrics is None
    assert "exited with code 1" in (result.error or "")
    assert "ZeroDivisionError" in result.output


def test_it_reports_a_timeout(backend, evaluator: Path) -> None:
    command = "python3 -c 'from arena import emit; emit({\"accuracy\": 1})'; sleep 60"
    result = run(evaluator, backend, b"", command=command, timeout=1)
    assert not result.ok and result.metrics is None
    assert "timed out" in (result.error or "")


def test_it_rejects_artifacts_that_escape_the_workspace(evaluator: Path) -> None:
    for name in ("../x.py", "/etc/passwd", ".referee/metrics.json"):
        result = evaluate(evaluator_dir=evaluator, artifacts={name: b""}, command="true", backend="bwrap")
        assert not result.ok and name in (result.error or "")


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


@pytest.mark.parametrize(
    ("data", "metrics", "error"),
    [
        (b'{"acc": 0.5, "n": 3}', {"acc": 0.5, "n": 3.0}, None),
        (b'{"acc": NaN}', None, "not a finite number"),
        (b'{"acc": Infinity}', None, "not a finite number"),
        (b'{"acc": -Infinity}', None, "not a finite number"),
        (b'{"acc": 1e999}', None, "not a finite number"),
        (b"[1, 2]", None, "not a JSON object"),
        (b"\xff", None, "not valid JSON"),
        (b"", None, "not valid JSON"),
    ],
)
def test_it_parses_only_finite_numbers_from_the_metrics_file(data: bytes, metrics: dict | None, error: str | None):
    parsed, why = parse_metrics_file(data)
    assert parsed == metrics
    assert (error is None and why is None) or (error and error in (why or ""))
