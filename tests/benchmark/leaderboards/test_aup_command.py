"""`manage.py aup` and the MLGym results reader, on small fake folders and on the released data."""

from __future__ import annotations

import json
import os
from io import StringIO
from pathlib import Path

import pytest

from benchmark.leaderboards.mlgym_results import (
    PUBLISHED_MODELS,
    aup_report,
    parse_run_folder,
    read_results_dir,
    results_leaderboard,
)
from benchmark.leaderboards.published import PAPER, PUBLISHED_TAU_MAX, RELEASE
from benchmark.leaderboards.published import PUBLISHED_AUP as TABLE
from benchmark.leaderboards.scoring import BASELINE, Scoring

REPO = Path(__file__).resolve().parents[3]

# MLGym's published table (benchmark.leaderboards.published): the rows found in the paper, and the
# others as MLGym's published method gives them from the released files (each row says which).
PUBLISHED_AUP = {m: (r.best_attempt, r.best_submission) for m, r in TABLE.items() if r.source == PAPER}
COMPUTED_AUP = {m: (r.best_attempt, r.best_submission) for m, r in TABLE.items() if r.source == RELEASE}


def _mlgym_results_candidates() -> list[Path]:
    candidates = [os.environ.get("MLGYM_DIR", "")]
    candidates += [str(REPO.parent / "shared" / "mlgym"), str(REPO.parent.parent / "shared" / "mlgym")]
    return [Path(c) / "trajectories" / "mlgym_bench_v0" for c in candidates if c]


MLGYM_RESULTS = next((path for path in _mlgym_results_candidates() if path.is_dir()), _mlgym_results_candidates()[0])
needs_mlgym_results = pytest.mark.shared_data(MLGYM_RESULTS)


def mlgym_results_dir() -> Path:
    if MLGYM_RESULTS.is_dir():
        return MLGYM_RESULTS
    pytest.fail(f"MLGym released data not found (set MLGYM_DIR); looked in {_mlgym_results_candidates()}")


def write_run(root: Path, folder: str, agent: object, baseline: object = None, raw: str | None = None) -> Path:
    run = root / folder
    run.mkdir(parents=True)
    text = raw if raw is not None else json.dumps({"agent": agent, "baseline": baseline})
    (run / "results.json").write_text(text)
    return run


def folder(model: str, task: str, index: int = 0) -> str:
    return f"metagen-{model}__{task}__default__t-0.00__p-0.95__c-4.00__install-0__parallel_agents_run_{index}"


def test_it_parses_mlgym_run_folder_names():
    parsed = parse_run_folder(folder("gemini-20-flash-thinking", "3SATTime", 3))
    assert parsed.method == "gemini-20-flash-thinking"
    assert parsed.model == "metagen-gemini-20-flash-thinking"
    assert (parsed.task, parsed.agent_config, parsed.run_index) == ("3SATTime", "default", 3)
    assert (parsed.temperature, parsed.top_p, parsed.cost_limit) == (0.0, 0.95, 4.0)
    assert parsed.run_set == "parallel_agents_run"
    with pytest.raises(ValueError, match="expected t-<number>"):
        parse_run_folder("m__task__default__x-0__p-0.95__c-4__install-0__run_0")
    with pytest.raises(ValueError, match="does not look like"):
        parse_run_folder("not-a-run")


def test_it_reads_a_results_dir_and_reports_every_bad_file_without_stopping(tmp_path):
    write_run(tmp_path, folder("good", "blotto", 0), [{"Score": 0.1}, {"Score": 0.3}], {"Score": -0.2})
    write_run(tmp_path, folder("good", "blotto", 1), [{"Score": float("nan")}], {"Score": -0.2})
    write_run(tmp_path, folder("broken", "blotto"), None, raw="{not json")
    write_run(tmp_path, folder("odd", "unknownTask"), [{"Score": 1.0}], {})
    write_run(tmp_path, "stray-folder", [{"Score": 1.0}], {})
    write_run(tmp_path, folder("other", "blotto"), [{"Score": 0.2}], {"Score": -0.5})
    results = read_results_dir(tmp_path)
    assert sorted(r.folder.method for r in results.runs) == ["good", "good", "other"]
    assert results.baselines == {"blotto": -0.2}  # first one, and the disagreement is reported
    messages = [str(i) for i in results.issues]
    assert any("results.json: file: unreadable" in m and "broken" in m for m in messages)
    assert any("unknown task 'unknownTask'" in m for m in messages)
    assert any("stray-folder" in m for m in messages)
    assert any("runs disagree on the baseline" in m for m in messages)
    assert any(m.endswith("agent[0]: Score: NaN") for m in messages)
    only = read_results_dir(tmp_path, models=["other"])
    assert [r.folder.method for r in only.runs] == ["other"]


def test_it_reports_a_missing_directory_instead_of_raising(tmp_path):
    results = read_results_dir(tmp_path / "nope")
    assert results.runs == [] and "not a directory" in str(results.issues[0])


@needs_mlgym_results
def test_it_reproduces_mlgyms_published_leaderboard_from_the_released_files():
    results = read_results_dir(mlgym_results_dir(), models=PUBLISHED_MODELS)
    assert len(results.runs) == 12 * 13 * 4
    board = results_leaderboard(results, models=PUBLISHED_MODELS)
    assert board.methods == [*PUBLISHED_MODELS, BASELINE]
    assert len(board.tasks) == 13
    assert board.tau_max == PUBLISHED_TAU_MAX
    got = {
        m: (
            round(board.results[Scoring.BEST_ATTEMPT].aup[m], 3),
            round(board.results[Scoring.BEST_SUBMISSION].aup[m], 3),
        )
        for m in board.methods
    }
    for method, published in PUBLISHED_AUP.items():
        assert got[method] == published, method
    assert {m: got[m] for m in COMPUTED_AUP} == COMPUTED_AUP


@needs_mlgym_results
def test_it_shows_the_bad_released_values_as_issues():
    results = read_results_dir(mlgym_results_dir(), models=PUBLISHED_MODELS)
    messages = [str(i) for i in results.issues]
    assert any("rlMountainCarContinuous" in m and "absurd value" in m for m in messages)
    assert sum("no scores" in m for m in messages) > 100  # runs that never validated


@needs_mlgym_results
def test_it_prints_json_with_aup_per_method_and_tau_max():
    from django.core.management import call_command

    out = StringIO()
    call_command("aup", results=str(mlgym_results_dir()), models=",".join(PUBLISHED_MODELS), format="json", stdout=out)
    report = json.loads(out.getvalue())
    assert report["methods"] == [*PUBLISHED_MODELS, BASELINE]
    assert report["tau_max"] == 1.5
    for method, (attempt, submission) in PUBLISHED_AUP.items():
        assert round(report["aup"][method]["best_attempt"], 3) == attempt
        assert round(report["aup"][method]["best_submission"], 3) == submission
    assert report["issues"]


@needs_mlgym_results
def test_it_prints_a_table_and_rejects_a_missing_directory(tmp_path):
    from django.core.management import call_command
    from django.core.management.base import CommandError

    out, err = StringIO(), StringIO()
    call_command("aup", results=str(mlgym_results_dir()), models="gemini-25-pro,gpt4o2", stdout=out, stderr=err)
    lines = out.getvalue().splitlines()
    assert lines[0].split() == ["method", "best", "attempt", "best", "submission"]
    assert {line.split()[0] for line in lines[1:4]} == {"gemini-25-pro", "gpt4o2", BASELINE}
    assert lines[-1].startswith("tau_max = ")
    with pytest.raises(CommandError, match="not a directory"):
        call_command("aup", results=str(tmp_path / "missing"))


@needs_mlgym_results
def test_it_builds_the_json_report_without_django():
    results = read_results_dir(mlgym_results_dir(), models=["gpt-o1"])
    report = aup_report(results_leaderboard(results, models=["gpt-o1"]), results_dir="x")
    assert set(report["aup"]) == {"gpt-o1", BASELINE}
    assert set(report["aup"]["gpt-o1"]) == {"best_attempt", "best_submission"}
