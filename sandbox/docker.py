"""The Docker backend: the only module that imports the Docker SDK.

One container per session: non-root, no network unless asked, memory/CPU/pids limits, all
capabilities dropped, no-new-privileges, read-only root filesystem, a size-limited workspace
and /tmp, read-only data mounts, labels naming the session and its run. The shell server is the
container's main process (PID 1), spoken to over the attached stdin/stdout.

RAM: the cgroup limit is exactly ``memory_mb``. The workspace and /tmp are loop-mounted ext4
disks on the host (sandbox/disk.py), not tmpfs, because tmpfs pages are charged to the memory
cgroup: with tmpfs, the limit had to be memory + disk + /tmp, and one process could hold all of
it in RAM. Where loop disks are unavailable (a worker that is not root) the old tmpfs layout is
used and ``info()`` says that the memory limit then includes the disk.
"""

from __future__ import annotations

import select
import socket
import struct
import time
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

import docker
import docker.errors
from docker.types import DeviceRequest, Ulimit
from docker.types import Mount as DockerMount

from sandbox import conf, disk
from sandbox.base import LABEL, SandboxError, SandboxSpec, SandboxUnavailable, Session

ISOLATION = (
    "container: non-root user, no network unless the task asks, CPU/pids limits, "
    "all capabilities dropped, no-new-privileges, read-only root filesystem and data mounts, "
)
DISK_ISOLATION = "RAM capped at the memory asked; workspace and /tmp on size-limited loop-mounted disks"
TMPFS_ISOLATION = "memory limit = RAM + workspace + /tmp (tmpfs, charged to RAM: {why})"


def isolation() -> str:
    problem = disk.unavailable()
    return ISOLATION + (TMPFS_ISOLATION.format(why=problem) if problem else DISK_ISOLATION)


@lru_cache(maxsize=1)
def client() -> docker.DockerClient:
    return docker.from_env(timeout=120)


def engine_version() -> str:
    """The engine's version; raises SandboxUnavailable when no engine answers."""
    try:
        return str(client().version().get("Version", "?"))
    except Exception as exc:  # the SDK raises several kinds when the socket is missing
        client.cache_clear()
        raise SandboxUnavailable(f"no Docker engine reachable: {exc}") from exc


def engine_available() -> tuple[bool, str]:
    """(reachable, detail) for the test suite and /healthz."""
    try:
        return True, f"engine {engine_version()}"
    except SandboxUnavailable as exc:
        return False, str(exc)


def image_exists(tag: str) -> bool:
    try:
        client().images.get(tag)
    except docker.errors.ImageNotFound:
        return False
    return True


def import_image(tarball: Path, tag: str, *, changes: list[str], inputs: str) -> None:
    repository, _, version = tag.partition(":")
    changes = [*changes, f"LABEL {LABEL}.inputs={inputs}"]
    client().api.import_image(src=str(tarball), repository=repository, tag=version or "latest", changes=changes)
    if not image_exists(tag):
        raise SandboxError(f"docker import of {tag} did not produce the image")


def info() -> dict[str, Any]:
    tag = conf.image()
    try:
        version = engine_version()
    except SandboxUnavailable as exc:
        return {"isolation": isolation(), "available": False, "detail": str(exc)}
    if not image_exists(tag):
        detail = f"engine {version}; image {tag} missing: run manage.py build_sandbox_image"
        return {"isolation": isolation(), "available": False, "detail": detail}
    return {"isolation": isolation(), "available": True, "detail": f"engine {version}; image {tag}"}


class SocketChannel:
    """stdin/stdout of a ``docker exec`` (no TTY): stdout arrives in 8-byte-header frames."""

    def __init__(self, raw: socket.socket) -> None:
        self.raw = raw
        self.raw.setblocking(True)
        self.pending = bytearray()
        self.stderr = bytearray()

    def send(self, data: bytes) -> None:
        self.raw.sendall(data)

    def recv(self, timeout: float) -> bytes:
        while True:
            out = self._demux()
            if out is not None:
                return out
            if not select.select([self.raw], [], [], timeout)[0]:
                raise TimeoutError
            chunk = self.raw.recv(1 << 16)
            if not chunk:
                return b""
            self.pending += chunk

    def _demux(self) -> bytes | None:
        out = bytearray()
        while len(self.pending) >= 8:
            stream, size = self.pending[0], struct.unpack(">I", self.pending[4:8])[0]
            if len(self.pending) < 8 + size:
                break
            payload = bytes(self.pending[8 : 8 + size])
            del self.pending[: 8 + size]
            if stream == 2:
                self.stderr = (self.stderr + payload)[-4096:]
            else:
                out += payload
        return bytes(out) if out else None

    def close(self) -> None:
        try:
            self.raw.close()
        except OSError:
            pass


class DockerSession(Session):
    backend = "docker"

    def __init__(self, spec: SandboxSpec) -> None:
        super().__init__(spec)
        self.container: Any = None
        self.channel: SocketChannel | None = None
        self.disks: list[disk.Disk] = []

    def container_options(self) -> dict[str, Any]:
        spec = self.spec
        uid, _, gid = conf.docker_uid().partition(":")
        tmp_mb = conf.tmp_mb()
        tmpfs_opts = "rw,exec,nosuid,nodev"
        mounts = [
            DockerMount(target=m.target, source=str(Path(m.source).resolve()), type="bind", read_only=m.read_only)
            for m in spec.mounts
        ]
        if self.disks:
            memory = f"{spec.memory_mb}m"
            tmpfs = {}
            workspace, tmp = self.disks
            mounts = [
                DockerMount(target=spec.workdir, source=workspace.source, type="bind", read_only=False),
                DockerMount(target="/tmp", source=tmp.source, type="bind", read_only=False),
                *mounts,
            ]
        else:
            # tmpfs pages are charged to the memory cgroup: without disks the limit must cover
            # RAM + disk + /tmp, or filling the disk would OOM the shell (info() says so).
            memory = f"{spec.memory_mb + spec.disk_mb + tmp_mb}m"
            tmpfs = {
                spec.workdir: f"{tmpfs_opts},size={spec.disk_mb}m,mode=0755,uid={uid},gid={gid or uid}",
                "/tmp": f"{tmpfs_opts},size={tmp_mb}m,mode=1777",
            }
        return {
            "image": spec.image or conf.image(),
            # The shell server is the container's PID 1: it reaps orphans, and signals from
            # inside the container cannot kill it.
            "command": self.server_command(workdir=spec.workdir),
            "stdin_open": True,
            "user": conf.docker_uid(),
            "network_mode": "bridge" if spec.network else "none",
            "mem_limit": memory,
            "memswap_limit": memory,
            "nano_cpus": int(spec.cpus * 1e9),
            "pids_limit": spec.pids,
            "cap_drop": ["ALL"],
            "security_opt": ["no-new-privileges:true"],
            "read_only": True,
            "tmpfs": tmpfs,
            "mounts": mounts,
            "labels": self.labels,
            "environment": {"HOME": spec.workdir, **spec.env},
            "hostname": "sandbox",
            "working_dir": spec.workdir,
            "ulimits": [Ulimit(name="core", soft=0, hard=0)],
            "shm_size": "64m",
            "ipc_mode": "private",
            **gpu_options(spec.gpus),
        }

    def _start(self) -> SocketChannel:
        uid, _, gid = conf.docker_uid().partition(":")
        try:
            self.disks = disk.session_disks(
                session=self.id,
                workspace_mb=self.spec.disk_mb,
                tmp_mb=conf.tmp_mb(),
                uid=int(uid),
                gid=int(gid or uid),
            )
        except disk.DiskError as exc:
            raise SandboxError(f"cannot make the sandbox's disks: {exc}") from exc
        options = self.container_options()
        api = client().api
        try:
            # create + start, never run: run() would try to pull a missing image from a registry.
            self.container = client().containers.create(**options)
            # Attach before starting so that no byte of the server's output is missed.
            sock = api.attach_socket(self.container.id, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1})
            self.channel = SocketChannel(getattr(sock, "_sock", sock))
            self.container.start()
        except docker.errors.ImageNotFound as exc:
            raise SandboxUnavailable(
                f"sandbox image {options['image']} missing: run manage.py build_sandbox_image"
            ) from exc
        except docker.errors.DockerException as exc:
            raise SandboxError(f"cannot start a sandbox container: {exc}") from exc
        return self.channel

    def identity(self) -> dict[str, str]:
        tag = self.spec.image or conf.image()
        try:
            digest = client().images.get(tag).id
        except docker.errors.DockerException:
            digest = ""
        return {"image": tag, "image_digest": digest}

    def _diagnostics(self) -> str:
        if self.channel and self.channel.stderr:
            return self.channel.stderr.decode(errors="replace")
        return ""

    def _destroy(self) -> None:
        if self.container is not None:
            try:
                self.container.remove(force=True, v=True)
            except docker.errors.NotFound:
                pass
            except docker.errors.DockerException:
                pass  # the reaper finds it by its labels
        for scratch in self.disks:
            scratch.close()


def gpu_options(devices: list[str]) -> dict[str, Any]:
    """A device request for exactly these GPUs (by id, never "all"), which Docker hands to the
    NVIDIA runtime; on a host without it the container's create fails with Docker's own words
    (`could not select device driver "" with capabilities: [[gpu]]`)."""
    if not devices:
        return {}
    return {"device_requests": [DeviceRequest(device_ids=list(devices), capabilities=[["gpu"]])]}


def open_session(spec: SandboxSpec) -> DockerSession:
    engine_version()
    return DockerSession(spec).start()


# -- used by the reaper and the benchmark ---------------------------------------------------
def sandbox_containers() -> Iterator[dict[str, Any]]:
    """Every sandbox container, as {"id", "labels", "status", "created"}."""
    for container in client().containers.list(all=True, filters={"label": LABEL}):
        yield {
            "id": container.id,
            "name": container.name,
            "labels": dict(container.labels),
            "status": container.status,
        }


def remove_container(container_id: str) -> bool:
    try:
        client().containers.get(container_id).remove(force=True, v=True)
    except docker.errors.NotFound:
        return False
    return True


def plain_run(image: str, command: list[str]) -> float:
    """Seconds for a fresh ``docker run --rm`` of ``command`` (benchmark baseline)."""
    started = time.perf_counter()
    client().containers.run(image, command, remove=True, network_mode="none", user=conf.docker_uid())
    return time.perf_counter() - started


def plain_exec(container_id: str, command: list[str]) -> float:
    """Seconds for a fresh ``docker exec`` of ``command`` in a running container."""
    started = time.perf_counter()
    result = client().api.exec_create(container_id, command, user=conf.docker_uid())
    client().api.exec_start(result["Id"])
    return time.perf_counter() - started


# -- used by sandbox/image.py: the Dockerfile build and the manifest label ---------------------------
def build_from_dockerfile(context: Path, tag: str, *, labels: dict[str, str], log: Any, offline: bool = False) -> None:
    """`docker build` of ``context`` (its FROM needs a registry, unless ``offline``: FROM a local
    image, no network in the build); the build's output goes to ``log``."""
    options: dict[str, Any] = {"pull": False, "network_mode": "none"} if offline else {}
    try:
        _, output = client().images.build(path=str(context), tag=tag, labels=labels, rm=True, forcerm=True, **options)
    except docker.errors.BuildError as exc:
        lines = "".join(chunk.get("stream", "") for chunk in exc.build_log)[-3000:]
        raise SandboxError(f"docker build of {context} failed: {exc.msg}\n{lines}") from exc
    except docker.errors.APIError as exc:
        raise SandboxError(f"docker build of {context} failed: {exc}") from exc
    for chunk in output:
        if chunk.get("stream", "").strip():
            log(chunk["stream"].rstrip())


def run_in_image(tag: str, command: list[str]) -> str:
    """Output of ``command`` in a throwaway container of the image: no network, as the sandbox user."""
    output = client().containers.run(tag, command, remove=True, network_mode="none", user=conf.docker_uid())
    return output.decode(errors="replace")


def image_labels(tag: str) -> dict[str, str]:
    return dict(client().images.get(tag).labels or {})


def add_labels(tag: str, labels: dict[str, str]) -> None:
    """Give the image more labels, in place: a container of it is committed under the same tag."""
    repository, _, version = tag.partition(":")
    quoted = {key: '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"' for key, value in labels.items()}
    container = client().containers.create(tag, command=["true"], network_mode="none")
    try:
        container.commit(
            repository=repository, tag=version or "latest", changes=[f"LABEL {k}={v}" for k, v in quoted.items()]
        )
    finally:
        container.remove(force=True)
