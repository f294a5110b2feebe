"""Podman specifics: the container really carries the limits, the uid map and the labels; the image
comes once per node under the same hash; rootless where the limits hold, else says why; runs record it.

The attacks themselves run on podman through the `backend` fixture (test_attacks.py and friends).
"""

from __future__ import annotations

import json
import pwd
import socket
import threading
from pathlib import Path

import pytest

from sandbox import Mount, SandboxError, SandboxSpec, SandboxUnavailable, backend_info, open_session, podman
from sandbox.image import podman_image_ensure
from sandbox.recipe import default_tag, inputs_hash

pytestmark = [pytest.mark.podman, pytest.mark.docker]  # the image comes from this node's Docker engine


def inspect(session: podman.PodmanSession) -> dict:
    result = podman._run(session.mode, ["inspect", session.name])
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)[0]


def test_it_starts_containers_with_every_restriction(podman_ready: str) -> None:
    spec = SandboxSpec(memory_mb=300, disk_mb=100, cpus=0.5, pids=50, labels={"referee.run": "run-abc"})
    with open_session(spec, backend="podman") as session:
        attrs = inspect(session)
        inside = session.run(
            "cat /sys/fs/cgroup/pids/pids.max /sys/fs/cgroup/pids.max 2>/dev/null; id -u; "
            "grep -E '^(CapEff|NoNewPrivs)' /proc/self/status",
            timeout=10,
        ).output.split()
    host = attrs["HostConfig"]
    assert attrs["ImageName"].endswith(podman_ready)
    assert attrs["Config"]["User"] == "1000:1000"
    assert attrs["Config"]["Labels"]["referee.run"] == "run-abc"
    assert attrs["Config"]["Labels"]["referee.sandbox.session"] == session.id
    assert host["NetworkMode"] == "none"
    assert host["ReadonlyRootfs"] is True
    assert "CAP_SETUID" in host["CapDrop"] and "CAP_NET_RAW" in host["CapDrop"]
    assert "no-new-privileges" in host["SecurityOpt"]
    assert host["PidsLimit"] == 50 and host["NanoCpus"] == 500_000_000
    assert inside[:2] == ["50", "1000"] and "0000000000000000" in inside and inside[-1] == "1"
    if session.disks:  # a root worker: the workspace and /tmp are disks, RAM is what was asked
        assert host["Memory"] == host["MemorySwap"] == 300 << 20
        binds = {m["Destination"]: m["Source"] for m in attrs["Mounts"]}
        assert binds["/workspace"] == session.disks[0].source and binds["/tmp"] == session.disks[1].source
    else:  # tmpfs counts as RAM: the limit covers it (backend_info says so)
        assert host["Memory"] == host["MemorySwap"] == (300 + 100 + 64) << 20


def test_it_runs_the_sandbox_as_a_host_uid_that_is_nobody(podman_ready: str) -> None:
    """uid 1000 inside is neither root nor any account on the host: the user namespace maps it away."""
    with open_session(SandboxSpec(), backend="podman") as session:
        pid = inspect(session)["State"]["Pid"]
        inside = session.run("id -u; id -g; cat /proc/self/uid_map", timeout=10).output.split()
        host_uid = int(Path(f"/proc/{pid}/status").read_text().split("Uid:")[1].split()[0])
    assert inside[:2] == ["1000", "1000"]
    assert inside[2:5] != ["0", "0", "4294967295"]  # not the host's identity map
    assert host_uid != 0
    with pytest.raises(KeyError):
        pwd.getpwuid(host_uid)
    if session.mode.kind == podman.ROOT:
        assert host_uid == podman.uid_base() + 1000 and inside[2:4] == ["0", str(podman.uid_base())]


def test_it_caps_cpu_at_what_was_asked(podman_ready: str) -> None:
    """Two busy processes for 2 s under cpus=0.5 get about 1 CPU-second between them, never 4."""
    burn = (
        "import os, time\n"
        "for _ in range(2):\n"
        "    if os.fork() == 0:\n"
        "        end = time.time() + 2\n"
        "        while time.time() < end: pass\n"
        "        os._exit(0)\n"
        "os.wait(); os.wait()\n"
        "t = os.times(); print(t.children_user + t.children_system)\n"
    )
    with open_session(SandboxSpec(cpus=0.5), backend="podman") as session:
        session.put_file("burn.py", burn.encode())
        result = session.run("python3 burn.py", timeout=60)
    # The two burners' CPU time. Load on the host only lowers this; the cap keeps it under 1.5.
    used = float(result.output.split()[-1])
    assert 0 < used < 1.5, result.output


@pytest.fixture
def host_listener():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    accepted: list[object] = []

    def serve() -> None:
        try:
            while True:
                accepted.append(server.accept()[0])
        except OSError:
            pass

    threading.Thread(target=serve, daemon=True).start()
    yield server.getsockname()[1], accepted
    server.close()


def test_it_opens_the_network_only_when_asked_and_never_to_the_hosts_loopback(podman_ready: str, host_listener) -> None:
    port, accepted = host_listener
    connect = (
        f"import socket\nfor host in ('127.0.0.1', '10.0.2.2'):\n"
        f"    try:\n        socket.create_connection((host, {port}), timeout=2); print('CONNECTED', host)\n"
        "    except OSError as exc:\n        print('refused', host, exc)\n"
    )
    with open_session(SandboxSpec(), backend="podman") as closed:
        none = closed.run("ls /sys/class/net", timeout=10).output.split()
    with open_session(SandboxSpec(network=True), backend="podman") as opened:
        some = opened.run("ls /sys/class/net", timeout=10).output.split()
        opened.put_file("connect.py", connect.encode())
        reach = opened.run("python3 connect.py", timeout=30).output
    assert none == ["lo"]
    assert len(some) > 1  # slirp4netns gave it an interface of its own
    # 10.0.2.2, slirp4netns' name for the host, is unreachable: its host loopback stays off.
    lines = reach.splitlines()
    assert len(lines) == 2 and all(line.startswith("refused ") for line in lines), reach
    assert accepted == []


def test_it_keeps_the_root_filesystem_read_only(podman_ready: str) -> None:
    with open_session(SandboxSpec(), backend="podman") as session:
        places = ["/x", "/etc/x", "/usr/x", "/opt/venv/x", "/run/x", "/var/tmp/x", "/root/x"]
        refused = [session.run(f"touch {place}", timeout=10) for place in places]
        writable = session.run("touch /workspace/ok /tmp/ok /dev/shm/ok && echo writable", timeout=10)
        remount = session.run("mount -o remount,rw / 2>&1; touch /x", timeout=10)
    assert all(r.exit_code != 0 for r in refused), [r.output for r in refused]
    assert writable.output == "writable\n"
    assert remount.exit_code != 0


def test_it_shows_no_host_path_but_the_mounts_asked_for(podman_ready: str, public_dir: Path) -> None:
    (public_dir / "data.csv").write_text("x\n")
    with open_session(SandboxSpec(mounts=[Mount(str(public_dir), "/data")]), backend="podman") as session:
        mounted = session.run("awk '{print $5}' /proc/self/mountinfo", timeout=10).output.split()
        peek = session.run(
            "ls /var/lib/containers /run/podman /run/containers /var/run/docker.sock /work 2>&1; "
            "cat /proc/1/cmdline | tr '\\0' ' '",
            timeout=10,
        ).output
    binds = {
        path
        for path in mounted
        if not path.startswith(("/proc", "/sys", "/dev")) and path not in ("/", "/workspace", "/tmp")
    }
    # What podman itself binds (the container's own hosts/hostname files, its marker) and the data asked for.
    assert binds <= {"/etc/hosts", "/etc/hostname", "/etc/resolv.conf", "/run/.containerenv", "/data"}, binds
    assert "/data" in binds
    assert peek.count("No such file or directory") == 5, peek
    assert "shellserver" in peek or "python3" in peek  # PID 1 is the shell server, not an init of the host


def test_it_removes_the_container_on_close(podman_ready: str) -> None:
    with open_session(SandboxSpec(labels={"test.podman": "close"}), backend="podman") as session:
        assert session.name in {c["name"] for c in podman.sandbox_containers()}
    assert session.name not in {c["name"] for c in podman.sandbox_containers()}


def test_it_loads_the_same_image_once_under_its_hash(podman_ready: str, monkeypatch) -> None:
    from sandbox import docker as sandbox_docker

    assert podman_ready == default_tag()
    assert podman.image_labels(podman_ready)[f"{podman.LABEL}.inputs"] == inputs_hash()
    # The same image, byte for byte: podman's id is Docker's.
    assert podman.image_id(podman_ready) == sandbox_docker.client().images.get(podman_ready).id

    def load_again(tag: str, log: object) -> bool:
        raise AssertionError("the image is in podman's store: nothing is loaded again")

    monkeypatch.setattr(podman, "load_from_docker", load_again)
    assert podman.ensure_image(podman_ready) == podman_ready


def test_it_runs_rootless_where_the_limits_hold_else_root_with_a_user_namespace_and_says_why(
    podman_ready: str, podman_user: str, settings
) -> None:
    current = podman.mode()
    info = backend_info("podman")
    assert info["available"] is True
    if current.kind == podman.ROOTLESS:
        assert current.problem == "" and "rootless" in info["isolation"]
        return
    # Here rootless podman could run, but would hold no limit: the reason is podman's own answer.
    why = podman.rootless_problem(podman.Mode(podman.ROOTLESS, user=podman_user, **_account(podman_user)))
    assert why and why in current.note and why in info["isolation"]
    assert f"host uids {podman.uid_base()}-" in info["isolation"]
    # Forced rootless on such a host: refused with that reason, never run without limits.
    settings.SANDBOX_PODMAN_MODE = "rootless"
    podman.mode.cache_clear()
    podman.probe.cache_clear()
    with pytest.raises(SandboxUnavailable, match="rootless podman as referee-podman cannot hold the sandbox's limits"):
        open_session(SandboxSpec(), backend="podman")


def _account(name: str) -> dict[str, object]:
    entry = pwd.getpwnam(name) if name else pwd.getpwuid(0)
    return {"uid": entry.pw_uid, "gid": entry.pw_gid, "home": entry.pw_dir} if name else {}


@pytest.mark.django_db
def test_a_run_on_podman_records_the_backend_and_the_image(
    podman_ready: str, settings, researcher, redis_client, client_for
):
    from benchmark.models import Run
    from benchmark.runs.services import run_execute
    from sandbox import docker as sandbox_docker
    from tests.benchmark.runs_support import agent, builtin_task, make_run

    settings.SANDBOX_BACKEND = "podman"
    task = builtin_task("prisoners_dilemma")
    run = make_run(owner=researcher, task=task, agent_config=agent())
    run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == Run.Status.FINISHED, run.error
    assert run.environment["backend"] == "podman"
    assert run.environment["image"] == podman_ready
    assert run.environment["image_digest"] == sandbox_docker.client().images.get(podman_ready).id
    assert run.environment["podman_mode"] == podman.mode().kind
    page = client_for(researcher).get(f"/runs/{run.code}/").content.decode()
    assert "<dd>podman, network none</dd>" in page


def test_it_reaps_the_containers_of_dead_workers_and_ended_runs(podman_ready: str) -> None:
    """A worker killed hard leaves its container running under conmon: the sweep removes it."""
    from sandbox.reaper import Reaper, register_run_ended_hook, unregister_run_ended_hook
    from tests.sandbox.test_commands import dead_pid

    orphan = open_session(
        SandboxSpec(labels={"referee.sandbox.worker": f"{socket.gethostname()}:{dead_pid()}"}), backend="podman"
    )
    ended = open_session(SandboxSpec(labels={"referee.run": "ended-run"}), backend="podman")
    live = open_session(SandboxSpec(labels={"referee.run": "live-run"}), backend="podman")

    def run_ended(labels: dict[str, str]) -> bool:
        return labels.get("referee.run") == "ended-run"

    register_run_ended_hook(run_ended)
    try:
        dry = dict(Reaper(log=lambda line: None, dry_run=True).reap_once(docker=False, podman=True))
        removed = dict(Reaper(log=lambda line: None).reap_once(docker=False, podman=True))
        again = Reaper(log=lambda line: None).reap_podman()
    finally:
        unregister_run_ended_hook(run_ended)
    ids = {c["name"]: c["id"] for c in [*podman.sandbox_containers()]}
    try:
        assert orphan.name not in ids and ended.name not in ids and live.name in ids
        assert set(removed.values()) >= {"worker died", "run ended"} and dry.keys() >= removed.keys()
        assert ids[live.name] not in removed and again == []
        assert live.run("echo live", timeout=10).output == "live\n"
    finally:
        for session in (orphan, ended, live):
            session.close()


def test_it_builds_no_other_image_than_the_sandboxs_own_under_a_foreign_tag(podman_ready: str, settings) -> None:
    """An image podman lacks and no Docker engine here holds is refused with the reason, never made
    from the base image under that name (a task variant would silently lose its packages)."""
    settings.SANDBOX_IMAGE = "referee-sandbox-variant:not-built-anywhere"
    with pytest.raises(SandboxUnavailable, match="no Docker engine on this node holds referee-sandbox-variant"):
        open_session(SandboxSpec(), backend="podman")
    assert not podman.image_exists("referee-sandbox-variant:not-built-anywhere")


@pytest.mark.slow
def test_it_imports_the_image_from_the_nodes_own_rootfs_where_no_docker_engine_has_it(
    podman_ready: str, settings, monkeypatch, tmp_path: Path
) -> None:
    """A node without Docker: `podman import` of the debootstrap rootfs of the same hash, labelled
    with the same manifest. The rootfs here is the Docker image's own files (docker export), in a
    podman store of its own so that the node's store is left alone."""
    import subprocess

    from sandbox import docker as sandbox_docker
    from sandbox.image import MANIFEST_LABEL

    cache = tmp_path / "cache"
    rootfs = cache / inputs_hash() / "rootfs"
    rootfs.mkdir(parents=True)
    container = sandbox_docker.client().containers.create(podman_ready, command=["true"])
    try:
        export = subprocess.Popen(["docker", "export", container.id], stdout=subprocess.PIPE)
        subprocess.run(["tar", "-x", "--numeric-owner", "-C", str(rootfs)], stdin=export.stdout, check=True)
        assert export.wait() == 0
    finally:
        container.remove(force=True)
    for stage in ("debootstrap", "wheels", "packages", "prune", "finish"):
        (cache / inputs_hash() / f".done-{stage}").touch()
    storage = tmp_path / "storage.conf"
    storage.write_text(f'[storage]\ndriver = "overlay"\ngraphroot = "{tmp_path}/graph"\nrunroot = "{tmp_path}/run"\n')
    settings.SANDBOX_CACHE_DIR = str(cache)
    monkeypatch.setenv("CONTAINERS_STORAGE_CONF", str(storage))
    monkeypatch.setattr(podman, "load_from_docker", lambda tag, log: False)  # as on a node without Docker
    podman.mode.cache_clear()
    podman.probe.cache_clear()
    try:
        assert not podman.image_exists(podman_ready)
        with pytest.raises(SandboxError, match="build_sandbox_image --engine podman"):
            podman.ensure_image(podman_ready)  # a run's start does not build: it names the command
        said: list[str] = []
        podman_image_ensure(podman_ready, log=said.append)
        labels = podman.image_labels(podman_ready)
        with open_session(SandboxSpec(), backend="podman") as session:
            whoami = session.run("id -u; python3 -c 'import sklearn; print(sklearn.__version__)'", timeout=60)
        assert any(line.startswith(f"podman import {podman_ready}") for line in said), said
        assert labels[f"{podman.LABEL}.inputs"] == inputs_hash()
        assert labels["referee.sandbox.built-by"] == "debootstrap"
        assert json.loads(labels[MANIFEST_LABEL]) == json.loads(
            sandbox_docker.image_labels(podman_ready)[MANIFEST_LABEL]
        )
        assert whoami.exit_code == 0 and whoami.output.startswith("1000\n")
    finally:
        podman._run(podman.mode(), ["system", "reset", "--force"], timeout=300)


def test_it_says_what_is_wrong_with_a_podman_account_that_does_not_exist(settings) -> None:
    import shutil

    if not shutil.which("podman"):
        pytest.skip("podman is not installed")
    settings.SANDBOX_PODMAN_USER = "referee-no-such-account"
    podman.mode.cache_clear()
    podman.probe.cache_clear()
    try:
        info = backend_info("podman")
        with pytest.raises(SandboxUnavailable, match="SANDBOX_PODMAN_USER='referee-no-such-account' is not an account"):
            open_session(SandboxSpec(), backend="podman")
    finally:
        podman.mode.cache_clear()
        podman.probe.cache_clear()
    assert info["available"] is False and "is not an account on this host" in info["detail"]
