"""Management commands: sandbox_exec on each backend, build_sandbox_image, sandbox_reaper."""

from __future__ import annotations

import io
import os
import socket
import subprocess
import sys
import time

import pytest
from django.core.management import CommandError, call_command

from sandbox import SandboxSpec, open_session
from sandbox.reaper import Reaper, register_run_ended_hook, unregister_run_ended_hook


def exec_command(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("sandbox_exec", *args, stdout=out, stderr=err)
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


def test_it_runs_one_command_and_exits_with_its_code(backend: str) -> None:
    code, out, _ = exec_command(
        "--backend", backend, "--memory", "256m", "--", "sh", "-c", "echo hi from $(id -u); exit 3"
    )
    assert (code, out) == (3, "hi from 1000\n")


def test_it_reports_a_timeout_of_sandbox_exec(backend: str) -> None:
    code, _, err = exec_command("--backend", backend, "--timeout", "1", "--", "sleep 30")
    assert code == 124 and "timed out" in err


def test_it_rejects_bad_sandbox_exec_arguments() -> None:
    with pytest.raises(CommandError, match="bad memory size 'lots'"):
        exec_command("--backend", "bwrap", "--memory", "lots", "--", "true")
    with pytest.raises(CommandError, match="no command"):
        exec_command("--backend", "bwrap")


def test_it_refuses_sandbox_exec_on_local_unless_allowed(settings) -> None:
    settings.SANDBOX_ALLOW_LOCAL = False
    with pytest.raises(CommandError, match="SANDBOX_ALLOW_LOCAL"):
        exec_command("--backend", "local", "--", "true")


def test_it_runs_sandbox_exec_from_the_shell_with_the_exit_code(backend: str) -> None:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"}
    result = subprocess.run(
        [sys.executable, "manage.py", "sandbox_exec", "--backend", backend, "--", "printf", "%s", "x y"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert (result.returncode, result.stdout) == (0, "x y")


def test_it_prints_the_image_tag(sandbox_image: str) -> None:
    out = io.StringIO()
    call_command("build_sandbox_image", "--print-tag", stdout=out)
    again = io.StringIO()
    call_command("build_sandbox_image", stdout=again)
    assert out.getvalue().strip() == sandbox_image
    assert "reused" in again.getvalue()


def dead_pid() -> int:
    """A pid that certainly belonged to a process that has exited."""
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


@pytest.mark.docker
def test_it_reaps_sandboxes_of_dead_workers_and_ended_runs(sandbox_image: str) -> None:
    from sandbox.docker import sandbox_containers

    orphan_labels = {"referee.sandbox.worker": f"{socket.gethostname()}:{dead_pid()}"}
    orphan = open_session(SandboxSpec(labels=orphan_labels), backend="docker")
    ended = open_session(SandboxSpec(labels={"referee.run": "ended-run"}), backend="docker")
    live = open_session(SandboxSpec(labels={"referee.run": "live-run"}), backend="docker")

    def run_ended(labels: dict[str, str]) -> bool:
        return labels.get("referee.run") == "ended-run"

    register_run_ended_hook(run_ended)
    try:
        dry = io.StringIO()
        call_command("sandbox_reaper", "--dry-run", stdout=dry)
        removed = dict(Reaper(log=lambda line: None).reap_docker())
        again = Reaper(log=lambda line: None).reap_docker()
    finally:
        unregister_run_ended_hook(run_ended)
    remaining = {c["id"] for c in sandbox_containers()}
    assert "would remove" in dry.getvalue()
    assert removed[orphan.container.id] == "worker died"
    assert removed[ended.container.id] == "run ended"
    assert live.container.id not in removed and live.container.id in remaining
    assert again == []
    assert live.run("echo live", timeout=10).output == "live\n"
    for session in (orphan, ended, live):
        session.close()


def test_it_reaps_local_roots_and_pipe_directories_of_dead_workers(tmp_path) -> None:
    from sandbox.evaluation import CALLS_PREFIX
    from sandbox.local import PREFIX

    dead, pipes = tmp_path / f"{PREFIX}dead", tmp_path / f"{CALLS_PREFIX}dead"
    alive = tmp_path / f"{PREFIX}alive"
    for path, pid in ((dead, dead_pid()), (pipes, dead_pid()), (alive, os.getpid())):
        path.mkdir()
        (path / ".owner").write_text(str(pid))
    removed = Reaper(log=lambda line: None).reap_local_dirs(tmp_path)
    assert sorted(path for path, _ in removed) == sorted([str(dead), str(pipes)])
    assert alive.exists() and not dead.exists() and not pipes.exists()


def test_it_caps_sandbox_exec_at_the_memory_asked(backend: str) -> None:
    """The issue's report: `sandbox_exec --memory 128m` let one process hold 1 GiB."""
    from sandbox import cgroup

    if backend == "bwrap" and cgroup.unavailable():
        pytest.skip(f"bwrap here has no memory cgroup, only a per-process rlimit: {cgroup.unavailable()}")
    hold = "b = bytearray(1 << 30); b[::4096] = b'x' * len(b[::4096]); print('held 1 GiB')"
    code, out, err = exec_command("--backend", backend, "--memory", "128m", "--", "python3", "-c", hold)
    assert code != 0 and "held 1 GiB" not in out.splitlines()
    assert "[out of memory]" in err


def test_it_reaps_the_disks_of_dead_workers(settings, tmp_path) -> None:
    from sandbox import disk

    if disk.unavailable():
        pytest.skip(f"no loop-mounted disks here: {disk.unavailable()}")
    settings.SANDBOX_DISK_DIR = str(tmp_path / "disks")
    dead = disk.Disk(session="dead", name="workspace", size_mb=8, uid=0, gid=0, mode=0o755)
    live = disk.Disk(session="live", name="workspace", size_mb=8, uid=0, gid=0, mode=0o755)
    (dead.dir / ".owner").write_text(str(dead_pid()))
    removed = Reaper(log=lambda line: None).reap_disks()
    assert [path for path, _ in removed if "disks" in path] == [str(dead.dir)]
    assert not dead.dir.exists() and not os.path.ismount(dead.mountpoint)
    assert os.path.ismount(live.mountpoint)
    live.close()
    assert not live.dir.exists()


def test_it_unmounts_the_disks_of_a_worker_killed_hard(settings, tmp_path) -> None:
    """A real process mounts a disk and is killed -9 (no teardown runs); the sweep unmounts it."""
    import signal

    from sandbox import disk

    if disk.unavailable():
        pytest.skip(f"no loop-mounted disks here: {disk.unavailable()}")
    settings.SANDBOX_DISK_DIR = str(tmp_path / "disks")
    owner = subprocess.Popen(
        [sys.executable, "-c", (
            "import django, sys, time; django.setup(); from sandbox import disk; "
            "d = disk.Disk(session='killed', name='workspace', size_mb=8, uid=0, gid=0, mode=0o755); "
            "print(d.dir, flush=True); time.sleep(60)"
        )],
        stdout=subprocess.PIPE, text=True, env={**os.environ, "SANDBOX_DISK_DIR": settings.SANDBOX_DISK_DIR},
    )  # fmt: skip
    try:
        folder = owner.stdout.readline().strip()
        assert folder and os.path.ismount(os.path.join(folder, "mnt"))
    finally:
        owner.send_signal(signal.SIGKILL)
        owner.wait()
    assert os.path.ismount(os.path.join(folder, "mnt"))  # nobody tore it down
    removed = Reaper(log=lambda line: None).reap_disks()
    assert (folder, "worker died") in removed
    assert not os.path.ismount(os.path.join(folder, "mnt")) and not os.path.exists(folder)


def test_it_unmounts_a_disk_whose_folder_was_removed_under_it(settings, tmp_path) -> None:
    """`rm -rf var/` deletes the owner file and the image but not the busy mountpoint: still swept."""
    from sandbox import disk

    if disk.unavailable():
        pytest.skip(f"no loop-mounted disks here: {disk.unavailable()}")
    settings.SANDBOX_DISK_DIR = str(tmp_path / "disks")
    orphan = disk.Disk(session="orphan", name="workspace", size_mb=8, uid=0, gid=0, mode=0o755)
    fresh = tmp_path / "disks" / "fresh-tmp-x"
    fresh.mkdir()  # a folder just made, whose owner file is being written: left alone
    (orphan.dir / ".owner").unlink()
    (orphan.dir / "image").unlink()
    removed = Reaper(log=lambda line: None).reap_disks()
    assert [path for path, _ in removed if "disks" in path] == [str(orphan.dir)]
    assert not os.path.ismount(orphan.mountpoint) and not orphan.dir.exists() and fresh.exists()


def test_it_judges_by_pid_only_the_sandboxes_of_its_own_host_id(settings) -> None:
    """Two worker pools on one machine: pool B's pids mean nothing to pool A's reaper."""
    from sandbox.base import LABEL, SandboxSpec, session_labels

    settings.HOST_ID = "pool-b"
    mine = session_labels(SandboxSpec(), "s1")
    assert mine[f"{LABEL}.worker"] == f"pool-b:{os.getpid()}"
    dead = {f"{LABEL}.worker": f"pool-b:{dead_pid()}", f"{LABEL}.created": "1"}
    assert Reaper(log=lambda line: None).worker_dead(dead)
    settings.HOST_ID = "pool-a"
    assert not Reaper(log=lambda line: None).worker_dead(dead)  # another host's: only it can tell
    assert not Reaper(log=lambda line: None).worker_dead({**dead, f"{LABEL}.worker": f"{socket.gethostname()}:1"})


def test_it_leaves_another_hosts_live_sandboxes_to_that_hosts_reaper(settings) -> None:
    # Hosts (or worker pools) sharing one engine: a reaper judges age and runs of its own sandboxes
    # only, since another host's run may be one this host's database or clock knows nothing of.
    settings.HOST_ID = "pool-a"
    old = str(time.time() - 48 * 3600)
    reaper = Reaper(log=lambda line: None)

    def sandbox(host: str, status: str = "running") -> dict:
        labels = {"referee.sandbox.worker": f"{host}:{os.getpid()}", "referee.sandbox.created": old}
        return {"status": status, "labels": labels}

    # Its own: judged (this pid started after the sandbox's creation: a reused pid, a dead worker).
    assert reaper.reason(sandbox("pool-a")) == "worker died"
    assert reaper.reason(sandbox("pool-b")) is None
    assert reaper.reason(sandbox("pool-b", status="exited")) == "stopped"
    assert reaper.reason({"status": "running", "labels": {"referee.sandbox.created": old}}) == "too old"
