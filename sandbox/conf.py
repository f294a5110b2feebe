"""Sandbox settings, read lazily from ``django.conf.settings`` with laptop-friendly defaults.

Read at call time (never at import) so that the module works before settings are configured
and so that tests can override settings per test.
"""

from __future__ import annotations

import functools
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

BACKENDS = ("docker", "podman", "bwrap", "local")


def _setting(name: str, default: Any) -> Any:
    from django.conf import settings

    if not settings.configured:
        return default
    return getattr(settings, name, default)


def host_id() -> str:
    """This host's name in sandbox labels, disk owners and run claims (settings.HOST_ID, else the
    hostname). Each reaper judges only its own host's sandboxes by pid: two worker pools on one
    machine (or two hosts with the same hostname) need different ids, or one would take the other's
    live pids for dead ones."""
    return str(_setting("HOST_ID", "") or socket.gethostname())


def base_dir() -> Path:
    """The project root (for the ``var/`` cache); settings.BASE_DIR when configured."""
    value = _setting("BASE_DIR", None)
    return Path(value) if value else Path(__file__).resolve().parent.parent


def cache_dir() -> Path:
    return Path(_setting("SANDBOX_CACHE_DIR", None) or base_dir() / "var" / "sandbox-image")


def disk_dir() -> Path:
    """Where size-limited sandbox disks (loop-mounted ext4 images) live: must be on real disk,
    never on tmpfs, whose pages would count as RAM again."""
    value = _setting("SANDBOX_DISK_DIR", None)
    if value:
        return Path(value)
    var = _setting("VAR_DIR", None)  # each host (REFEREE_VAR_DIR) owns its disks; its reaper sweeps them
    return Path(var) / "sandbox-disks" if var else base_dir() / "var" / "sandbox-disks"


def backend_name() -> str:
    return str(_setting("SANDBOX_BACKEND", "docker"))


def image() -> str:
    value = _setting("SANDBOX_IMAGE", None)
    if value:
        return str(value)
    from sandbox.recipe import default_tag

    return default_tag()


def allow_local() -> bool:
    return bool(_setting("SANDBOX_ALLOW_LOCAL", False))


def memory_mb() -> int:
    """Default RAM of a sandbox (SandboxSpec.memory_mb)."""
    return int(_setting("SANDBOX_MEMORY_MB", 1024))


def cpus() -> float:
    return float(_setting("SANDBOX_CPUS", 1.0))


def pids() -> int:
    return int(_setting("SANDBOX_PIDS", 256))


def disk_mb() -> int:
    return int(_setting("SANDBOX_DISK_MB", 2048))


def output_limit() -> int:
    """Bytes of output kept per command (head and tail halves)."""
    return int(_setting("SANDBOX_OUTPUT_LIMIT", 64 * 1024))


def tmp_mb() -> int:
    """Size of the writable /tmp tmpfs."""
    return int(_setting("SANDBOX_TMP_MB", 256))


def unprivileged_uid() -> int:
    """Host uid that bwrap and local sandboxes run as when the worker is root: never root,
    because RLIMIT_NPROC (the only process limit there) does not bind root."""
    return int(_setting("SANDBOX_UNPRIVILEGED_UID", 65534))


def bwrap_rootfs() -> str | None:
    """Optional root filesystem for bwrap (e.g. the debootstrap rootfs); default: host /usr."""
    value = _setting("SANDBOX_BWRAP_ROOTFS", None)
    return str(value) if value else None


def docker_uid() -> str:
    return str(_setting("SANDBOX_USER", "1000:1000"))


def parse_memory(value: str | int) -> int:
    """'512m', '2g', '1024' (MB) -> megabytes; raises ValueError naming the bad value."""
    text = str(value).strip().lower()
    units = {"k": 1 / 1024, "m": 1, "g": 1024}
    try:
        if text and text[-1] in units:
            return max(1, int(float(text[:-1]) * units[text[-1]]))
        return int(text)
    except ValueError:
        raise ValueError(f"bad memory size {value!r}: use e.g. 512m or 2g") from None


def probed_once(probe: Callable[[], T]) -> Callable[[], T]:
    """Run a machine probe once per process, also when sessions start in threads at once (an
    evaluation opens two): the result is cached, and ``cache_clear`` resets it for tests."""
    lock = threading.Lock()
    cached = functools.lru_cache(maxsize=1)(probe)

    @functools.wraps(probe)
    def wrapper() -> T:
        with lock:
            return cached()

    wrapper.cache_clear = cached.cache_clear  # type: ignore[attr-defined]
    return wrapper
