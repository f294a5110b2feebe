"""Pieces shared by the backends that start the shell server as a local process (bwrap, local)."""

from __future__ import annotations

import os
import resource
import select
import subprocess
import tempfile
from collections.abc import Callable

MB = 1 << 20


class PipeChannel:
    """The server's stdin/stdout pipes; its stderr goes to a file kept for diagnostics."""

    def __init__(self, proc: subprocess.Popen[bytes], stderr: tempfile._TemporaryFileWrapper[bytes]) -> None:
        self.proc = proc
        self.stderr = stderr
        assert proc.stdout is not None and proc.stdin is not None
        self.out = proc.stdout.fileno()
        self.stdin = proc.stdin

    def send(self, data: bytes) -> None:
        self.stdin.write(data)
        self.stdin.flush()

    def recv(self, timeout: float) -> bytes:
        if not select.select([self.out], [], [], timeout)[0]:
            raise TimeoutError
        return os.read(self.out, 1 << 16)

    def diagnostics(self) -> str:
        try:
            self.stderr.seek(0)
            return self.stderr.read()[-4096:].decode(errors="replace")
        except (OSError, ValueError):
            return ""

    def close(self) -> None:
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                if stream:
                    stream.close()
            except OSError:
                pass
        if self.proc.poll() is None:
            self.proc.kill()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        self.stderr.close()


def tasks_of_uid(uid: int) -> int:
    """Threads the uid runs now: RLIMIT_NPROC counts them all, not only the sandbox's."""
    count = 0
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/status") as fh:
                fields = dict(line.split(":", 1) for line in fh if ":" in line)
            if int(fields["Uid"].split()[0]) == uid:
                count += int(fields["Threads"])
        except (OSError, KeyError, ValueError):
            continue
    return count


def rlimits(
    *,
    memory_mb: int | None,
    disk_mb: int | None,
    nproc: int | None,
    join: Callable[[], None] | None = None,
    user: int | None = None,
) -> Callable[[], None]:
    """A preexec_fn: join the sandbox's cgroup (as root, before anything forks), drop to
    ``user`` (uid = gid, no groups), then set per-process limits."""

    def apply() -> None:
        if join is not None:
            join()
        if user is not None:
            os.setgroups([])
            os.setgid(user)
            os.setuid(user)
        if memory_mb is not None:
            resource.setrlimit(resource.RLIMIT_AS, (memory_mb * MB, memory_mb * MB))
        if disk_mb is not None:  # only where no size-limited tmpfs holds the files
            resource.setrlimit(resource.RLIMIT_FSIZE, (disk_mb * MB, disk_mb * MB))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if nproc is not None:
            resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))

    return apply


def start(
    args: list[str],
    *,
    env: dict[str, str],
    preexec: Callable[[], None],
    pass_fds: tuple[int, ...] = (),
    **kwargs: object,
) -> PipeChannel:
    stderr = tempfile.TemporaryFile()
    proc = subprocess.Popen(  # type: ignore[call-overload]
        args,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr,
        env=env,
        preexec_fn=preexec,
        pass_fds=pass_fds,
        start_new_session=True,
        **kwargs,
    )
    return PipeChannel(proc, stderr)
