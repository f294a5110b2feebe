"""Find and remove sandboxes that nobody will close: their run ended or their worker died.

Safe to run repeatedly and from several hosts: every step only looks at labels and removes
what is certainly orphaned. The sandbox app knows nothing of runs, so whether a run has ended
is asked of hooks that higher layers register (``register_run_ended_hook``).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sandbox import conf
from sandbox.base import LABEL

RunEndedHook = Callable[[dict[str, str]], bool]
_run_ended_hooks: list[RunEndedHook] = []


def register_run_ended_hook(hook: RunEndedHook) -> None:
    """``hook(labels) -> True`` when the run named in the labels has ended (idempotent)."""
    if hook not in _run_ended_hooks:
        _run_ended_hooks.append(hook)


def unregister_run_ended_hook(hook: RunEndedHook) -> None:
    if hook in _run_ended_hooks:
        _run_ended_hooks.remove(hook)


def process_started_at(pid: int) -> float | None:
    """Wall-clock start of a local process, None if it does not exist."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            ticks = int(fh.read().rsplit(b")", 1)[1].split()[19])
        with open("/proc/stat") as fh:
            boot = next(float(line.split()[1]) for line in fh if line.startswith("btime"))
    except (OSError, ValueError, IndexError, StopIteration):
        return None
    return boot + ticks / os.sysconf("SC_CLK_TCK")


@dataclass
class Reaper:
    max_age: float = 24 * 3600
    dry_run: bool = False
    log: Callable[[str], None] = print

    def worker_dead(self, labels: dict[str, str]) -> bool:
        host, _, pid = labels.get(f"{LABEL}.worker", "").rpartition(":")
        if host != conf.host_id() or not pid.isdigit():
            return False  # another host's worker: only that host can tell
        started = process_started_at(int(pid))
        created = float(labels.get(f"{LABEL}.created", "0") or 0)
        # A pid that started after the sandbox was created is a new process reusing the pid.
        return started is None or started > created + 1

    def run_ended(self, labels: dict[str, str]) -> bool:
        return any(hook(labels) for hook in list(_run_ended_hooks))

    def too_old(self, labels: dict[str, str]) -> bool:
        created = float(labels.get(f"{LABEL}.created", "0") or 0)
        return bool(created) and time.time() - created > self.max_age

    def foreign(self, labels: dict[str, str]) -> bool:
        """A sandbox another host's worker opened (several hosts or pools may share one engine)."""
        host = labels.get(f"{LABEL}.worker", "").rpartition(":")[0]
        return bool(host) and host != conf.host_id()

    def reason(self, sandbox: dict[str, Any]) -> str | None:
        labels = sandbox["labels"]
        if sandbox.get("status") in {"exited", "dead"}:
            return "stopped"  # whoever's: a stopped container holds no process, only its disk
        if self.foreign(labels):
            return None  # another host's live sandbox: its own reaper judges its age and its run
        if self.worker_dead(labels):
            return "worker died"
        if self.run_ended(labels):
            return "run ended"
        if self.too_old(labels):
            return "too old"
        return None

    def docker_sandboxes(self) -> Iterable[dict[str, Any]]:
        from sandbox import docker as sandbox_docker

        return sandbox_docker.sandbox_containers()

    def reap_docker(self) -> list[tuple[str, str]]:
        from sandbox import docker as sandbox_docker

        return self._reap_containers(self.docker_sandboxes(), sandbox_docker.remove_container)

    def reap_podman(self) -> list[tuple[str, str]]:
        """Podman's sandboxes: a worker killed hard leaves its container running under conmon (the
        podman process that died was only the attached client)."""
        from sandbox import podman

        return self._reap_containers(podman.sandbox_containers(), podman.remove_container)

    def _reap_containers(
        self, sandboxes: Iterable[dict[str, Any]], remove: Callable[[str], bool]
    ) -> list[tuple[str, str]]:
        removed = []
        for sandbox in sandboxes:
            why = self.reason(sandbox)
            if why is None:
                continue
            self.log(f"{'would remove' if self.dry_run else 'removing'} {sandbox['name']}: {why}")
            if not self.dry_run:
                remove(sandbox["id"])
            removed.append((sandbox["id"], why))
        return removed

    def reap_local_dirs(self, base: Path | None = None) -> list[tuple[str, str]]:
        """Roots of local-backend sessions, and evaluations' pipe directories, whose worker is gone."""
        from sandbox.evaluation import CALLS_PREFIX
        from sandbox.local import PREFIX

        removed = []
        folder = Path(base or tempfile.gettempdir())
        for root in [*folder.glob(f"{PREFIX}*"), *folder.glob(f"{CALLS_PREFIX}*")]:
            try:
                pid = int((root / ".owner").read_text())
                created = (root / ".owner").stat().st_mtime
            except (OSError, ValueError):
                continue
            started = process_started_at(pid)
            if started is not None and started <= created + 1:
                continue
            self.log(f"{'would remove' if self.dry_run else 'removing'} {root}: worker died")
            if not self.dry_run:
                shutil.rmtree(root, ignore_errors=True)
            removed.append((str(root), "worker died"))
        return removed

    def reap_disks(self) -> list[tuple[str, str]]:
        """Loop-mounted disks (and empty memory cgroups) of sessions whose worker is gone."""
        from sandbox import cgroup, disk

        def alive(pid: int, created: float) -> bool:
            started = process_started_at(pid)
            return started is not None and started <= created + 1

        removed = [(path, "worker died") for path in disk.reap_disks(dry_run=self.dry_run, alive=alive)]
        if not self.dry_run:
            removed += [(path, "worker died") for path in cgroup.reap_groups()]
        for path, why in removed:
            self.log(f"{'would remove' if self.dry_run else 'removed'} {path}: {why}")
        return removed

    def reap_once(self, *, docker: bool = True, podman: bool = False) -> list[tuple[str, str]]:
        removed = self.reap_local_dirs()
        # Containers first: a disk is still mounted in the container of a dead worker.
        if docker:
            removed += self.reap_docker()
        if podman:
            removed += self.reap_podman()
        removed += self.reap_disks()
        return removed
