"""Image variants: the sandbox image plus a task's own requirements, built from the package registry
(wheels downloaded on the host, installed offline in `docker build`), named by the hash of the
inputs, shared by tasks with the same needs, reused once built."""

from __future__ import annotations

import json
import shutil

import pytest

from benchmark.models import Run
from benchmark.runs.services import run_execute
from benchmark.tasks.evaluation import TaskNotRunnable, task_image_ensure
from benchmark.tasks.loader import BUILTIN_DIR, task_sync
from benchmark.tasks.resources import task_image, task_requirements
from benchmark.tasks.spec import TaskFormatError
from sandbox import SandboxSpec, conf, open_session
from sandbox.variants import REQUIREMENTS_LABEL, requirement_lines, variant_build, variant_tag
from tests.benchmark.runs_support import agent, make_run

# A small pure-Python wheel the base image does not hold.
PACKAGE = "tabulate==0.9.0"


def task_with(tmp_path, name: str, requirements: str, sandbox: str = ""):
    folder = tmp_path / name
    shutil.copytree(BUILTIN_DIR / "prisoners_dilemma", folder)
    yaml = folder / "task.yaml"
    yaml.write_text(yaml.read_text() + requirements + sandbox)
    return task_sync(folder)


def test_it_names_a_variant_by_its_inputs_and_shares_it():
    base = "referee-sandbox:abc"
    assert variant_tag([], base=base) == base  # no requirements: the base image itself
    one = variant_tag([PACKAGE, "# a comment", "  "], base=base)
    assert one == variant_tag(["  " + PACKAGE], base=base) and one.startswith("referee-sandbox-variant:")
    assert one != variant_tag([PACKAGE], base="referee-sandbox:def") != variant_tag(["tabulate==0.8.10"], base=base)
    assert requirement_lines(["b", "a", "a # again", ""]) == ["a", "b"]


@pytest.mark.django_db
def test_a_task_declares_requirements_and_a_cpu_task_drops_cuda_extras(tmp_path):
    task = task_with(tmp_path, "jaxy", "requirements: ['jax[cuda12]', 'flax', 'x[cuda,cli]']\n")
    assert task_requirements(task) == ["jax", "flax", "x[cli]"]
    gpu = task_with(tmp_path, "jaxy_gpu", "requirements: ['jax[cuda12]']\n", "sandbox:\n  gpus: 1\n")
    assert task_requirements(gpu) == ["jax[cuda12]"]
    with pytest.raises(TaskFormatError, match="requirements"):
        task_with(tmp_path, "bad", "requirements: tabulate\n")


@pytest.mark.docker
@pytest.mark.django_db(transaction=True)
def test_a_run_of_a_task_with_requirements_builds_its_variant_once_and_runs_on_it(
    tmp_path, researcher, client_for, redis_client
):
    task = task_with(tmp_path, "pd_tabulate", f"requirements: ['{PACKAGE}']\n")
    other = task_with(tmp_path, "pd_tabulate_too", f"requirements: ['{PACKAGE}']\n")
    tag = task_image(task)
    assert tag == task_image(other) and tag != conf.image()  # the same needs share one image
    page = client_for(researcher).get(f"/tasks/{task.code}/").content.decode()
    assert tag in page and PACKAGE in page

    run = make_run(owner=researcher, task=task, agent_config=agent())
    run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == Run.Status.FINISHED, run.error
    assert run.environment["image"] == tag  # the agent ran on the variant, and the run says so

    from sandbox import docker as sandbox_docker

    assert sandbox_docker.image_labels(tag)[REQUIREMENTS_LABEL] == f'["{PACKAGE}"]'
    with open_session(SandboxSpec(image=tag)) as session:
        result = session.run("python3 -c 'import tabulate; print(tabulate.__version__)'", timeout=60)
    assert result.output.strip() == "0.9.0"
    with open_session(SandboxSpec()) as session:  # the base image is left as it was
        assert session.run("python3 -c 'import tabulate'", timeout=60).exit_code != 0
    assert variant_build([PACKAGE], log=lambda line: pytest.fail(f"rebuilt: {line}")) == tag  # reused


@pytest.fixture
def podman_node(podman_ready: str, settings, monkeypatch):
    """A node without a Docker daemon: the podman backend, base image in podman's store (podman_ready
    loaded it while the engine answered), then no Docker engine reachable; the variant of PACKAGE
    not yet in podman's store."""
    from sandbox import docker as sandbox_docker
    from sandbox import podman

    settings.SANDBOX_BACKEND = "podman"
    tag = variant_tag([PACKAGE])
    podman._run(podman.mode(), ["rmi", "--force", "--ignore", tag])
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/referee-test/docker.sock")
    sandbox_docker.client.cache_clear()
    yield tag
    monkeypatch.undo()
    sandbox_docker.client.cache_clear()
    podman._run(podman.mode(), ["rmi", "--force", "--ignore", tag])


@pytest.mark.podman
@pytest.mark.docker
def test_it_builds_a_variant_with_podman_under_the_docker_tag_and_reuses_it(podman_node: str, podman_ready: str):
    from sandbox import podman
    from sandbox.variants import BASE_LABEL, WHEELS_LABEL, variant_state

    assert variant_state([PACKAGE])["built"] is False  # podman is asked, and it answers
    said: list[str] = []
    tag = variant_build([PACKAGE], log=said.append)
    # The tag is the hash of base + lines, whichever engine builds it: a Docker node names it alike.
    assert tag == podman_node == variant_tag([PACKAGE], base=podman_ready)
    assert any(line.startswith(f"building {tag}") and "sandbox.podman" in line for line in said), said
    labels = podman.image_labels(tag)
    assert labels[REQUIREMENTS_LABEL] == f'["{PACKAGE}"]' and labels[BASE_LABEL] == podman_ready
    assert json.loads(labels[WHEELS_LABEL]) == ["tabulate-0.9.0-py3-none-any.whl"]
    with open_session(SandboxSpec(image=tag), backend="podman") as session:
        result = session.run("id -u; python3 -c 'import tabulate; print(tabulate.__version__)'", timeout=60)
    assert result.output.split() == ["1000", "0.9.0"], result.output
    with open_session(SandboxSpec(), backend="podman") as session:  # the base image is left as it was
        assert session.run("python3 -c 'import tabulate'", timeout=60).exit_code != 0
    assert variant_build([PACKAGE], log=lambda line: pytest.fail(f"rebuilt: {line}")) == tag  # reused
    state = variant_state([PACKAGE])
    assert state["built"] is True and state["wheels"] == ["tabulate-0.9.0-py3-none-any.whl"]


@pytest.mark.podman
@pytest.mark.docker
def test_it_loads_a_variant_the_nodes_docker_engine_holds_instead_of_building_it(podman_ready: str, settings):
    from sandbox import docker as sandbox_docker
    from sandbox import podman

    tag = variant_build([PACKAGE], log=lambda line: None, backend="docker")  # the Docker test's variant
    podman._run(podman.mode(), ["rmi", "--force", "--ignore", tag])
    settings.SANDBOX_BACKEND = "podman"
    said: list[str] = []
    try:
        assert variant_build([PACKAGE], log=said.append) == tag
        assert not any(line.startswith("building") for line in said), said
        assert any("docker save | podman load" in line for line in said), said
        assert podman.image_id(tag) == sandbox_docker.client().images.get(tag).id  # the same image
    finally:
        podman._run(podman.mode(), ["rmi", "--force", "--ignore", tag])


@pytest.mark.podman
@pytest.mark.docker
@pytest.mark.django_db
def test_a_task_with_requirements_runs_on_podman_and_is_refused_on_bwrap(
    podman_node: str, tmp_path, settings, researcher, client_for
):
    task = task_with(tmp_path, "pd_tabulate_podman", f"requirements: ['{PACKAGE}']\n")
    page = client_for(researcher).get(f"/tasks/{task.code}/").content.decode()
    assert "not built yet" in page and "does not answer" not in page
    assert task_image_ensure(task) == podman_node == task_image(task)
    page = client_for(researcher).get(f"/tasks/{task.code}/").content.decode()
    assert "badge ok" in page and "does not answer" not in page  # the image line asks podman, not Docker

    settings.SANDBOX_BACKEND = "bwrap"
    with pytest.raises(TaskNotRunnable, match=r"only the Docker and Podman backends install .* backend is bwrap"):
        task_image_ensure(task)
    page = client_for(researcher).get(f"/tasks/{task.code}/").content.decode()
    assert "the bwrap backend runs no images" in page
