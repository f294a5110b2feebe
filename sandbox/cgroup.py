"""A memory cgroup per sandbox for backends without an engine (bwrap): all of a sandbox's
processes together cannot hold more than the limit, and the kernel's OOM killer counts kills.

The group is a child of the worker's own memory cgroup (cgroup v2 when the memory controller
can be delegated there, else the v1 memory hierarchy). Where the worker may not create one
(not root, no writable cgroupfs, v2 without a delegated memory controller) ``unavailable()``
says why; bwrap then keeps only its per-process address-space limit and says so.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from sandbox import conf

PREFIX = "referee-sandbox-"


class CgroupError(RuntimeError):
    pass


@dataclass(frozen=True)
class Hierarchy:
    version: int
    parent: Path  # the worker's own memory cgroup: new groups go below it


def _mounts() -> list[tuple[str, str, str, str]]:
    """(mount point, root within the hierarchy, fs type, super options) of cgroup mounts."""
    found = []
    try:
        with open("/proc/self/mountinfo") as fh:
            for line in fh:
                left, _, right = line.partition(" - ")
                fields, extra = left.split(), right.split()
                if len(extra) >= 3 and extra[0] in ("cgroup", "cgroup2"):
                    found.append((fields[4], fields[3], extra[0], extra[2]))
    except OSError:
        pass
    return found


def _own_paths() -> dict[str, str]:
    """'v2' -> path of the unified group, 'memory' -> path in the v1 memory hierarchy."""
    paths = {}
    try:
        with open("/proc/self/cgroup") as fh:
            for line in fh:
                _, controllers, path = line.rstrip("\n").split(":", 2)
                if controllers == "":
                    paths["v2"] = path
                elif "memory" in controllers.split(","):
                    paths["memory"] = path
    except OSError:
        pass
    return paths


def _below(mount: str, root: str, path: str) -> Path:
    relative = os.path.relpath(path, root) if path.startswith(root) else path.lstrip("/")
    return Path(mount) / ("" if relative == "." else relative)


def hierarchy() -> Hierarchy:
    """Where a memory group can be made; raises CgroupError saying why not."""
    if os.geteuid() != 0:
        raise CgroupError("the worker is not root, so it cannot create a memory cgroup")
    own = _own_paths()
    reasons = []
    for mount, root, kind, options in _mounts():
        if kind == "cgroup2" and "v2" in own:
            parent = _below(mount, root, own["v2"])
            control = parent / "cgroup.subtree_control"
            try:
                if "memory" not in control.read_text().split():
                    control.write_text("+memory")
                return Hierarchy(2, parent)
            except OSError as exc:
                reasons.append(f"cgroup v2 at {parent}: memory controller not delegated ({exc.strerror or exc})")
        elif kind == "cgroup" and "memory" in options.split(",") and "memory" in own:
            parent = _below(mount, root, own["memory"])
            if os.access(parent, os.W_OK):
                return Hierarchy(1, parent)
            reasons.append(f"cgroup v1 memory hierarchy at {parent} is not writable")
    raise CgroupError("; ".join(reasons) or "no memory cgroup hierarchy is mounted")


@conf.probed_once
def unavailable() -> str | None:
    """None when the worker can give sandboxes a memory cgroup, else why not (checked once)."""
    try:
        group = MemoryGroup("probe", 64)
    except (CgroupError, OSError) as exc:
        return str(exc)
    group.close()
    return None


class MemoryGroup:
    def __init__(self, name: str, limit_mb: int) -> None:
        where = hierarchy()
        self.version = where.version
        self.path = where.parent / f"{PREFIX}{name}-{os.getpid()}"
        limit = str(limit_mb << 20)
        try:
            self.path.mkdir()
            if self.version == 2:
                (self.path / "memory.max").write_text(limit)
                swap = self.path / "memory.swap.max"
                if swap.exists():
                    swap.write_text("0")
                self.events = self.path / "memory.events"
            else:
                (self.path / "memory.limit_in_bytes").write_text(limit)
                swap = self.path / "memory.memsw.limit_in_bytes"
                if swap.exists():  # only with swap accounting; must not be below the RAM limit
                    swap.write_text(limit)
                self.events = self.path / "memory.oom_control"
        except OSError as exc:
            self.close()
            raise CgroupError(f"cannot set up memory cgroup {self.path}: {exc.strerror or exc}") from exc
        self.procs = str(self.path / "cgroup.procs")

    def join(self) -> None:
        """Move the calling process in (from a child before exec: its descendants follow)."""
        with open(self.procs, "w") as fh:
            fh.write(str(os.getpid()))

    def pids(self) -> list[int]:
        try:
            return [int(x) for x in Path(self.procs).read_text().split()]
        except (OSError, ValueError):
            return []

    def close(self) -> None:
        for _ in range(100):
            if not self.path.exists():
                return
            for pid in self.pids():
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            try:
                self.path.rmdir()
                return
            except OSError:
                time.sleep(0.02)


def reap_groups() -> list[str]:
    """Empty groups left by workers that died (a live worker removes its own)."""
    try:
        parent = hierarchy().parent
    except CgroupError:
        return []
    removed = []
    for path in parent.glob(f"{PREFIX}*"):
        pid = path.name.rsplit("-", 1)[-1]
        if pid.isdigit() and Path(f"/proc/{pid}").exists():
            continue
        try:
            path.rmdir()
            removed.append(str(path))
        except OSError:
            continue
    return removed
