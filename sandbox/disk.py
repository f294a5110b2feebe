"""Size-limited scratch disks for sandboxes: a sparse ext4 image, loop-mounted on the host.

Why not tmpfs: tmpfs pages are charged to the memory cgroup of the process that writes them, so
a tmpfs workspace turns the disk quota into RAM (a sandbox asked for 128 MB with a 2 GB tmpfs
workspace could hold 2 GB in memory). An ext4 image of ``size_mb`` holds at most that much, on
the host's disk; its page cache is reclaimable, so the memory limit stays what was asked.

Mounting needs root. Where the worker is not root (or has no loop devices), ``unavailable()``
says why and the backends fall back to tmpfs, stating the weaker memory limit in backend_info.

Layout: ``<SANDBOX_DISK_DIR>/<session>-<name>/{image, mnt/, .owner}``; the sandbox gets
``mnt/data`` (so that ext4's lost+found stays out of sight). ``reap_disks`` removes the disks
of workers that died.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from sandbox import conf

MKFS = ["mkfs.ext4", "-q", "-F", "-m", "0", "-O", "^has_journal", "-E", "lazy_itable_init=1,nodiscard"]
MOUNT_OPTIONS = "loop,nosuid,nodev"
OWNERLESS_GRACE = 60.0  # seconds a disk folder may lack its owner file (it is written right after mkdtemp)


class DiskError(RuntimeError):
    """A disk could not be made or mounted (the sandbox cannot start as asked)."""


def _run(args: list[str]) -> None:
    result = subprocess.run(args, capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        raise DiskError(f"{' '.join(args[:2])} failed: {(result.stderr or result.stdout).strip()[:300]}")


@conf.probed_once
def unavailable() -> str | None:
    """None when loop-mounted disks work here, else why not (checked once per process)."""
    if os.geteuid() != 0:
        return "the worker is not root, so it cannot loop-mount a size-limited disk"
    for tool in ("mkfs.ext4", "mount", "umount"):
        if not shutil.which(tool):
            return f"{tool} is not installed"
    try:
        disk = Disk(name="probe", size_mb=8, uid=0, gid=0, mode=0o700, session="probe")
    except (DiskError, OSError) as exc:
        return f"cannot loop-mount a disk: {exc}"
    disk.close()
    return None


class Disk:
    """An ext4 filesystem of ``size_mb`` mounted on the host; ``source`` is what to bind."""

    def __init__(self, *, session: str, name: str, size_mb: int, uid: int, gid: int, mode: int) -> None:
        root = conf.disk_dir()
        root.mkdir(parents=True, exist_ok=True)
        os.chmod(root, 0o755)  # bwrap under a root worker binds it as an unprivileged uid
        self.dir = Path(tempfile.mkdtemp(prefix=f"{session}-{name}-", dir=root))
        os.chmod(self.dir, 0o755)
        (self.dir / ".owner").write_text(str(os.getpid()))
        self.image = self.dir / "image"
        self.mountpoint = self.dir / "mnt"
        self.mounted = False
        try:
            self.mountpoint.mkdir()
            with open(self.image, "wb") as fh:
                fh.truncate(size_mb << 20)  # sparse: takes host disk only as it fills
            _run([*MKFS, str(self.image)])
            _run(["mount", "-o", MOUNT_OPTIONS, str(self.image), str(self.mountpoint)])
            self.mounted = True
            data = self.mountpoint / "data"
            data.mkdir()
            os.chown(data, uid, gid)
            os.chmod(data, mode)
        except BaseException:
            self.close()
            raise
        self.source = str(data)

    def close(self) -> None:
        if self.mounted:
            unmount(self.mountpoint)
            self.mounted = False
        shutil.rmtree(self.dir, ignore_errors=True)


def unmount(path: Path) -> None:
    """Unmount, waiting briefly for a dying sandbox to let go; lazily as a last resort."""
    for _ in range(20):
        if subprocess.run(["umount", str(path)], capture_output=True).returncode == 0:
            return
        if not os.path.ismount(path):
            return
        time.sleep(0.05)
    subprocess.run(["umount", "-l", str(path)], capture_output=True)


def reap_disks(*, dry_run: bool = False, alive: object = None) -> list[str]:
    """Disks whose worker process is gone: unmount and delete. Returns what was removed.

    ``alive(pid, created) -> bool`` decides whether the owner still runs (the reaper's check)."""
    root = conf.disk_dir()
    removed: list[str] = []
    if not root.is_dir():
        return removed
    for folder in root.iterdir():
        if not folder.is_dir() or folder.is_symlink():
            continue
        owner = folder / ".owner"
        try:
            pid = int(owner.read_text())
            created = owner.stat().st_mtime
        except (OSError, ValueError):
            if not _ownerless_orphan(folder):
                continue
        else:
            if callable(alive) and alive(pid, created):
                continue
        removed.append(str(folder))
        if dry_run:
            continue
        if os.path.ismount(folder / "mnt"):
            unmount(folder / "mnt")
        shutil.rmtree(folder, ignore_errors=True)
    return removed


def _ownerless_orphan(folder: Path) -> bool:
    """A disk folder without a readable owner: a live Disk writes `.owner` before it mounts, so a
    mounted one lost its owner file to a removal of the folder (`rm -rf var/`, which deletes
    everything but the busy mountpoint); an unmounted one is orphaned once past the moment between
    mkdtemp and that write."""
    if os.path.ismount(folder / "mnt"):
        return True
    try:
        return time.time() - folder.stat().st_mtime > OWNERLESS_GRACE
    except OSError:
        return False


def session_disks(*, session: str, workspace_mb: int, tmp_mb: int, uid: int, gid: int) -> list[Disk]:
    """[workspace, /tmp] disks for a session, or [] where loop disks are unavailable."""
    if unavailable():
        return []
    disks: list[Disk] = []
    try:
        disks.append(Disk(session=session, name="workspace", size_mb=workspace_mb, uid=uid, gid=gid, mode=0o755))
        disks.append(Disk(session=session, name="tmp", size_mb=tmp_mb, uid=0, gid=0, mode=0o1777))
    except BaseException:
        for disk in disks:
            disk.close()
        raise
    return disks
