"""The sandbox image records its manifest in a label, and both builds (Dockerfile, debootstrap) hold
the same package set."""

from __future__ import annotations

import re

import pytest

from sandbox.image import (
    BUILT_BY_LABEL,
    DEBOOTSTRAP,
    DOCKERFILE,
    build_with_dockerfile,
    image_manifest,
    measure_manifest,
    requirement_lines,
)
from sandbox.provision import REGISTRY, registry_answers

pytestmark = pytest.mark.docker


def _canonical(line: str) -> str:
    name, _, version = line.partition("==")
    return f"{re.sub(r'[-_.]+', '-', name).lower()}=={version}"


def test_it_labels_the_image_with_what_is_inside_it(sandbox_image: str) -> None:
    labelled = image_manifest(sandbox_image)
    assert labelled is not None, f"{sandbox_image} has no manifest label"
    assert labelled == measure_manifest(sandbox_image)  # the label says what a container of it finds
    assert labelled["python"] == "3.11"
    assert set(labelled["commands"]) == {"bash", "ps", "python3"}
    # Exactly the pinned packages, nothing more, nothing less (the venv's own pip aside).
    assert labelled["python_packages"] == sorted(_canonical(line) for line in requirement_lines())


@pytest.mark.registry
@pytest.mark.slow
def test_it_builds_the_same_package_set_from_the_dockerfile(sandbox_image: str) -> None:
    from sandbox import docker as sandbox_docker

    if not registry_answers():
        pytest.skip(f"no container registry answers from this machine ({REGISTRY}): the Dockerfile build needs one")
    built_by = sandbox_docker.image_labels(sandbox_image).get(BUILT_BY_LABEL)
    if built_by != DEBOOTSTRAP:
        pytest.skip(f"the session image was built by {built_by}, not debootstrap: nothing to compare it with here")
    other = f"{sandbox_image}-{DOCKERFILE}"
    try:
        build_with_dockerfile(other, log=lambda line: None)
        assert image_manifest(other) == image_manifest(sandbox_image)
    finally:
        if sandbox_docker.image_exists(other):
            sandbox_docker.client().images.remove(other, force=True)
