"""Shared by the MLGym task tests: the checkout, a build folder the sandboxes can read, syncing."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from django.conf import settings

from benchmark.models import Task
from benchmark.tasks.loader import task_sync

MLGYM_DIR = Path(settings.MLGYM_DIR or Path(settings.BASE_DIR).parent / "shared" / "mlgym")
needs_mlgym = pytest.mark.shared_data(MLGYM_DIR / "configs", MLGYM_DIR / "data")


@pytest.fixture(scope="module")
def build_dir():
    """One build folder per module (the house-price build runs MLGym's split script), world-readable
    for the sandboxes' users."""
    path = Path(tempfile.mkdtemp(prefix="referee-mlgym-test-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def mlgym(settings, build_dir):
    """Sync an MLGym task of the shared checkout by its file name; builds go to build_dir."""
    settings.MLGYM_BUILD_DIR = str(build_dir)

    def sync(name: str) -> Task:
        return task_sync(MLGYM_DIR / "configs" / "tasks" / f"{name}.yaml")

    return sync


@pytest.fixture
def docker(settings) -> str:
    """MLGym's scripts need the image's numpy, pandas and scikit-learn: Docker only."""
    settings.SANDBOX_BACKEND = "docker"
    return "docker"
