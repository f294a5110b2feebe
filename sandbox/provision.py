"""What `make up` looks at and changes on the machine to get a sandbox: the side of sandbox/choice.py
that touches the system (probing, apt, starting the engine, remembering the choice in var/)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sandbox.choice import INSTALL_DEBOOTSTRAP, INSTALL_DOCKER, START_ENGINE, Choice, Machine

Log = Callable[[str], None]
REGISTRY = "https://registry-1.docker.io/v2/"  # where `FROM python:3.11-slim` comes from
NO_INSTALL_ENV = "REFEREE_NO_SYSTEM_INSTALL"
CHOICE_FILE = "sandbox_backend.json"  # in var/, read by config/settings.py


def installs_allowed(environ: dict[str, str] | None = None) -> bool:
    value = (os.environ if environ is None else environ).get(NO_INSTALL_ENV, "").strip().lower()
    return value in {"", "0", "false", "no", "off"}


def debian_like() -> bool:
    try:
        release = Path("/etc/os-release").read_text().lower()
    except OSError:
        return False
    ids = " ".join(line.split("=", 1)[1] for line in release.splitlines() if line.startswith(("id=", "id_like=")))
    return "debian" in ids or "ubuntu" in ids


def registry_answers(url: str = REGISTRY, timeout: float = 3.0) -> bool:
    """Any HTTP answer counts (Docker Hub says 401 to an anonymous /v2/); no DNS or no route does not."""
    try:
        urllib.request.urlopen(url, timeout=timeout).close()
    except urllib.error.HTTPError:
        return True
    except (urllib.error.URLError, OSError):
        return False
    return True


def engine() -> tuple[bool, str]:
    from sandbox.docker import engine_available

    return engine_available()


def probe_machine(*, environ: dict[str, str] | None = None) -> Machine:
    from sandbox.bwrap import probe

    reachable, engine_detail = engine()
    image = False
    if reachable:
        from sandbox.docker import image_exists
        from sandbox.recipe import default_tag

        image = image_exists(default_tag())
    # Not installed is said as such by choose(); a problem is kept for a bwrap that is there but cannot run.
    bwrap_problem = (probe() or "") if shutil.which("bwrap") else ""
    return Machine(
        engine=reachable,
        root=os.geteuid() == 0,
        apt=bool(shutil.which("apt-get")) and debian_like(),
        dockerd=bool(shutil.which("dockerd")),
        debootstrap=bool(shutil.which("debootstrap")),
        bwrap=bool(shutil.which("bwrap")) and not bwrap_problem,
        registry=registry_answers(),
        image=image,
        installs_allowed=installs_allowed(environ),
        bwrap_problem=bwrap_problem,
        engine_problem="" if reachable else engine_detail.removeprefix("no Docker engine reachable: ")[:300],
    )


# -- the steps a choice may ask for ------------------------------------------------------------
def apt_install(packages: list[str], log: Log) -> None:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    log(f"installing {' '.join(packages)} with apt ({NO_INSTALL_ENV}=1 turns automatic installs off) ...")
    subprocess.run(["apt-get", "update", "-qq"], env=env, check=True)
    subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", *packages], env=env, check=True)


def start_engine(log: Log, *, var_dir: Path, timeout: float = 60) -> None:
    """Start the Docker engine as a system service; it outlives `make up`, as a service does."""
    if Path("/run/systemd/system").is_dir() and shutil.which("systemctl"):
        log("starting the Docker engine: systemctl start docker")
        subprocess.run(["systemctl", "start", "docker"], check=True)
    elif shutil.which("service") and Path("/etc/init.d/docker").exists():
        log("starting the Docker engine: service docker start")
        subprocess.run(["service", "docker", "start"], check=True)
    else:
        logfile = var_dir / "dockerd.log"
        log(f"starting the Docker engine: dockerd (no init system here; its log is {logfile})")
        with logfile.open("ab") as out:
            subprocess.Popen(["dockerd"], stdout=out, stderr=out, start_new_session=True)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ok, detail = engine()
        if ok:
            log(f"the Docker engine answers ({detail})")
            return
        time.sleep(1)
    raise RuntimeError(f"the Docker engine did not answer within {timeout:g} s after starting it")


def apply_steps(choice: Choice, log: Log, *, var_dir: Path) -> None:
    """Make the system changes the choice lists; installs are batched into one apt call."""
    packages = [
        p for step, p in ((INSTALL_DOCKER, "docker.io"), (INSTALL_DEBOOTSTRAP, "debootstrap")) if step in choice.steps
    ]
    if packages:
        apt_install(packages, log)
    if START_ENGINE in choice.steps:
        start_engine(log, var_dir=var_dir)


# -- remembered in var/ ---------------------------------------------------------------------------
def remember(choice: Choice, var_dir: Path) -> Path:
    path = var_dir / CHOICE_FILE
    record: dict[str, Any] = {**choice.as_dict(), "chosen_at": time.strftime("%Y-%m-%d %H:%M:%S %Z")}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, indent=1) + "\n")
    tmp.replace(path)
    return path


def remembered(var_dir: Path) -> dict[str, Any] | None:
    try:
        record = json.loads((var_dir / CHOICE_FILE).read_text())
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None
