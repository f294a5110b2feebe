"""Task-level fixtures: the backend that evaluations run on (Docker, and bwrap where it runs)."""

from __future__ import annotations

import pytest

# Tasks whose evaluator or baseline needs the image's packages (numpy, gymnasium, sklearn).
NEEDS_IMAGE_PACKAGES = {"mountain_car_continuous", "digits_classification", "diabetes_regression"}


@pytest.fixture(params=["docker", "bwrap"])
def task_backend(request: pytest.FixtureRequest, settings) -> str:
    """Every evaluation of the test runs on this backend. bwrap uses the image's debootstrap
    rootfs when this machine built it, else the host's /usr (stdlib evaluators only)."""
    settings.SANDBOX_BACKEND = request.param
    if request.param == "docker":
        request.applymarker(pytest.mark.docker)
        request.getfixturevalue("sandbox_image")
        return "docker"
    from sandbox.bwrap import probe
    from sandbox.image import cached_rootfs

    problem = probe()
    if problem:
        pytest.skip(f"bubblewrap unusable here: {problem}")
    rootfs = cached_rootfs()
    if rootfs is not None:
        settings.SANDBOX_BWRAP_ROOTFS = str(rootfs)
    slug = request.node.callspec.params.get("slug")
    if rootfs is None and slug in NEEDS_IMAGE_PACKAGES:
        pytest.skip(f"{slug}'s evaluator needs the image's packages; no debootstrap rootfs built on this machine")
    return "bwrap"
