"""The local backend: a subprocess in a temporary directory with rlimits. NOT isolated.

For development machines without Docker or bubblewrap, and refused unless SANDBOX_ALLOW_LOCAL
is set. Commands run as the worker's own user (a root worker drops to SANDBOX_UNPRIVILEGED_UID,
so that the process limit holds) and see the whole host. Mount targets and the
workdir are mapped under the session's temporary root (``$SANDBOX_ROOT``), so absolute paths in
commands such as /workspace do not exist here: use relative paths or the environment.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any

from sandbox import conf, process
from sandbox.base import SandboxSpec, SandboxUnavailable, Session

ISOLATION = "NONE: local subprocess with rlimits, runs as the worker's user and sees the host"
PREFIX = "referee-sandbox-"


def info() -> dict[str, Any]:
    if not conf.allow_local():
        return {"isolation": ISOLATION, "available": False, "detail": "refused: SANDBOX_ALLOW_LOCAL is off"}
    return {"isolation": ISOLATION, "available": True, "detail": "unisolated, for development only"}


class LocalSession(Session):
    backend = "local"

    def __init__(self, spec: SandboxSpec) -> None:
        super().__init__(spec)
        self.uid = conf.unprivileged_uid() if os.geteuid() == 0 else os.geteuid()
        self.root = tempfile.mkdtemp(prefix=PREFIX)
        # Lets the reaper remove roots whose worker died.
        with open(os.path.join(self.root, ".owner"), "w") as fh:
            fh.write(str(os.getpid()))
        self.workdir = self.map(spec.workdir)
        self.channel: process.PipeChannel | None = None

    def map(self, target: str) -> str:
        return os.path.join(self.root, target.lstrip("/"))

    def _start(self) -> process.PipeChannel:
        os.makedirs(self.workdir, exist_ok=True)
        if os.geteuid() == 0:
            for path in (self.root, self.workdir):
                os.chown(path, self.uid, self.uid)
        for mount in self.spec.mounts:
            link = self.map(mount.target)
            os.makedirs(os.path.dirname(link), exist_ok=True)
            os.symlink(os.path.abspath(mount.source), link)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": self.workdir,
            "LANG": "C.UTF-8",
            "SANDBOX_ROOT": self.root,
        }
        # Sandbox paths given in the environment (e.g. EVALUATOR_DIR=/evaluator, or a file
        # below a mount) are mapped too.
        targets = {self.spec.workdir, *(mount.target for mount in self.spec.mounts)}

        def mapped(value: str) -> str:
            inside = any(value == target or value.startswith(target.rstrip("/") + "/") for target in targets)
            return self.map(value) if inside else value

        for key, value in self.spec.env.items():
            env[key] = ":".join(mapped(part) for part in value.split(":"))  # PYTHONPATH-style lists too
        args = self.server_command(workdir=self.workdir, kill_scope="tree", state_dir=self.map("/.shell"), env=env)
        nproc = process.tasks_of_uid(self.uid) + self.spec.pids
        preexec = process.rlimits(memory_mb=self.spec.memory_mb, disk_mb=self.spec.disk_mb, nproc=nproc)
        kwargs: dict[str, Any] = {}
        if os.geteuid() == 0:
            kwargs = {"user": self.uid, "group": self.uid, "extra_groups": []}
        self.channel = process.start(args, env=env, preexec=preexec, cwd=self.workdir, **kwargs)
        return self.channel

    def _diagnostics(self) -> str:
        return self.channel.diagnostics() if self.channel else ""

    def _destroy(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def open_session(spec: SandboxSpec) -> LocalSession:
    if not conf.allow_local():
        raise SandboxUnavailable("the local backend is not isolated and SANDBOX_ALLOW_LOCAL is off")
    return LocalSession(spec).start()
