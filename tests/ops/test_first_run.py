"""`make up` on a machine without Docker: it says what it chose and why, and an agent run works on
bubblewrap; with no sandbox at all it stops with the one command to run.

The machine state is made for the child: Docker's binaries off PATH (docker, dockerd and
debootstrap live in /usr/local/bin and /usr/sbin here), DOCKER_HOST pointing at no socket, and
REFEREE_NO_SYSTEM_INSTALL=1 so that, as root on Debian, it does not install docker.io instead.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest

from tests.ops.platform import Platform, running


def _path_without_podman() -> str:
    """A PATH on which podman fails as if absent (a machine with neither Docker nor Podman, now that
    CI installs podman): a `podman` that exits 127 shadows /usr/bin's (which /bin is on merged-usr Debian)."""
    shadow = Path(tempfile.mkdtemp(prefix="referee-no-podman-bin-"))
    shadow.chmod(0o755)
    fake = shadow / "podman"
    fake.write_text("#!/bin/sh\necho 'podman: not installed on this machine' >&2\nexit 127\n")
    fake.chmod(0o755)
    return f"{shadow}:/usr/bin:/bin"


NO_DOCKER = {
    "PATH": _path_without_podman(),
    "DOCKER_HOST": "unix:///nonexistent/docker.sock",
    "REFEREE_NO_SYSTEM_INSTALL": "1",
}

RUN_ONE = """
import time
from accounts.roles import RESEARCHER
from accounts.services import user_create
from benchmark.models import AgentConfig, Task
from benchmark.runs.services import run_launch
owner = user_create(username="first", email="first@example.org", role=RESEARCHER, password="pw-first-12345")
agent = AgentConfig.objects.create(name="baseline", kind=AgentConfig.Kind.BASELINE)
(run,) = run_launch(owner=owner, tasks=[Task.objects.get(slug="prisoners_dilemma", is_current=True)], agent=agent)
deadline = time.time() + 300
while run.status in ("queued", "running") and time.time() < deadline:
    time.sleep(0.5)
    run.refresh_from_db()
print("RUN", run.status, run.exit_status, run.step_count, run.best_submission)
"""


@pytest.mark.slow
@pytest.mark.bwrap
def test_it_ends_with_a_working_run_on_bwrap_when_there_is_no_docker(tmp_path: Path) -> None:
    from sandbox.bwrap import probe

    if probe():
        pytest.skip(f"bubblewrap unusable here: {probe()}")
    platform = Platform(tmp_path / "var", **NO_DOCKER).start(timeout=600)
    try:
        assert "sandbox backend: bwrap, because no Docker engine answers" in platform.log
        assert "REFEREE_NO_SYSTEM_INSTALL is set, so make up installs nothing" in platform.log
        assert "bubblewrap's limits, weaker than Docker's:" in platform.log
        chosen = json.loads((platform.var_dir / "sandbox_backend.json").read_text())
        assert chosen["backend"] == "bwrap" and chosen["machine"]["engine"] is False
        sandbox = platform.health()[1]["sandbox"]
        assert (sandbox["backend"], sandbox["available"]) == ("bwrap", True)
        assert sandbox["chosen"]["reason"] == chosen["reason"]
        # The demo's baselines: computed, or the plain reason why not.
        assert "prisoners_dilemma: baseline dev" in platform.log
        assert "not computed here: the bwrap sandbox runs this machine's own Python, which has no" in platform.log
        result = platform.manage("shell", "--no-imports", "-c", RUN_ONE)
        line = next((x for x in result.stdout.splitlines() if x.startswith("RUN ")), result.stdout + result.stderr)
        status, exit_status, steps, best = line.split()[1:5]
        assert (status, exit_status) == ("finished", "submitted"), line
        assert int(steps) >= 2 and float(best) > 0, line
    finally:
        assert platform.stop() == 0


def test_it_stops_with_the_one_command_when_no_sandbox_can_run(tmp_path: Path) -> None:
    bare = tmp_path / "bin"
    bare.mkdir()  # no bwrap, no apt-get, no docker: a PATH with nothing on it
    platform = Platform(tmp_path / "var", **{**NO_DOCKER, "PATH": str(bare)})
    with pytest.raises(AssertionError, match="exited"):
        platform.start(timeout=120)
    assert platform.proc is not None and platform.proc.wait(timeout=30) == 1
    assert "no sandbox can run on this machine: no Docker engine answers" in platform.log
    assert "and bubblewrap is not installed." in platform.log
    assert "To give it one, run:  install Docker Engine (https://docs.docker.com/engine/install/)" in platform.log
    assert "migrating the database" not in platform.log  # it stopped before doing anything else
    assert json.loads((platform.var_dir / "sandbox_backend.json").read_text())["backend"] is None


# -- a machine without an init system (issue 30) --------------------------------------------------
def _machine_without_init(engine, **dockerd) -> dict[str, str]:
    """PATH has a `dockerd` first (the real one, in the second engine's layout), then /usr/bin and
    /bin: no service manager (no systemd runs; `service` lives in /usr/sbin), no debootstrap; DOCKER_HOST
    names the second engine's socket.
    REFEREE_NO_SYSTEM_INSTALL is left unset. The folder is world-readable: a root worker runs bwrap
    (its probe too) as an unprivileged uid, which must reach it."""
    engine.dir.chmod(0o755)
    bin_dir = engine.dir / "bin"
    engine.wrapper(bin_dir, **dockerd)
    return {"PATH": f"{bin_dir}:{NO_DOCKER['PATH']}", "DOCKER_HOST": engine.host}


@pytest.mark.slow
@pytest.mark.docker
def test_it_starts_dockerd_itself_without_an_init_system_and_stops_it_on_sigterm(tmp_path: Path) -> None:
    from sandbox.recipe import default_tag
    from tests.engines import SecondEngine, needs_dockerd

    needs_dockerd()
    engine = SecondEngine()
    try:
        engine.with_image(default_tag())  # the hash-tagged image is there, so nothing is built
        env = _machine_without_init(engine)
        platform = Platform(tmp_path / "var", **env).start(timeout=180, until="migrating the database")
        try:
            log = platform.log
            assert "starting the Docker engine: dockerd itself (no service manager runs here" in log
            pid = int((platform.var_dir / "dockerd.pid").read_text())
            assert (
                "sandbox backend: docker, because no service manager runs here (no systemd, no /etc/init.d/docker),"
                f" so make up started dockerd itself (pid {pid}, log {platform.var_dir / 'dockerd.log'}), and the"
                " engine answers; the sandbox image is present"
            ) in log
            assert "REFEREE_NO_SYSTEM_INSTALL" not in log
            assert running(pid) and engine.answers()
            assert platform.state()["children"]["docker engine"]["pid"] == pid
        finally:
            assert platform.stop() == 0
        assert f"stopping docker engine (pid {pid}) ..." in platform.log and "all stopped" in platform.log
        assert not running(pid) and not engine.answers()
        assert not (platform.var_dir / "dockerd.pid").exists()
    finally:
        engine.remove()


@pytest.mark.slow
@pytest.mark.docker
@pytest.mark.bwrap
def test_it_falls_back_to_bwrap_and_says_why_when_dockerd_cannot_start(tmp_path: Path) -> None:
    from sandbox.bwrap import probe
    from tests.engines import SecondEngine, needs_dockerd

    needs_dockerd()
    if probe():
        pytest.skip(f"bubblewrap unusable here: {probe()}")
    engine = SecondEngine()
    unusable = tmp_path / "a-file"
    unusable.write_text("dockerd cannot keep its data under a file")
    try:
        env = _machine_without_init(engine, data_root=unusable / "docker")
        platform = Platform(tmp_path / "var", **env).start(timeout=180, until="migrating the database")
        try:
            log = platform.log
            assert (
                "sandbox backend: bwrap, because no Docker engine answers (" in log
                and "and make up could not start it: no service manager runs here (no systemd, no"
                " /etc/init.d/docker); dockerd exited with code 1: Unable to get the full path to root"
                in log
            ), log
            assert "bubblewrap isolates the agents instead, with weaker limits than Docker" in log
            assert "REFEREE_NO_SYSTEM_INSTALL" not in log and "with apt" not in log
            assert "docker engine" not in platform.state()["children"]
        finally:
            assert platform.stop() == 0
    finally:
        engine.remove()
