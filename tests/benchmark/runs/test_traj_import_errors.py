"""import_mlgym_traj on bad files: one line naming file, line and field; no traceback; nothing
written for a file that fails; numbers that are not numbers are data issues, never zeros."""

from __future__ import annotations

import json
import re
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from benchmark.models import Run, RunGroup, Step, Task
from benchmark.runs.trajectories import TrajImportError, json_line, traj_import

pytestmark = pytest.mark.django_db

FOLDER = "metagen-m__{task}__default__t-0.00__p-0.95__c-4.00__install-0__parallel_agents_run_0"


def _traj(**info) -> dict:
    return {
        "trajectory": [
            {"action": "ls\n", "observation": "a b", "execution_time": 0.5},
            {"action": "validate\n", "observation": "Evaluation Score: {'Score': 2.0}", "execution_time": 1.25},
        ],
        "info": {
            "exit_status": "submitted",
            "model_stats": {"total_cost": 0.25, "tokens_sent": 100, "tokens_received": 20, "api_calls": 2},
            "score": [{"Score": 2.0}],
            **info,
        },
    }


def _write(tmp_path: Path, data, *, task: str = "prisonersDilemma", text: str | None = None) -> Path:
    folder = tmp_path / FOLDER.format(task=task)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{task}.traj"
    path.write_text(text if text is not None else json.dumps(data, indent=1))
    return path


def _command(*args: str) -> str:
    out = StringIO()
    call_command("import_mlgym_traj", *args, stdout=out)
    return out.getvalue()


def _counts() -> tuple[int, int, int, int]:
    return Run.objects.count(), Step.objects.count(), Task.objects.count(), RunGroup.objects.count()


def test_it_finds_the_line_of_a_field_in_the_json() -> None:
    text = json.dumps({"a": 1, "trajectory": [{"action": "x"}, {"observation": "y", "n": [1, 2]}]}, indent=1)
    lines = text.splitlines()
    assert lines[json_line(text, "trajectory[1]") - 1].strip() == "{"
    assert lines[json_line(text, "trajectory[1].n") - 1].strip().startswith('"n"')
    assert lines[json_line(text, "trajectory[1].action") - 1].strip() == "{"  # missing: its object
    assert json_line(text, "a") == 2


def test_it_names_the_line_and_field_of_a_missing_action(tmp_path) -> None:
    data = _traj()
    del data["trajectory"][1]["action"]
    path = _write(tmp_path, data)
    line = json_line(path.read_text(), "trajectory[1]")
    with pytest.raises(TrajImportError) as caught:
        traj_import(path)
    assert str(caught.value) == f"{path}:{line}: trajectory[1].action: missing"
    assert line > 5 and _counts() == (0, 0, 0, 0)


@pytest.mark.parametrize(
    "text, message",
    [
        (
            '{\n "trajectory": [\n  {"action": "ls"}\n  {"action": "x"}\n ]\n}',
            r":4: file: not JSON \(Expecting ',' delimiter, column 3\)",
        ),
        ('{"trajectory": []}\n', r":1: info: missing"),
        ('{"trajectory": {}, "info": {}}', r":1: trajectory: expected list, got dict"),
        ("[1, 2]", r":1: \(top level\): expected an object, got list"),
    ],
)
def test_it_reports_a_broken_file_in_one_line_and_imports_the_others(tmp_path, text, message) -> None:
    bad = _write(tmp_path / "bad", None, text=text)
    _write(tmp_path / "good", _traj(), task="blotto")
    output = _command(str(tmp_path))
    failures = [line for line in output.splitlines() if line.startswith("  ! ")]
    assert len(failures) == 1 and str(bad) in failures[0]
    assert re.search(message, failures[0]), failures[0]
    assert "1 imported, 0 already present, 1 failed, of 2" in output and "Traceback" not in output
    assert Run.objects.get().task.slug == "blotto" and RunGroup.objects.count() == 1


def test_it_says_where_a_file_stops_being_utf8(tmp_path) -> None:
    path = _write(tmp_path, None, text="")
    content = b'{\n "trajectory": [],\n "info": {"exit_status": "\xff"}\n}'
    path.write_bytes(content)
    with pytest.raises(TrajImportError, match=rf":3: file: not UTF-8 \(byte {content.index(0xFF)}: 0xff\)"):
        traj_import(path)


def test_it_records_numbers_that_are_not_numbers_as_unknown_never_zero(tmp_path, admin_user, client_for) -> None:
    data = _traj()
    data["trajectory"][0]["execution_time"] = "NaN"
    data["info"]["model_stats"]["total_cost"] = "abc"
    data["info"]["model_stats"]["tokens_sent"] = 12.5
    # A bare NaN, as Python's json writes it (and reads it back as a float nan).
    text = json.dumps(data, indent=1).replace('"execution_time": "NaN"', '"execution_time": NaN')
    path = _write(tmp_path, None, text=text)
    output = _command(str(path))
    assert "1 imported" in output
    run = Run.objects.get()
    issues = run.params["import_issues"]
    assert [i.split(": ", 2)[1] for i in issues] == [
        "trajectory[0].execution_time", "info.model_stats.total_cost", "info.model_stats.tokens_sent",
    ]  # fmt: skip
    assert all(f"~ {issue}" in output for issue in issues)
    line = json_line(path.read_text(), "info.model_stats.total_cost")
    assert issues[1] == f'{path}:{line}: info.model_stats.total_cost: "abc" is not a number: recorded as unknown'
    assert run.params["unknown"] == ["cost", "tokens_sent"] and run.params["cost_recorded"] is False
    assert run.tokens_received == 20 and run.api_calls == 2
    assert [s.execution_time for s in run.steps.order_by("index")] == [None, 1.25]
    page = client_for(admin_user).get(f"/runs/{run.code}/").content.decode()
    assert '<dd id="run-cost">unknown</dd>' in page and '<dd id="run-tokens">unknown / 20</dd>' in page
    assert "3 data issue(s) in the imported file" in page and '"time unknown"' not in page
    listing = client_for(admin_user).get("/runs/").content.decode()
    assert "unknown</span>" in listing and "$0.0000" not in listing
    log = b"".join(client_for(admin_user).get(f"/runs/{run.code}/log.txt").streaming_content).decode()
    assert "===== step 1 (time unknown) =====" in log and "===== step 2 (1.25s) =====" in log


def test_it_refuses_an_unknown_task_unless_asked_to_create_it(tmp_path) -> None:
    path = _write(tmp_path, _traj(), task="noSuchTask")
    output = _command(str(path))
    assert f"  ! {path}: task: 'noSuchTask' (from the folder name" in output and "--create-task" in output
    assert _counts() == (0, 0, 0, 0)  # nothing written: no run, no task, no group
    output = _command(str(path), "--create-task")
    assert "1 imported" in output
    task = Run.objects.get().task
    assert task.slug == "noSuchTask" and task.data_status == Task.DataStatus.MISSING


def test_it_treats_a_file_outside_an_mlgym_folder_as_an_unknown_task(tmp_path) -> None:
    path = tmp_path / "whatever.traj"
    path.write_text(json.dumps(_traj()))
    with pytest.raises(TrajImportError, match=r"whatever.traj: task: 'whatever'"):
        traj_import(path)
    assert not Task.objects.filter(slug="whatever").exists()


def test_it_names_a_missing_path_without_a_traceback(tmp_path) -> None:
    from django.core.management import CommandError

    with pytest.raises(CommandError, match="no such file or folder"):
        _command(str(tmp_path / "nope.traj"))
