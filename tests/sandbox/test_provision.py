"""sandbox/provision.py: what `make up` finds on the machine, and the choice it remembers in var/."""

from __future__ import annotations

import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from django.urls import reverse

from config.redis_server import free_port
from sandbox import provision
from sandbox.choice import BWRAP, Choice

ROOT = Path(__file__).resolve().parents[2]


class _Unauthorized(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self.send_response(401)  # what Docker Hub says to an anonymous /v2/
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def test_it_counts_any_http_answer_as_a_registry_and_no_answer_as_none() -> None:
    server = http.server.HTTPServer(("127.0.0.1", 0), _Unauthorized)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        assert provision.registry_answers(f"http://127.0.0.1:{server.server_port}/v2/") is True
    finally:
        server.shutdown()
    assert provision.registry_answers(f"http://127.0.0.1:{free_port()}/v2/", timeout=1) is False
    assert provision.registry_answers("https://registry.invalid/v2/", timeout=2) is False


def test_it_reads_the_no_install_switch() -> None:
    assert provision.installs_allowed({}) is True
    assert provision.installs_allowed({"REFEREE_NO_SYSTEM_INSTALL": "0"}) is True
    for value in ("1", "true", "yes"):
        assert provision.installs_allowed({"REFEREE_NO_SYSTEM_INSTALL": value}) is False


def test_it_sees_this_machine_as_it_is() -> None:
    machine = provision.probe_machine(environ={"REFEREE_NO_SYSTEM_INSTALL": "1"})
    assert machine.root == (os.geteuid() == 0)
    assert machine.installs_allowed is False
    assert machine.apt == (Path("/usr/bin/apt-get").exists() and provision.debian_like())
    from sandbox.bwrap import probe

    assert machine.bwrap == (probe() is None)
    from sandbox import podman

    assert machine.podman == (shutil.which("podman") is not None and podman.probe() is None)


def _settings_backend(var_dir: Path, **env: str) -> subprocess.CompletedProcess[str]:
    child = {k: v for k, v in os.environ.items() if k != "SANDBOX_BACKEND"}
    child.update({"REFEREE_VAR_DIR": str(var_dir), "DJANGO_SETTINGS_MODULE": "config.settings", **env})
    code = "import django; django.setup(); from django.conf import settings; print(settings.SANDBOX_BACKEND)"
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=child, capture_output=True, text=True)


def test_it_remembers_the_choice_for_every_process_and_lets_the_environment_win(tmp_path: Path) -> None:
    assert _settings_backend(tmp_path).stdout.strip() == "docker"  # nothing chosen yet
    path = provision.remember(Choice(BWRAP, "no Docker engine answers; bubblewrap isolates"), tmp_path)
    assert json.loads(path.read_text())["backend"] == BWRAP
    assert provision.remembered(tmp_path)["reason"] == "no Docker engine answers; bubblewrap isolates"
    assert _settings_backend(tmp_path).stdout.strip() == "bwrap"
    assert _settings_backend(tmp_path, SANDBOX_BACKEND="docker").stdout.strip() == "docker"
    path.write_text(json.dumps({"backend": "vm"}))
    broken = _settings_backend(tmp_path)
    assert (
        broken.returncode != 0 and f"{path} (written by make up): SANDBOX_BACKEND='vm' is not one of" in broken.stderr
    )


@pytest.mark.django_db
def test_it_shows_the_chosen_backend_and_why_on_healthz_and_the_overview(client_for, admin_user, settings, tmp_path):
    settings.VAR_DIR = tmp_path
    settings.SANDBOX_BACKEND = "bwrap"
    provision.remember(Choice(BWRAP, "no Docker engine answers; bubblewrap isolates the agents instead"), tmp_path)
    sandbox = client_for(admin_user).get(reverse("healthz")).json()["sandbox"]
    assert sandbox["backend"] == "bwrap"
    assert sandbox["chosen"]["reason"] == "no Docker engine answers; bubblewrap isolates the agents instead"
    page = client_for(admin_user).get(reverse("home")).content.decode()
    assert "Sandbox: bwrap" in page
    assert "weaker than Docker" in page and "Chosen by <code>make up</code>" in page
    assert "no Docker engine answers; bubblewrap isolates the agents instead" in page


@pytest.mark.django_db
def test_it_states_the_sandbox_on_the_launch_page(client_for, researcher, settings, tmp_path):
    settings.VAR_DIR = tmp_path
    settings.SANDBOX_BACKEND = "bwrap"
    page = client_for(researcher).get(reverse("benchmark:run_launch")).content.decode()
    assert "Sandbox: bwrap" in page and "its limits, listed above as they hold on this machine" in page


# -- starting the engine (issue 30: a machine without an init system) ---------------------------
@pytest.fixture
def second_engine(monkeypatch):
    """DOCKER_HOST at a second engine's socket (nothing answers there until a test starts it)."""
    from sandbox.docker import client
    from tests.engines import SecondEngine, needs_dockerd

    needs_dockerd()
    engine = SecondEngine()
    monkeypatch.setenv("DOCKER_HOST", engine.host)
    client.cache_clear()
    yield engine
    client.cache_clear()
    engine.remove()


def _machine_engine_answers() -> bool:
    env = {k: v for k, v in os.environ.items() if k != "DOCKER_HOST"}
    return subprocess.run(["docker", "version"], env=env, capture_output=True).returncode == 0


@pytest.mark.docker
def test_it_starts_dockerd_itself_when_the_service_manager_fails_and_stops_it_with_the_rest(
    second_engine, tmp_path: Path
) -> None:
    from config.supervisor import Supervisor

    said: list[str] = []
    started = provision.start_engine(
        said.append,
        var_dir=tmp_path,
        services=[["service", "referee-no-such-engine", "start"]],  # a real service manager, failing
        dockerd_args=second_engine.args(),
    )
    try:
        assert started.proc is not None and started.proc.poll() is None
        assert second_engine.answers()
        assert started.how.startswith("`service referee-no-such-engine start` exited with code 1 (")
        assert (
            f"so make up started dockerd itself (pid {started.proc.pid}, log {tmp_path / 'dockerd.log'})" in started.how
        )
        assert (tmp_path / "dockerd.pid").read_text().strip() == str(started.proc.pid)
        assert "API listen on" in (tmp_path / "dockerd.log").read_text()
        assert f"the Docker engine answers (dockerd pid {started.proc.pid}, started by make up" in said[-1]

        supervisor = Supervisor(state_path=tmp_path / "state.json", log=said.append)
        supervisor.adopt("docker engine", "docker", started.proc, started.restart, stop_last=True, stop_timeout=30)
    finally:
        if started.proc.poll() is None:
            supervisor.stop()
    assert started.proc.poll() is not None and not second_engine.answers()
    assert f"stopping docker engine (pid {started.proc.pid}) ..." in said
    assert _machine_engine_answers()  # the machine's own engine was left alone
    # ... and so was its bridge: a second dockerd with `--bridge none` deletes docker0 on start
    assert _machine_bridge_is_there(), "the second engine removed the machine engine's docker0 bridge"


def _machine_bridge_is_there() -> bool:
    return subprocess.run(["ip", "link", "show", "docker0"], capture_output=True).returncode == 0


@pytest.mark.docker
def test_it_falls_back_to_bubblewrap_when_dockerd_cannot_start(second_engine, tmp_path: Path, monkeypatch) -> None:
    from sandbox.bwrap import probe

    if probe():
        pytest.skip(f"bubblewrap unusable here: {probe()}")
    # A node without podman (this machine has it, and podman would come before bubblewrap).
    monkeypatch.setattr(provision, "_podman_facts", lambda: (False, "", False, ""))
    unusable = tmp_path / "a-file"
    unusable.write_text("not a directory")
    said: list[str] = []
    built: list[str] = []
    settled = provision.settle(
        environ={},  # REFEREE_NO_SYSTEM_INSTALL unset: the reason must not claim it is set
        log=said.append,
        var_dir=tmp_path,
        build_image=lambda method: built.append(method) or True,
        services=[],  # no service manager, as in a container without an init system
        dockerd_args=second_engine.args(data_root=unusable / "docker"),
    )
    choice = settled.choice
    assert (choice.backend, choice.steps, settled.engine, built) == (BWRAP, (), None, [])
    assert "no Docker engine answers (" in choice.reason
    assert (
        "and make up could not start it: no service manager runs here (no systemd, no /etc/init.d/docker);"
        " dockerd exited with code 1: Unable to get the full path to root"
    ) in choice.reason
    assert "not a directory" in choice.reason and f"(its log: {tmp_path / 'dockerd.log'})" in choice.reason
    assert choice.reason.endswith("bubblewrap isolates the agents instead, with weaker limits than Docker")
    assert "REFEREE_NO_SYSTEM_INSTALL" not in " ".join([*said, choice.reason])
    assert any(line.startswith("that did not work: no service manager runs here") for line in said)
    assert not (tmp_path / "dockerd.pid").exists()
    assert _machine_engine_answers()


@pytest.mark.docker
@pytest.mark.podman
def test_it_takes_podman_before_starting_a_docker_engine_that_does_not_answer(second_engine, tmp_path: Path) -> None:
    from sandbox import podman

    problem = podman.probe()
    if problem:
        pytest.skip(f"podman unusable here: {problem}")
    said: list[str] = []
    settled = provision.settle(
        environ={"REFEREE_NO_SYSTEM_INSTALL": "1"},
        log=said.append,
        var_dir=tmp_path,
        build_image=lambda method: pytest.fail("no Docker image build for podman"),
        services=[["service", "referee-no-such-engine", "start"]],
        dockerd_args=second_engine.args(),
    )
    choice = settled.choice
    assert (choice.backend, choice.steps, settled.engine) == ("podman", (), None)
    assert choice.reason.startswith("no Docker engine answers (")
    assert "; podman runs sandboxes here (" in choice.reason and "with the Docker backend's walls" in choice.reason
    assert not second_engine.answers()  # no engine was started: podman came first
    assert choice.machine["podman"] is True and choice.machine["podman_mode"]
