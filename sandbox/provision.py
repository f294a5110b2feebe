"""What `make up` looks at and changes on the machine to get a sandbox: the side of sandbox/choice.py
that touches the system (probing, apt, starting the engine, remembering the choice in var/).

`settle()` is the loop: probe, choose, make the choice's steps; a step that fails is recorded as a
fact of the machine and the choice is made again, so the way taken and its reason always say what
really happened (issue 30: a container without an init system, where `service docker start` fails
and make up starts `dockerd` itself, or falls back to bubblewrap when dockerd cannot start either).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from sandbox.choice import (
    DOCKER,
    INSTALL_BWRAP,
    INSTALL_DEBOOTSTRAP,
    INSTALL_DOCKER,
    START_ENGINE,
    Choice,
    Machine,
    choose,
)

Log = Callable[[str], None]
REGISTRY = "https://registry-1.docker.io/v2/"  # where `FROM python:3.11-slim` comes from
NO_INSTALL_ENV = "REFEREE_NO_SYSTEM_INSTALL"
CHOICE_FILE = "sandbox_backend.json"  # in var/, read by config/settings.py
DOCKERD_LOG, DOCKERD_PID = "dockerd.log", "dockerd.pid"  # in var/: a dockerd that make up started


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
    podman, podman_problem, podman_image, podman_mode = _podman_facts()
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
        podman=podman,
        podman_problem=podman_problem[:300],
        podman_image=podman_image,
        podman_mode=podman_mode,
    )


def _podman_facts() -> tuple[bool, str, bool, str]:
    """(runs, why not where installed, image in its store, mode in words) of podman on this machine."""
    if not shutil.which("podman"):
        return False, "", False, ""
    from sandbox import podman
    from sandbox.recipe import default_tag

    problem = podman.probe()
    if problem:
        return False, problem, False, ""
    current = podman.mode()
    mode = f"rootless, {current.note}" if current.kind == podman.ROOTLESS else current.note
    return True, "", podman.image_exists(default_tag()), mode


# -- the steps a choice may ask for ------------------------------------------------------------
class StepFailed(RuntimeError):
    """A step could not be made; `fact` names the Machine field that records why (sandbox/choice.py)."""

    def __init__(self, fact: str, reason: str) -> None:
        super().__init__(reason)
        self.fact, self.reason = fact, reason


@dataclass
class EngineStart:
    """An engine make up got going: `how` for the reason it gives; `proc` and `restart` when it is a
    dockerd that make up started itself and so supervises and stops (a service manager's engine is
    the system's, and outlives make up)."""

    how: str
    proc: subprocess.Popen | None = None
    restart: Callable[[], subprocess.Popen] | None = None
    pidfile: Path | None = None


def apt_install(packages: list[str], log: Log) -> None:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    log(f"installing {' '.join(packages)} with apt ({NO_INSTALL_ENV}=1 turns automatic installs off) ...")
    for args in (
        ["apt-get", "update", "-qq"],
        ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *packages],
    ):
        result = subprocess.run(args, env=env, capture_output=True, text=True)
        if result.returncode != 0:
            said = _last_line(result.stderr) or _last_line(result.stdout) or "no message"
            raise StepFailed("install_failed", f"`{' '.join(args)}` exited with code {result.returncode}: {said}")


def service_commands() -> list[list[str]]:
    """The service manager that would start the engine on this machine, if one runs here."""
    if Path("/run/systemd/system").is_dir() and shutil.which("systemctl"):
        return [["systemctl", "start", "docker"]]
    if shutil.which("service") and Path("/etc/init.d/docker").exists():
        return [["service", "docker", "start"]]
    return []


def _last_line(text: str) -> str:
    """The last thing a program said: its last non-empty line, a logrus line's msg only."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return ""
    found = re.search(r'msg="((?:[^"\\]|\\.)*)"', lines[-1])
    return (found.group(1).replace('\\"', '"') if found else lines[-1])[:300]


def _wait_engine(timeout: float, proc: subprocess.Popen | None = None) -> bool:
    """True once the engine answers; False after `timeout` or as soon as `proc` exits."""
    deadline = time.monotonic() + timeout
    while True:
        if engine()[0]:
            return True
        if time.monotonic() >= deadline or (proc is not None and proc.poll() is not None):
            return False
        time.sleep(0.5)


def dockerd_starter(var_dir: Path, args: Sequence[str] = ()) -> Callable[[], subprocess.Popen]:
    """Starts `dockerd` (in a session of its own, output appended to var/dockerd.log) each time it is
    called: the first start, and the supervisor's restarts."""
    logfile = var_dir / DOCKERD_LOG

    def start() -> subprocess.Popen:
        with logfile.open("ab") as out:
            out.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} make up starts dockerd\n".encode())
            out.flush()
            proc = subprocess.Popen(
                ["dockerd", *args], stdout=out, stderr=out, stdin=subprocess.DEVNULL, start_new_session=True
            )
        (var_dir / DOCKERD_PID).write_text(f"{proc.pid}\n")
        return proc

    return start


def start_engine(
    log: Log,
    *,
    var_dir: Path,
    services: list[list[str]] | None = None,
    dockerd_args: Sequence[str] = (),
    timeout: float = 60,
    service_timeout: float = 20,
) -> EngineStart:
    """Start the Docker engine: through the service manager where one runs (the engine then is the
    system's and outlives make up), else, or when that fails, `dockerd` itself, which make up then
    supervises and stops with the rest. A dockerd that is already running is never touched: a second
    one refuses to start (its pid file), and that refusal is the reason given. Raises StepFailed
    naming each way tried and what it said."""
    tried: list[str] = []
    for command in service_commands() if services is None else services:
        said = " ".join(command)
        log(f"starting the Docker engine: {said}")
        try:
            result = subprocess.run(command, capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired) as exc:
            tried.append(f"`{said}` failed ({exc})")
            continue
        if result.returncode != 0:
            words = _last_line(result.stderr) or _last_line(result.stdout) or "no message"
            tried.append(f"`{said}` exited with code {result.returncode} ({words})")
        elif _wait_engine(service_timeout):
            return EngineStart(how=f"`{said}` started the Docker engine")
        else:
            tried.append(f"`{said}` succeeded but no engine answered within {service_timeout:g} s")
    if not tried:
        tried.append("no service manager runs here (no systemd, no /etc/init.d/docker)")
    logfile = var_dir / DOCKERD_LOG
    log(f"starting the Docker engine: dockerd itself ({'; '.join(tried)}); its log: {logfile}")
    offset = logfile.stat().st_size if logfile.exists() else 0
    start = dockerd_starter(var_dir, dockerd_args)
    try:
        proc = start()
    except OSError as exc:
        raise StepFailed("engine_start_failed", f"{'; '.join(tried)}; dockerd could not be run ({exc})") from exc
    try:
        answers = _wait_engine(timeout, proc)
    except BaseException:  # Ctrl-C while waiting: a dockerd nobody supervises yet must not stay behind
        _end(proc)
        raise
    if answers:
        log(f"the Docker engine answers (dockerd pid {proc.pid}, started by make up, stopped with it)")
        how = f"{'; '.join(tried)}, so make up started dockerd itself (pid {proc.pid}, log {logfile})"
        return EngineStart(how=how, proc=proc, restart=start, pidfile=var_dir / DOCKERD_PID)
    code = proc.poll()
    if code is None:  # running but not answering: it is make up's own, so it goes
        _end(proc)
        ended = f"dockerd did not answer within {timeout:g} s"
    else:
        ended = f"dockerd exited with code {code}"
    (var_dir / DOCKERD_PID).unlink(missing_ok=True)
    with logfile.open("rb") as read:
        read.seek(offset)
        words = _last_line(read.read().decode(errors="replace")) or "nothing in its log"
    raise StepFailed("engine_start_failed", f"{'; '.join(tried)}; {ended}: {words} (its log: {logfile})")


def _end(proc: subprocess.Popen, timeout: float = 30) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def apply_steps(choice: Choice, log: Log, *, var_dir: Path, **engine_options: Any) -> EngineStart | None:
    """Make the system changes the choice lists (installs batched into one apt call); the engine it
    started, if it did. Raises StepFailed."""
    wanted = ((INSTALL_DOCKER, "docker.io"), (INSTALL_DEBOOTSTRAP, "debootstrap"), (INSTALL_BWRAP, "bubblewrap"))
    packages = [package for step, package in wanted if step in choice.steps]
    if packages:
        apt_install(packages, log)
    if START_ENGINE in choice.steps:
        return start_engine(log, var_dir=var_dir, **engine_options)
    return None


@dataclass
class Settled:
    choice: Choice
    engine: EngineStart | None  # an engine make up started this time


def settle(
    *,
    environ: dict[str, str],
    log: Log,
    var_dir: Path,
    build_image: Callable[[str], bool],
    rounds: int = 6,
    **engine_options: Any,
) -> Settled:
    """Probe, choose, make the steps, and choose again until nothing is left to do. A step that fails
    becomes a fact of the machine (why it failed), so the next choice takes another way and says why;
    an image build that fails likewise. `build_image(method)` builds the hash-tagged image."""
    facts: dict[str, str] = {}
    started: EngineStart | None = None
    choice = Choice(None, "nothing chosen")
    try:
        for _ in range(rounds):
            choice = choose(replace(probe_machine(environ=environ), **facts))
            if choice.steps:
                log(f"{choice.reason}; first: {', '.join(choice.steps)}")
                try:
                    engine_started = apply_steps(choice, log, var_dir=var_dir, **engine_options)
                except StepFailed as exc:
                    log(f"that did not work: {exc.reason}; choosing again")
                    facts[exc.fact] = exc.reason
                    continue
                if engine_started is not None:
                    started = engine_started
                    facts["engine_started"] = engine_started.how
                continue
            if choice.backend == DOCKER and choice.image:
                if not build_image(choice.image):
                    facts["build_failed"] = choice.image
                continue
            break
    except BaseException:  # Ctrl-C during an install or a build: the dockerd it started goes too
        if started is not None:
            stop_engine(started, log)
        raise
    return Settled(choice, started)


def stop_engine(started: EngineStart, log: Log, timeout: float = 30) -> None:
    """Stop a dockerd that make up started and does not use after all."""
    if started.proc is None or started.proc.poll() is not None:
        return
    log(f"stopping the dockerd it started (pid {started.proc.pid})")
    _end(started.proc, timeout)
    if started.pidfile is not None:
        started.pidfile.unlink(missing_ok=True)


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
