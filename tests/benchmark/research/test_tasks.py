"""The MLR-Bench task import: 201 tasks, workshop attribution, the released data faults, idempotence."""

from __future__ import annotations

import io
import shutil

import pytest
from django.core.management import CommandError, call_command

from benchmark.models import Task
from tests.benchmark.mlrbench_data import MLRBENCH, needs_data


def _run(path) -> str:
    out = io.StringIO()
    call_command("import_mlr_tasks", str(path), stdout=out)
    return out.getvalue()


@needs_data
@pytest.mark.django_db
def test_it_imports_the_201_tasks_with_their_workshop_attribution_and_reports_the_faults():
    output = _run(MLRBENCH)
    assert "201 read, 201 new" in output
    assert Task.objects.filter(kind=Task.Kind.MLR, is_current=True).count() == 201
    task = Task.objects.get(slug="iclr2025_bi_align")
    assert (task.venue, task.year, task.source) == ("ICLR", 2025, "mlrbench")
    assert task.title == "Workshop on Bidirectional Human-AI Alignment"
    assert task.config["workshop"] == {"venue": "ICLR", "year": 2025, "slug": "bi_align"}
    assert "MIT" in task.config["attribution"]
    assert task.description == (MLRBENCH / "tasks" / "iclr2025_bi_align.md").read_text()
    # The swapped bodies, reported once as a pair and noted on both tasks.
    swap_lines = [line for line in output.splitlines() if "swapped_body" in line]
    assert len(swap_lines) == 1 and "neurips2024_wtp" in swap_lines[0]
    wtp = Task.objects.get(slug="neurips2024_wtp")
    assert [f["other"] for f in wtp.config["faults"] if f["kind"] == "swapped_body"] == [
        "neurips2024_video_language_models"
    ]
    # Near-duplicate workshops across years.
    opt = Task.objects.get(slug="neurips2023_opt")
    assert any(f["kind"] == "near_duplicate" and f["other"] == "neurips2024_opt" for f in opt.config["faults"])
    assert "FAULT neurips2023_opt: near_duplicate" in output
    # An unrelated task carries no fault.
    assert Task.objects.get(slug="iclr2025_bi_align").config["faults"] == []


@needs_data
@pytest.mark.django_db
def test_it_accepts_the_tasks_folder_itself_and_is_idempotent():
    _run(MLRBENCH / "tasks")
    Task.objects.filter(slug="iclr2025_scope").update(category="ML Systems")
    output = _run(MLRBENCH)
    assert "0 new, 0 new versions, 201 unchanged" in output
    assert Task.objects.filter(kind=Task.Kind.MLR).count() == 201
    assert Task.objects.get(slug="iclr2025_scope").category == "ML Systems"  # the admin's label survives


@pytest.mark.django_db
def test_it_versions_a_changed_task_and_reports_bad_files_without_stopping(tmp_path):
    folder = tmp_path / "tasks"
    folder.mkdir()
    (folder / "iclr2025_demo.md").write_text("# Workshop on Demos\n\nDemos of demos.\n")
    (folder / "notes.md").write_text("# not a task\n")
    (folder / "icml2024_empty.md").write_text("   \n")
    (folder / "neurips2023_bad.md").write_bytes(b"\xff\xfe\x00bad")
    output = _run(tmp_path)
    assert "ERROR notes.md: name is not <venue><year>_<slug>.md" in output
    assert "ERROR icml2024_empty.md: empty file" in output
    assert "ERROR neurips2023_bad.md: unreadable" in output
    first = Task.objects.get(slug="iclr2025_demo")
    (folder / "iclr2025_demo.md").write_text("# Workshop on Demos\n\nDemos of demos, second edition.\n")
    assert "1 new versions" in _run(folder)
    current = Task.objects.get(slug="iclr2025_demo", is_current=True)
    assert current.pk != first.pk and "second edition" in current.description
    first.refresh_from_db()
    assert not first.is_current  # the old version stays for the runs that used it


@pytest.mark.django_db
def test_it_fails_clearly_on_a_folder_without_tasks(tmp_path):
    with pytest.raises(CommandError, match="no MLR-Bench task imported"):
        _run(tmp_path / "nowhere")


@needs_data
@pytest.mark.django_db
def test_it_finds_a_swap_in_a_copy_without_relying_on_the_slugs(tmp_path):
    folder = tmp_path / "tasks"
    folder.mkdir()
    for name in ("neurips2024_wtp.md", "neurips2024_video_language_models.md", "iclr2025_bi_align.md"):
        shutil.copy(MLRBENCH / "tasks" / name, folder / name.replace("neurips2024", "icml2030"))
    output = _run(folder)
    assert "FAULT icml2030_video_language_models: swapped_body" in output
    assert "iclr2025_bi_align: swapped" not in output
