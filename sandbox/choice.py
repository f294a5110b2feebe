"""Which sandbox backend `make up` uses on this machine, and how it gets there: a pure function.

The order (issue 19): a Docker engine that answers; on Debian/Ubuntu as root, install docker.io
(and debootstrap) with apt and start the engine, unless REFEREE_NO_SYSTEM_INSTALL is set;
bubblewrap where it can create namespaces (weaker limits, said in the UI); otherwise stop, with
the one command to run on this system. With Docker, the image comes by its hash tag if it exists,
else from `docker build` of sandbox/images/Dockerfile where a registry answers (no root needed),
else from the offline debootstrap build (root). `choose()` takes what the machine has
(`Machine`, gathered by sandbox/provision.py) and decides; nothing here looks at the machine.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

DOCKER, BWRAP = "docker", "bwrap"
# How the image is made when its tag is missing.
DOCKERFILE, DEBOOTSTRAP = "dockerfile", "debootstrap"
INSTALL_DOCKER, START_ENGINE, INSTALL_DEBOOTSTRAP = "install docker.io", "start the engine", "install debootstrap"


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
    if m.root and m.apt and m.installs_allowed:
        how = "debootstrap is installed with apt to build the image offline (no registry answers)"
        return ImageWay(True, how, DEBOOTSTRAP, (INSTALL_DEBOOTSTRAP,))
    if not m.root:
        return ImageWay(False, "no registry answers for `docker build`, and the offline debootstrap build needs root")
    return ImageWay(False, "no registry answers and debootstrap is missing" + (f" ({NO_INSTALL})" if m.apt else ""))


def stop_command(m: Machine, *, engine_answers: bool) -> str:
    """The one command that gives this machine a sandbox."""
    if engine_answers:  # only the image is missing
        build = ".venv/bin/python manage.py build_sandbox_image"
        if m.root:
            return "apt-get install -y debootstrap && make up" if m.apt else "install debootstrap, then make up"
        return f"sudo apt-get install -y debootstrap && sudo {build}" if m.apt else f"sudo {build} (needs debootstrap)"
    if m.apt and m.root:
        return "apt-get install -y docker.io debootstrap && make up"
    if m.apt:
        return "sudo apt-get install -y docker.io && sudo usermod -aG docker $USER   (log in again, then make up)"
    return "install Docker Engine (https://docs.docker.com/engine/install/) and start it, then make up"


def choose(m: Machine) -> Choice:
    facts = asdict(m)
    # 1. A Docker engine that answers.
    if m.engine:
        way = image_way(m)
        if way.ok:
            return Choice(DOCKER, f"a Docker engine answers; {way.how}", way.steps, way.image, machine=facts)
        why_not = f"a Docker engine answers, but the sandbox image cannot be made here: {way.how}"
    # 2. An engine that make up can start, or install with apt and start.
    else:
        why_not = f"no Docker engine answers ({m.engine_problem})" if m.engine_problem else "no Docker engine answers"
        can_start, can_install = m.root and m.dockerd, m.root and m.apt and m.installs_allowed
        if can_start or can_install:
            way = image_way(m)
            if way.ok:
                steps = (START_ENGINE,) if m.dockerd else (INSTALL_DOCKER, START_ENGINE)
                doing = (
                    "Docker is installed, so make up starts the engine"
                    if m.dockerd
                    else ("on Debian/Ubuntu as root make up installs docker.io with apt and starts the engine")
                )
                reason = f"{why_not}; {doing}; {way.how}"
                return Choice(DOCKER, reason, steps + way.steps, way.image, machine=facts)
            why_not = f"{why_not}; an engine could be started, but the sandbox image cannot be made: {way.how}"
        elif m.root and m.apt:
            why_not = f"{why_not}, and {NO_INSTALL}"
    # 3. Bubblewrap.
    if m.bwrap:
        reason = f"{why_not}; bubblewrap isolates the agents instead, with weaker limits than Docker"
        return Choice(BWRAP, reason, machine=facts)
    # 4. Stop, saying what to run.
    bwrap = f"bubblewrap cannot run here ({m.bwrap_problem})" if m.bwrap_problem else "bubblewrap is not installed"
    command = stop_command(m, engine_answers=m.engine)
    return Choice(None, f"{why_not}, and {bwrap}", command=command, machine=facts)
