"""The test session's Slurm cluster (tests/slurm_cluster.py), started on the first test that asks.

Loaded with `-p tests.slurm_plugin` (pytest.ini). The `slurm_cluster` fixture skips, naming what is
missing, where Debian's slurm-wlm or munge is not installed; tests that use it are marked `slurm`,
a kind whose skip is a failure under CI=true (tests/ci_plugin.py).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.slurm_cluster import SlurmCluster, missing_binaries, start


@pytest.fixture(scope="session")
def slurm_cluster() -> Iterator[SlurmCluster]:
    missing = missing_binaries()
    if missing:
        pytest.skip(f"Slurm is not installed here ({', '.join(missing)} not found): apt-get install slurm-wlm munge")
    try:
        cluster = start()
    except RuntimeError as exc:
        pytest.skip(f"the test Slurm cluster did not start: {exc}")
    yield cluster
    cluster.stop()


@pytest.fixture
def slurm_node(slurm_cluster: SlurmCluster) -> Iterator[SlurmCluster]:
    """The cluster with its slurmd running again after the test, whatever the test did to it."""
    yield slurm_cluster
    if "slurmd" not in slurm_cluster.procs or slurm_cluster.procs["slurmd"].poll() is not None:
        slurm_cluster.slurmd_start()
