"""The bubblewrap backend: user, pid, network, ipc and uts namespaces; read-only binds; rlimits.

Used where no Docker engine runs. The system directories are bound read-only from the host (or
from SANDBOX_BWRAP_ROOTFS, e.g. the debootstrap rootfs of the sandbox image). A root worker
never runs sandboxes as root: it drops to SANDBOX_UNPRIVILEGED_UID first (RLIMIT_NPROC does not
bind root), and requires data mounts to be readable by it (bwrap resolves their paths as that user).

Memory: where the worker may create a memory cgroup (sandbox/cgroup.py) every process of the
sandbox joins it before bwrap starts, so together they cannot hold more than ``memory_mb``, and
the workspace and /tmp are loop-mounted disks (sandbox/disk.py) so that files do not count as
RAM. Otherwise memory is only an address-space rlimit per process and the workspace and /tmp
are tmpfs; ``info()`` says which holds here.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from typing import Any

from sandbox import cgroup, conf, disk, process
from sandbox.base import SandboxError, SandboxSpec, SandboxUnavailable, Session

ISOLATION = (
    "bubblewrap: user/pid/net/ipc/uts namespaces, no network unless the task asks, read-only "
    "system and data binds, process rlimit, no CPU limit; "
)
# Where the memory-events file of the sandbox's cgroup appears inside it (for the OOM counter).
EVENTS_TARGET = "/dev/.memory-events"


def isolation() -> str:
    """What holds on this machine, in words for /healthz and the UI."""
    problem = cgroup.unavailable()
    if problem:
        memory = f"memory: only a per-process address-space rlimit, no cgroup ({problem})"
    else:
        memory = "memory: one cgroup per sandbox capping all its processes at the memory asked"
    problem = disk.unavailable()
    files = f"workspace and /tmp: tmpfs ({problem})" if problem else "workspace and /tmp: size-limited loop disks"
    return f"{ISOLATION}{memory}; {files}"


PATH = "/opt/venv/bin:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"
SYSTEM_DIRS = ("/usr", "/etc/alternatives", "/etc/ld.so.cache", "/etc/localtime", "/etc/ssl", "/opt/venv")
SANDBOX_UID = 1000
# Made fresh in every sandbox, never taken from SANDBOX_BWRAP_ROOTFS.
ROOTFS_SKIPPED = {"proc", "dev", "sys", "tmp", "run", "workspace", "root", "home", "mnt", "media", "srv", "boot"}


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
        return {"isolation": isolation(), "available": False, "detail": problem}
    root = conf.bwrap_rootfs() or "host /usr"
    return {"isolation": isolation(), "available": True, "detail": f"system files from {root}"}


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
        self.disks: list[disk.Disk] = []
        self.group: cgroup.MemoryGroup | None = None
        self.host_uid = conf.unprivileged_uid() if os.geteuid() == 0 else os.geteuid()

    def identity(self) -> dict[str, str]:
        return {"image": f"bwrap: {conf.bwrap_rootfs() or 'host /usr'}"}

    def bwrap_args(self) -> list[str]:
        spec = self.spec
        args = ["bwrap", "--unshare-all", "--unshare-user", "--die-with-parent", "--new-session", "--disable-userns"]
        # The shell server becomes PID 1 of the namespace: immune to the agent's signals.
        args.append("--as-pid-1")
        if spec.network:
            args.append("--share-net")
        rootfs = conf.bwrap_rootfs()
        if rootfs:
            # Each top-level entry on its own, not the rootfs as /: a read-only / would leave
            # no place for the mount points of /workspace, /evaluator and the other binds.
            for entry in sorted(os.listdir(rootfs)):
                source, target = os.path.join(rootfs, entry), "/" + entry
                if entry in ROOTFS_SKIPPED:
                    continue
                if os.path.islink(source):
                    args += ["--symlink", os.readlink(source), target]
                elif os.path.isdir(source):
                    args += ["--ro-bind", source, target]
        else:
            for path in SYSTEM_DIRS:
                if os.path.exists(path):
                    args += ["--ro-bind", path, path]
            args += _symlinks()
        args += ["--proc", "/proc", "--dev", "/dev"]
        if self.disks:
            workspace, tmp = self.disks
            args += ["--bind", tmp.source, "/tmp", "--bind", workspace.source, spec.workdir]
        else:
            args += ["--size", str(conf.tmp_mb() * process.MB), "--perms", "1777", "--tmpfs", "/tmp"]
            args += ["--size", str(spec.disk_mb * process.MB), "--perms", "0755", "--tmpfs", spec.workdir]
        if self.group is not None:
            args += ["--ro-bind", str(self.group.events), EVENTS_TARGET]
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
        uid = self.host_uid
        try:
            self.disks = disk.session_disks(
                session=self.id, workspace_mb=spec.disk_mb, tmp_mb=conf.tmp_mb(), uid=uid, gid=uid
            )
            if not cgroup.unavailable():
                self.group = cgroup.MemoryGroup(self.id, spec.memory_mb)
        except (disk.DiskError, cgroup.CgroupError) as exc:
            raise SandboxError(f"cannot set up the sandbox's limits: {exc}") from exc
        self.oom_file = EVENTS_TARGET if self.group else None
        args = self.bwrap_args() + self.server_command(workdir=spec.workdir)
        nproc = process.tasks_of_uid(uid) + spec.pids
        preexec = process.rlimits(
            # With a cgroup the sandbox's processes together are capped; without one, only
            # address space per process (a process that maps more fails its allocation).
            memory_mb=None if self.group else spec.memory_mb,
            disk_mb=None,
            nproc=nproc,
            join=self.group.join if self.group else None,
            user=uid if os.geteuid() == 0 else None,
        )
        self.channel = process.start(args, env={"PATH": PATH}, preexec=preexec, cwd="/")
        return self.channel

    def _diagnostics(self) -> str:
        return self.channel.diagnostics() if self.channel else ""

    def _destroy(self) -> None:
        # Closing the channel killed bwrap and with it the namespace (--die-with-parent also
        # covers a crashed worker); what is left on the host is the disks and the cgroup.
        if self.group is not None:
            self.group.close()
        for scratch in self.disks:
            scratch.close()


def open_session(spec: SandboxSpec) -> BwrapSession:
    return BwrapSession(spec).start()
