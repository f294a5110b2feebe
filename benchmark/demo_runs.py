"""Demo step of the runs part of the benchmark app: MLGym's released trajectories, when present."""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from django.conf import settings


def mlgym_trajectories_import(stdout: TextIO) -> None:
    root = Path(settings.MLGYM_DIR) / "trajectories" if getattr(settings, "MLGYM_DIR", "") else None
    if root is None or not root.is_dir():
        stdout.write("  MLGym trajectories: skipped (MLGYM_DIR not set or has no trajectories/)")
        return
    from benchmark.management.commands.import_mlgym_traj import traj_import_paths

    traj_import_paths(paths=[str(root)], stdout=stdout)
