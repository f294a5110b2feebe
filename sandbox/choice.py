"""Which sandbox backend `make up` uses on this machine, and how it gets there: a pure function.

The order (issues 19, 30, 32): a Docker engine that answers; Podman where it runs sandboxes (a node
without a Docker daemon: rootless where the limits hold, else root with a user namespace, see
sandbox/podman.py; the image is loaded into its store once, by the first sandbox); an installed
engine that make up can start (a service manager, else `dockerd` itself), or on Debian/Ubuntu as root docker.io (and debootstrap)
installed with apt and started, unless REFEREE_NO_SYSTEM_INSTALL is set; bubblewrap where it can
create namespaces (weaker limits, said in the UI), installed with apt as root on Debian/Ubuntu when
missing; otherwise stop, with the one command to run on this system. What make up tried and how it
went this time (an engine started, a start or an install that failed) is part of the machine's
facts, so every reason names what really happened. With Docker, the image comes by its hash tag if it exists,
else from `docker build` of sandbox/images/Dockerfile where a registry answers (no root needed),
else from the offline debootstrap build (root). `choose()` takes what the machine has
(`Machine`, gathered by sandbox/provision.py) and decides; nothing here looks at the machine.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

DOCKER, PODMAN, BWRAP = "docker", "podman", "bwrap"
# How the image is made when its tag is missing.
DOCKERFILE, DEBOOTSTRAP = "dockerfile", "debootstrap"
INSTALL_DOCKER, START_ENGINE, INSTALL_DEBOOTSTRAP = "install docker.io", "start the engine", "install debootstrap"
INSTALL_BWRAP = "install bubblewrap"


@dataclass(frozen=True)
class Machine:
    engine: bool  # a Docker engine answers
    root: bool
    apt: bool  # Debian or Ubuntu with apt-get
    dockerd: bool  # the engine is installed (dockerd on PATH) but may not run
    debootstrap: bool
    bwrap: bool  # bubblewrap can create its namespaces here
    registry: bool  # a container registry answers
    image: bool = False  # the hash-tagged sandbox image is already in the engine
    installs_allowed: bool = True  # REFEREE_NO_SYSTEM_INSTALL unset
    bwrap_problem: str = ""  # why bwrap cannot, when it cannot
    engine_problem: str = ""  # why no engine answers
    build_failed: str = ""  # the image build was tried here and failed (how)
    # What make up did this time (sandbox/provision.py), for the reason it gives:
    engine_started: str = ""  # how it started the engine, e.g. "... so make up started dockerd itself (pid 5)"
    engine_start_failed: str = ""  # why the engine could not be started (each way tried, and what it said)
    install_failed: str = ""  # why an apt install failed
    podman: bool = False  # podman runs sandboxes here (sandbox.podman.probe)
    podman_problem: str = ""  # why podman cannot, where it is installed
    podman_image: bool = False  # the hash-tagged image is already in podman's store
    podman_mode: str = ""  # how podman runs here (rootless, or root with a user namespace), in words


@dataclass(frozen=True)
class Choice:
    backend: str | None  # docker, bwrap, or None: stop
    reason: str
    steps: tuple[str, ...] = ()  # system changes to make first, in order
    image: str | None = None  # dockerfile / debootstrap when the image must be built; None otherwise
    command: str | None = None  # for a stop: the one command that gets this machine going
    machine: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


NO_INSTALL = "REFEREE_NO_SYSTEM_INSTALL is set, so make up installs nothing"


@dataclass(frozen=True)
class ImageWay:
    ok: bool
    how: str
    image: str | None = None
    steps: tuple[str, ...] = ()


def image_way(m: Machine) -> ImageWay:
    """How the hash-tagged image comes to be, once an engine runs."""
    if m.build_failed:
        return ImageWay(False, f"its {m.build_failed} build failed (see the log above)")
    if m.image:
        return ImageWay(True, "the sandbox image is present")
    if m.registry:
        return ImageWay(True, "the image is built from sandbox/images/Dockerfile (a registry answers)", DOCKERFILE)
    if m.root and m.debootstrap:
        return ImageWay(True, "the image is built offline with debootstrap (no registry answers)", DEBOOTSTRAP)
    if m.root and m.apt and m.installs_allowed and not m.install_failed:
        how = "debootstrap is installed with apt to build the image offline (no registry answers)"
        return ImageWay(True, how, DEBOOTSTRAP, (INSTALL_DEBOOTSTRAP,))
    if not m.root:
        return ImageWay(False, "no registry answers for `docker build`, and the offline debootstrap build needs root")
    return ImageWay(False, "no registry answers and debootstrap is missing" + _no_install_note(m))


def _no_install(m: Machine) -> str:
    """Why no apt install is made where one could be (root on Debian/Ubuntu): the real reason, or ""."""
    if not (m.root and m.apt):
        return ""
    if m.install_failed:
        return f"installing with apt failed: {m.install_failed}"
    return "" if m.installs_allowed else NO_INSTALL


def _no_install_note(m: Machine) -> str:
    why = _no_install(m)
    return f" ({why})" if why else ""


def stop_command(m: Machine, *, engine_answers: bool) -> str:
    """The one command that gives this machine a sandbox."""
    sudo = "" if m.root else "sudo "
    if engine_answers:  # only the image is missing
        build = ".venv/bin/python manage.py build_sandbox_image"
        if m.root:
            return "apt-get install -y debootstrap && make up" if m.apt else "install debootstrap, then make up"
        return f"sudo apt-get install -y debootstrap && sudo {build}" if m.apt else f"sudo {build} (needs debootstrap)"
    if m.engine_start_failed:
        # The engine is installed and will not start here: bubblewrap is the other way, where it can run.
        if m.apt and not m.bwrap_problem:
            return f"{sudo}apt-get install -y bubblewrap && make up"
        return "dockerd --debug   (by hand, to see why the engine stops here; fix that, then make up)"
    if m.apt and m.root:
        return "apt-get install -y docker.io debootstrap && make up"
    if m.apt:
        return "sudo apt-get install -y docker.io && sudo usermod -aG docker $USER   (log in again, then make up)"
    return "install Docker Engine (https://docs.docker.com/engine/install/) and start it, then make up"


def _no_engine(m: Machine) -> tuple[str, tuple[str, ...], str | None, str]:
    """Without an answering engine: (why, steps, image way, "") for an engine make up can start or
    install, or ("", (), None, why not) when it cannot."""
    why_not = f"no Docker engine answers ({m.engine_problem})" if m.engine_problem else "no Docker engine answers"
    if m.engine_start_failed:
        return "", (), None, f"{why_not}, and make up could not start it: {m.engine_start_failed}"
    can_start = m.root and m.dockerd
    can_install = m.root and m.apt and m.installs_allowed and not m.install_failed
    if not (can_start or can_install):
        why = _no_install(m)  # root without dockerd: docker.io could have been installed
        return "", (), None, f"{why_not}, and {why}" if why else why_not
    if m.dockerd:
        # Whether the image is there can only be seen once the engine answers: the next choice says.
        return f"{why_not}; Docker is installed, so make up starts the engine", (START_ENGINE,), None, ""
    way = image_way(m)  # installing an engine is worth it only where the image can then be made
    if not way.ok:
        return "", (), None, f"{why_not}; an engine could be installed, but the sandbox image cannot be made: {way.how}"
    doing = "on Debian/Ubuntu as root make up installs docker.io with apt and starts the engine"
    return f"{why_not}; {doing}; {way.how}", (INSTALL_DOCKER, START_ENGINE, *way.steps), way.image, ""


def _podman(m: Machine, lead: str) -> Choice | None:
    """Podman, where it runs and the image is in its store or can be made the ways Docker's can."""
    if not m.podman:
        return None
    if m.podman_image:
        how = "the sandbox image is in podman's store"
    else:
        way = image_way(m)
        if not way.ok or way.steps:
            return None
        how = f"{way.how[0].lower()}{way.how[1:]}, and loaded into podman's store once, by the first sandbox"
    mode = f" ({m.podman_mode})" if m.podman_mode else ""
    reason = f"{lead}; podman runs sandboxes here{mode}, with the Docker backend's walls; {how}"
    return Choice(PODMAN, reason, machine=asdict(m))


def choose(m: Machine) -> Choice:
    facts = asdict(m)
    # 1. A Docker engine that answers (perhaps started by make up a moment ago).
    if m.engine:
        lead = f"{m.engine_started}, and the engine answers" if m.engine_started else "a Docker engine answers"
        way = image_way(m)
        if way.ok:
            return Choice(DOCKER, f"{lead}; {way.how}", way.steps, way.image, machine=facts)
        why_not = f"{lead}, but the sandbox image cannot be made here: {way.how}"
        podman = _podman(m, why_not)
        if podman is not None:
            return podman
    # 2. Podman where it runs (a node without a Docker daemon); else an engine that make up can
    # start, or install with apt and start.
    else:
        no_engine = f"no Docker engine answers ({m.engine_problem})" if m.engine_problem else "no Docker engine answers"
        podman = _podman(m, no_engine)
        if podman is not None:
            return podman
        reason, steps, image, why_not = _no_engine(m)
        if reason:
            return Choice(DOCKER, reason, steps, image, machine=facts)
    if m.podman_problem:
        why_not = f"{why_not}; podman cannot run sandboxes here ({m.podman_problem})"
    # 3. Bubblewrap: there and working, or installed with apt where it is missing.
    if m.bwrap:
        reason = f"{why_not}; bubblewrap isolates the agents instead, with weaker limits than Docker"
        return Choice(BWRAP, reason, machine=facts)
    missing = not m.bwrap_problem
    if missing and m.root and m.apt and m.installs_allowed and not m.install_failed:
        reason = (
            f"{why_not}; on Debian/Ubuntu as root make up installs bubblewrap with apt, which isolates the agents"
            " instead, with weaker limits than Docker"
        )
        return Choice(BWRAP, reason, (INSTALL_BWRAP,), machine=facts)
    # 4. Stop, saying what to run.
    if m.bwrap_problem:
        bwrap = f"bubblewrap cannot run here ({m.bwrap_problem})"
    else:
        said = _no_install(m) in why_not  # already named for docker.io
        bwrap = "bubblewrap is not installed" + ("" if said else _no_install_note(m))
    command = stop_command(m, engine_answers=m.engine)
    return Choice(None, f"{why_not}, and {bwrap}", command=command, machine=facts)
