"""The bubblewrap backend: user, pid, network, ipc and uts namespaces; read-only binds; rlimits.

Used where no Docker engine runs. The system directories are bound read-only from the host (or
from SANDBOX_BWRAP_ROOTFS, e.g. the debootstrap rootfs of the sandbox image); the workspace and
/tmp are size-limited tmpfs that exist only inside the namespace. A root worker never runs
sandboxes as root: it drops to SANDBOX_UNPRIVILEGED_UID first (RLIMIT_NPROC does not bind root), and
requires data mounts to be readable by it (bwrap resolves their paths as that user).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from typing import Any

from sandbox import conf, process
from sandbox.base import SandboxError, SandboxSpec, SandboxUnavailable, Session

ISOLATION = (
    "bubblewrap: user/pid/net/ipc/uts namespaces, no network unless the task asks, read-only "
    "system and data binds, tmpfs workspace with a size limit, per-process rlimits (address "
    "space, processes); no cgroup memory/CPU accounting"
)
PATH = "/opt/venv/bin:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"
SYSTEM_DIRS = ("/usr", "/etc/alternatives", "/etc/ld.so.cache", "/etc/localtime", "/etc/ssl", "/opt/venv")
SANDBOX_UID = 1000


@functools.lru_cache(maxsize=1)
def probe() -> str | None:
    """None when bubblewrap can create namespaces here, else why not."""
    if not shutil.which("bwrap"):
        return "bwrap is not installed"
    args = ["bwrap", "--unshare-all", "--ro-bind", "/usr", "/usr", *_symlinks(), "true"]
    kwargs: dict[str, Any] = {}
    if os.geteuid() == 0:
        kwargs = {"user": conf.unprivileged_uid(), "group": conf.unprivileged_uid(), "extra_groups": []}
    result = subprocess.run(args, capture_output=True, text=True, timeout=30, **kwargs)
    if result.returncode != 0:
        return f"bwrap cannot create namespaces: {result.stderr.strip()[:300]}"
    return None


def info() -> dict[str, Any]:
    problem = probe()
    if problem:
        return {"isolation": ISOLATION, "available": False, "detail": problem}
    root = conf.bwrap_rootfs() or "host /usr"
    return {"isolation": ISOLATION, "available": True, "detail": f"system files from {root}"}


def check_readable(path: str) -> None:
    """A root worker runs bwrap as an unprivileged uid without groups: 'other' bits decide."""
    if not os.path.exists(path):
        raise SandboxError(f"mount source {path} does not exist")
    if os.geteuid() != 0:
        return
    uid = conf.unprivileged_uid()  # no groups: the "other" bits decide
    parts = path.split("/")
    for depth in range(1, len(parts) + 1):
        current = "/".join(parts[:depth]) or "/"
        st = os.stat(current)
        needed = 0o005 if depth == len(parts) and os.path.isdir(current) else 0o001
        if depth == len(parts) and not os.path.isdir(current):
            needed = 0o004
        if st.st_uid != uid and st.st_mode & needed != needed:
            raise SandboxError(
                f"mount source {path}: {current} is not readable by uid {uid}, which bwrap "
                "sandboxes run as when the worker is root; make it world-readable"
            )


def _symlinks() -> list[str]:
    args = []
    for name in ("bin", "lib", "lib64", "sbin"):
        path = f"/{name}"
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    return args


class BwrapSession(Session):
    backend = "bwrap"

    def __init__(self, spec: SandboxSpec) -> None:
        super().__init__(spec)
        self.channel: process.PipeChannel | None = None

    def bwrap_args(self) -> list[str]:
        spec = self.spec
        args = ["bwrap", "--unshare-all", "--unshare-user", "--die-with-parent", "--new-session", "--disable-userns"]
        # The shell server becomes PID 1 of the namespace: immune to the agent's signals.
        args.append("--as-pid-1")
        if spec.network:
            args.append("--share-net")
        rootfs = conf.bwrap_rootfs()
        if rootfs:
            args += ["--ro-bind", rootfs, "/"]
        else:
            for path in SYSTEM_DIRS:
                if os.path.exists(path):
                    args += ["--ro-bind", path, path]
            args += _symlinks()
        args += ["--proc", "/proc", "--dev", "/dev"]
        args += ["--size", str(conf.tmp_mb() * process.MB), "--perms", "1777", "--tmpfs", "/tmp"]
        args += ["--size", str(spec.disk_mb * process.MB), "--perms", "0755", "--tmpfs", spec.workdir]
        for mount in spec.mounts:
            source = os.path.realpath(mount.source)
            check_readable(source)
            args += ["--ro-bind" if mount.read_only else "--bind", source, mount.target]
        args += ["--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID), "--hostname", "sandbox"]
        args += ["--chdir", spec.workdir, "--clearenv"]
        env = {"PATH": PATH, "HOME": spec.workdir, "LANG": "C.UTF-8"}
        for key, value in env.items():
            args += ["--setenv", key, value]
        return args

    def _start(self) -> process.PipeChannel:
        problem = probe()
        if problem:
            raise SandboxUnavailable(problem)
        spec = self.spec
        args = self.bwrap_args() + self.server_command(workdir=spec.workdir)
        kwargs: dict[str, Any] = {}
        uid = os.geteuid()
        if uid == 0:
            uid = conf.unprivileged_uid()
            kwargs = {"user": uid, "group": uid, "extra_groups": []}
        nproc = process.tasks_of_uid(uid) + spec.pids
        # Address space, not RSS: a process that maps more than memory_mb fails its allocation.
        preexec = process.rlimits(memory_mb=spec.memory_mb, disk_mb=None, nproc=nproc)
        self.channel = process.start(args, env={"PATH": PATH}, preexec=preexec, cwd="/", **kwargs)
        return self.channel

    def _diagnostics(self) -> str:
        return self.channel.diagnostics() if self.channel else ""

    def _destroy(self) -> None:
        # Closing the channel killed bwrap, and its tmpfs with it; --die-with-parent covers a
        # crashed worker. Nothing is left on the host.
        return None


def open_session(spec: SandboxSpec) -> BwrapSession:
    return BwrapSession(spec).start()
