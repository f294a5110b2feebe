"""Image variants: the sandbox image plus a task's own requirements, built from the package registry
(wheels downloaded on the host, installed offline in `docker build`), named by the hash of the
inputs, shared by tasks with the same needs, reused once built."""

from __future__ import annotations

import shutil

import pytest

from benchmark.models import Run
from benchmark.runs.services import run_execute
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
