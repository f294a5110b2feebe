"""sandbox/choice.py: the backend `make up` chooses is a pure function of what the machine has."""

from __future__ import annotations

from dataclasses import replace

import pytest

from sandbox.choice import (
    BWRAP,
    DEBOOTSTRAP,
    DOCKER,
    DOCKERFILE,
    INSTALL_BWRAP,
    INSTALL_DEBOOTSTRAP,
    INSTALL_DOCKER,
    PODMAN,
    START_ENGINE,
    Machine,
    choose,
)

# A fresh Debian machine, as root, with nothing installed and no registry (this CI machine minus Docker).
FRESH_DEBIAN_ROOT = Machine(
    engine=False, root=True, apt=True, dockerd=False, debootstrap=False, bwrap=False, registry=False
)
# A laptop: an engine the user may talk to, no root.
LAPTOP = Machine(engine=True, root=False, apt=True, dockerd=True, debootstrap=False, bwrap=True, registry=True)


def test_it_uses_a_reachable_engine_and_an_image_that_is_there():
    choice = choose(replace(LAPTOP, image=True))
    assert (choice.backend, choice.steps, choice.image) == (DOCKER, (), None)
    assert choice.reason == "a Docker engine answers; the sandbox image is present"


def test_it_builds_from_the_dockerfile_where_a_registry_answers_without_root():
    choice = choose(LAPTOP)
    assert (choice.backend, choice.image, choice.steps) == (DOCKER, DOCKERFILE, ())
    assert "registry answers" in choice.reason


def test_it_builds_offline_with_debootstrap_as_root_without_a_registry():
    machine = replace(LAPTOP, root=True, registry=False, debootstrap=True)
    assert (choose(machine).backend, choose(machine).image, choose(machine).steps) == (DOCKER, DEBOOTSTRAP, ())
    # debootstrap missing: apt installs it first, unless installs are off.
    missing = replace(machine, debootstrap=False)
    assert (choose(missing).image, choose(missing).steps) == (DEBOOTSTRAP, (INSTALL_DEBOOTSTRAP,))
    assert choose(replace(missing, installs_allowed=False, bwrap=False)).backend is None


def test_it_falls_back_to_bwrap_when_the_engine_answers_but_no_image_can_be_made():
    machine = replace(LAPTOP, registry=False)  # no root for debootstrap, no registry for docker build
    choice = choose(machine)
    assert choice.backend == BWRAP
    assert "the offline debootstrap build needs root" in choice.reason and "weaker limits" in choice.reason
    stop = choose(replace(machine, bwrap=False, bwrap_problem="setting up uid map: Permission denied"))
    assert stop.backend is None
    assert stop.command == "sudo apt-get install -y debootstrap && sudo .venv/bin/python manage.py build_sandbox_image"
    assert "bubblewrap cannot run here (setting up uid map: Permission denied)" in stop.reason


def test_it_installs_docker_on_debian_as_root_and_starts_it():
    choice = choose(FRESH_DEBIAN_ROOT)
    assert choice.backend == DOCKER
    assert choice.steps == (INSTALL_DOCKER, START_ENGINE, INSTALL_DEBOOTSTRAP)
    assert choice.image == DEBOOTSTRAP
    assert "installs docker.io with apt and starts the engine" in choice.reason
    with_registry = choose(replace(FRESH_DEBIAN_ROOT, registry=True))
    assert (with_registry.steps, with_registry.image) == ((INSTALL_DOCKER, START_ENGINE), DOCKERFILE)


def test_it_starts_an_installed_engine_that_is_not_running():
    machine = replace(FRESH_DEBIAN_ROOT, dockerd=True, debootstrap=True)
    assert choose(machine).steps == (START_ENGINE,)
    # Whether the image is in that engine is seen once it answers, so no way to build it is needed first.
    assert choose(replace(machine, debootstrap=False, apt=False)).steps == (START_ENGINE,)
    # Starting it needs no package manager, so a root machine without apt does it too.
    assert choose(replace(machine, apt=False)).steps == (START_ENGINE,)
    # ... and it needs no install either, so REFEREE_NO_SYSTEM_INSTALL does not stop it.
    assert choose(replace(machine, installs_allowed=False)).steps == (START_ENGINE,)


def test_it_installs_nothing_when_told_not_to_and_uses_bwrap():
    machine = replace(FRESH_DEBIAN_ROOT, installs_allowed=False, bwrap=True)
    choice = choose(machine)
    assert (choice.backend, choice.steps) == (BWRAP, ())
    assert "REFEREE_NO_SYSTEM_INSTALL is set, so make up installs nothing" in choice.reason
    stop = choose(replace(machine, bwrap=False))
    assert stop.backend is None and stop.command == "apt-get install -y docker.io debootstrap && make up"
    assert stop.reason.endswith("and bubblewrap is not installed")


def test_it_uses_bwrap_without_root_and_without_an_engine():
    machine = replace(LAPTOP, engine=False, dockerd=False, engine_problem="Connection refused")
    choice = choose(machine)
    assert choice.backend == BWRAP
    assert choice.reason.startswith("no Docker engine answers (Connection refused); bubblewrap isolates")


@pytest.mark.parametrize(
    ("apt", "command"),
    [
        (True, "sudo apt-get install -y docker.io && sudo usermod -aG docker $USER   (log in again, then make up)"),
        (False, "install Docker Engine (https://docs.docker.com/engine/install/) and start it, then make up"),
    ],
)
def test_it_stops_with_the_one_command_for_this_system(apt, command):
    machine = Machine(engine=False, root=False, apt=apt, dockerd=False, debootstrap=False, bwrap=False, registry=True)
    choice = choose(machine)
    assert (choice.backend, choice.command) == (None, command)


def test_it_says_when_the_build_it_tried_failed():
    machine = replace(LAPTOP, build_failed=DOCKERFILE)
    choice = choose(machine)
    assert choice.backend == BWRAP and "its dockerfile build failed" in choice.reason


def test_it_records_what_the_machine_had():
    assert choose(FRESH_DEBIAN_ROOT).machine["apt"] is True
    assert choose(FRESH_DEBIAN_ROOT).as_dict()["machine"]["engine"] is False


# A container without an init system (issue 30): docker.io installed, `service docker start` failed.
SERVICE_FAILED = "`service docker start` exited with code 1 (/etc/init.d/docker: 62: ulimit: error setting limit)"
NO_INIT = replace(FRESH_DEBIAN_ROOT, dockerd=True, debootstrap=True, engine_problem="Connection refused")


def test_it_says_how_it_started_the_engine():
    how = f"{SERVICE_FAILED}, so make up started dockerd itself (pid 4242, log var/dockerd.log)"
    choice = choose(replace(NO_INIT, engine=True, image=True, engine_started=how))
    assert (choice.backend, choice.steps) == (DOCKER, ())
    assert choice.reason == f"{how}, and the engine answers; the sandbox image is present"


def test_it_installs_and_uses_bwrap_when_the_engine_cannot_start():
    failed = f"{SERVICE_FAILED}; dockerd exited with code 1: failed to mount overlay (its log: var/dockerd.log)"
    choice = choose(replace(NO_INIT, engine_start_failed=failed))
    assert (choice.backend, choice.steps) == (BWRAP, (INSTALL_BWRAP,))
    assert choice.reason.startswith(
        f"no Docker engine answers (Connection refused), and make up could not start it: {failed}"
    )
    assert "make up installs bubblewrap with apt" in choice.reason
    assert "REFEREE_NO_SYSTEM_INSTALL" not in choice.reason  # it is not set: the reason never says so
    # bubblewrap there already: used as it is.
    there = choose(replace(NO_INIT, engine_start_failed=failed, bwrap=True))
    assert (there.backend, there.steps) == (BWRAP, ())
    assert "make up could not start it" in there.reason and "installs" not in there.reason


def test_it_never_starts_again_an_engine_that_failed_to_start():
    machine = replace(NO_INIT, engine_start_failed="dockerd exited with code 1: x", installs_allowed=False)
    stop = choose(machine)
    assert stop.backend is None and START_ENGINE not in stop.steps
    assert stop.reason.endswith(
        "and bubblewrap is not installed (REFEREE_NO_SYSTEM_INSTALL is set, so make up installs nothing)"
    )
    assert stop.command == "apt-get install -y bubblewrap && make up"
    broken = choose(replace(machine, bwrap_problem="setting up uid map: Permission denied"))
    assert "bubblewrap cannot run here (setting up uid map: Permission denied)" in broken.reason
    assert broken.command.startswith("dockerd --debug")


def test_it_names_a_failed_install_and_tries_no_other():
    failed = "`apt-get update -qq` exited with code 100 (Could not resolve 'deb.debian.org')"
    choice = choose(replace(FRESH_DEBIAN_ROOT, install_failed=failed))
    assert choice.backend is None and choice.steps == ()
    assert f"installing with apt failed: {failed}" in choice.reason
    assert "REFEREE_NO_SYSTEM_INSTALL" not in choice.reason
    assert choose(replace(FRESH_DEBIAN_ROOT, install_failed=failed, bwrap=True)).backend == BWRAP


# A Slurm compute node: no Docker daemon, podman runs (rootless), no root, no registry.
SLURM_NODE = Machine(
    engine=False,
    root=False,
    apt=True,
    dockerd=False,
    debootstrap=False,
    bwrap=True,
    registry=False,
    podman=True,
    podman_image=True,
    podman_mode="rootless, podman runs as the worker's own account",
)


def test_it_uses_podman_where_no_docker_engine_answers():
    choice = choose(SLURM_NODE)
    assert (choice.backend, choice.steps, choice.image) == (PODMAN, (), None)
    assert choice.reason == (
        "no Docker engine answers; podman runs sandboxes here (rootless, podman runs as the worker's own account),"
        " with the Docker backend's walls; the sandbox image is in podman's store"
    )


def test_it_keeps_docker_first_where_its_engine_answers():
    assert choose(replace(LAPTOP, image=True, podman=True, podman_image=True)).backend == DOCKER


def test_it_takes_podman_before_starting_or_installing_a_docker_engine():
    stopped = replace(FRESH_DEBIAN_ROOT, dockerd=True, podman=True, podman_image=True)
    assert (choose(stopped).backend, choose(stopped).steps) == (PODMAN, ())
    assert choose(replace(stopped, podman=False)).steps == (START_ENGINE,)


def test_it_uses_podman_only_where_the_image_can_come_to_its_store():
    # No image in podman's store, no registry, no root for debootstrap: bubblewrap, and why not podman.
    choice = choose(replace(SLURM_NODE, podman_image=False))
    assert choice.backend == BWRAP
    registry = choose(replace(SLURM_NODE, podman_image=False, registry=True))
    assert registry.backend == PODMAN and "loaded into podman's store once, by the first sandbox" in registry.reason


def test_it_says_why_podman_cannot_run_when_it_falls_back_to_bwrap():
    problem = "rootless podman cannot hold the sandbox's limits: the host has cgroups v1"
    choice = choose(replace(SLURM_NODE, podman=False, podman_image=False, podman_problem=problem))
    assert choice.backend == BWRAP
    assert f"podman cannot run sandboxes here ({problem})" in choice.reason
