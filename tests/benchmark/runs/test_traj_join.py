"""Released runs imported by both importers (results.json and .traj) stay one run each."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command

from benchmark.models import Run

TRAJ_DIR = Path(settings.MLGYM_DIR or "/nonexistent") / "trajectories"
needs_data = pytest.mark.shared_data(TRAJ_DIR)


@needs_data
@pytest.mark.django_db
def test_it_joins_a_run_already_imported_from_results_json(tmp_path, researcher, client_for):
    import shutil

    source = next(TRAJ_DIR.rglob("metagen-gpt4o2__battleOfSexes__*/battleOfSexes.traj")).parent
    copy = tmp_path / "mlgym_bench_v0" / source.name
    shutil.copytree(source, copy)
    call_command("import_mlgym_results", str(copy.parent), stdout=StringIO())
    out = StringIO()
    call_command("import_mlgym_traj", str(copy.parent), stdout=out)
    assert "0 imported, 1 already present" in out.getvalue()
    run = Run.objects.get(source=Run.Source.MLGYM, params__mlgym_folder=source.name)
    # Released runs are public: every researcher reads them, steps numbered as they were imported.
    page = client_for(researcher).get(f"/runs/{run.code}/").content.decode()
    first = run.steps.order_by("index").first()
    assert f'"index": {first.index}' in page
