"""The Podman backend: the sandbox image without a Docker daemon (a Slurm node, a locked-down host).

The same image (``referee-sandbox:<hash>``, loaded into Podman's store once per node, see
``ensure_image``) and the same walls as the Docker backend: user 1000, ``--network none`` unless
the task asks (then slirp4netns, which does not reach the host's loopback), memory (= swap), CPU
and pids limits, all capabilities dropped, no-new-privileges, read-only root filesystem, the
workspace and /tmp size-limited, read-only data mounts, no host path but the spec's mounts, labels
``referee.sandbox.*``. The shell server is the container's PID 1, spoken to over the stdin/stdout
of ``podman run -i`` (no daemon: the podman process is the channel).

Who runs podman (``mode()``):
- **rootless**: podman runs as an unprivileged account (the worker itself when it is not root,
  else ``SANDBOX_PODMAN_USER``), so even an escape from the container lands as that account. Used
  only where rootless containers get their limits: cgroups v2 with the memory, pids and cpu
  controllers delegated. On cgroups v1 rootless podman ignores every limit ("Resource limits are
  not supported and ignored on cgroups V1 rootless systems"), which is no sandbox; then
- **root with a user namespace**: root podman, but the container's uids are mapped to an unused
  host range (``--uidmap 0:SANDBOX_PODMAN_UID_BASE:65536``): root in the container is no one on
  the host, and the cgroup limits hold. A root worker also gives these sandboxes the loop-mounted
  disks (sandbox/disk.py), so files do not count as RAM. ``info()`` says which mode holds and why.
"""

from __future__ import annotations

import fcntl
import json
import os
import pwd
import resource
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sandbox import conf, disk, process
from sandbox.base import LABEL, SandboxError, SandboxSpec, SandboxUnavailable, Session

ROOTLESS, ROOT = "rootless", "root"
MODES = ("auto", ROOTLESS, ROOT)
NEEDED_CONTROLLERS = ("memory", "pids", "cpu")
NAME_PREFIX = "referee-sandbox-"
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
V1_ROOTLESS = "Resource limits are not supported and ignored on cgroups V1 rootless systems"
ISOLATION = (
    "container (podman, {mode}): non-root user, no network unless the task asks, CPU/pids limits, "
    "all capabilities dropped, no-new-privileges, read-only root filesystem and data mounts, "
)


# -- settings -------------------------------------------------------------------------------------
def mode_setting() -> str:
    value = str(conf._setting("SANDBOX_PODMAN_MODE", "auto") or "auto")
    if value not in MODES:
        raise SandboxUnavailable(f"SANDBOX_PODMAN_MODE={value!r}: use one of {', '.join(MODES)}")
    return value


def user_setting() -> str:
    """The account that runs rootless podman when the worker is root ("" = none: root podman)."""
    return str(conf._setting("SANDBOX_PODMAN_USER", "") or "")


def uid_base() -> int:
    """Root mode: the host uid that the container's uid 0 maps to (65536 uids from there)."""
    return int(conf._setting("SANDBOX_PODMAN_UID_BASE", 1_000_000_000))


def runtime() -> str | None:
    """The OCI runtime: SANDBOX_PODMAN_RUNTIME, else podman's own default, except on a hybrid
    cgroup layout (v1 controllers plus a v2 hierarchy that holds controllers too), where crun
    refuses every container ("cgroups in hybrid mode not supported, drop all controllers from
    cgroupv2") and runc, where installed, works."""
    value = str(conf._setting("SANDBOX_PODMAN_RUNTIME", "") or "")
    if value:
        return value
    unified = Path("/sys/fs/cgroup/unified/cgroup.controllers")
    try:
        hybrid = bool(unified.read_text().split())
    except OSError:
        hybrid = False
    return "runc" if hybrid and shutil.which("runc") else None


# -- who runs podman ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Mode:
    kind: str  # rootless or root
    user: str = ""  # the account running rootless podman ("" = the worker itself)
    uid: int | None = None  # set when podman runs as another account than the worker
    gid: int | None = None
    home: str = ""
    note: str = ""  # why this mode, in words
    problem: str = ""  # podman cannot run sandboxes here at all: why


def _account(name: str) -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(name)
    except KeyError:
        raise SandboxUnavailable(f"SANDBOX_PODMAN_USER={name!r} is not an account on this host") from None


def global_args() -> list[str]:
    args = [shutil.which("podman") or "podman"]  # the podman found on PATH, not the first on SYSTEM_PATH
    chosen = runtime()
    if chosen:
        args += ["--runtime", chosen]
    if not os.path.isdir("/run/systemd/system"):
        args += ["--cgroup-manager", "cgroupfs"]  # no systemd to ask for cgroups (a container, a bare node)
    return [*args, "--events-backend", "none"]


def _env(mode: Mode, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {"PATH": SYSTEM_PATH, "LANG": "C.UTF-8", "HOME": mode.home or os.environ.get("HOME", "/root")}
    for key in ("CONTAINERS_CONF", "CONTAINERS_STORAGE_CONF", "CONTAINERS_REGISTRIES_CONF"):
        if key in os.environ:  # an admin's own podman configuration
            env[key] = os.environ[key]
    uid = os.geteuid() if mode.uid is None else mode.uid
    if mode.kind == ROOTLESS:
        runtime_dir = f"/run/user/{uid}"
        if os.path.isdir(runtime_dir) and os.stat(runtime_dir).st_uid == uid:
            env["XDG_RUNTIME_DIR"] = runtime_dir
        if mode.user:
            env["USER"] = env["LOGNAME"] = mode.user
    return {**env, **(extra or {})}


def _preexec(mode: Mode) -> Callable[[], None]:
    def apply() -> None:
        if mode.uid is not None and mode.gid is not None:
            os.setgroups([])
            os.setgid(mode.gid)
            os.setuid(mode.uid)

    return apply


def _run(
    mode: Mode, args: list[str], *, timeout: float = 120, stdin: Any = None, cwd: str = "/"
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*global_args(), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=_env(mode),
        preexec_fn=_preexec(mode),
        stdin=stdin,
        cwd=cwd,
    )


def rootless_problem(mode: Mode) -> str:
    """Empty when rootless podman runs here *and* can hold a container to its limits, else why not."""
    try:
        result = _run(mode, ["info", "--format", "json"], timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"`podman info` failed: {exc}"
    if result.returncode != 0:
        return f"`podman info` failed: {(result.stderr or result.stdout).strip()[-500:]}"
    host = json.loads(result.stdout).get("host", {})
    version = host.get("cgroupVersion", "?")
    controllers = host.get("cgroupControllers") or []
    missing = [name for name in NEEDED_CONTROLLERS if name not in controllers]
    if version != "v2":
        return (
            f"the host has cgroups {version} (podman info: cgroupControllers {controllers}), and rootless podman "
            f'sets no limits there (podman: "{V1_ROOTLESS}")'
        )
    if missing:
        return (
            f"cgroups v2 without the {', '.join(missing)} controller(s) delegated to the account (podman info: "
            f"cgroupControllers {controllers}): rootless containers would run without those limits"
        )
    return ""


@conf.probed_once
def mode() -> Mode:
    """Rootless where it holds the limits, else root with a user namespace (root workers only)."""
    try:
        return _mode()
    except SandboxUnavailable as exc:  # a bad setting: said where the backend is shown, not raised there
        return Mode(ROOT, problem=str(exc))


def _mode() -> Mode:
    if not shutil.which("podman"):
        return Mode(ROOT, problem="podman is not installed")
    wanted = mode_setting()
    if os.geteuid() != 0:
        me = pwd.getpwuid(os.geteuid())
        rootless = Mode(ROOTLESS, user=me.pw_name, home=me.pw_dir, note="podman runs as the worker's own account")
        if wanted == ROOT:
            return Mode(ROOT, problem="SANDBOX_PODMAN_MODE=root, but the worker is not root")
        why = rootless_problem(rootless)
        if why:
            return Mode(ROOTLESS, problem=f"rootless podman cannot hold the sandbox's limits: {why}")
        return rootless
    name = user_setting()
    why_not = "SANDBOX_PODMAN_USER names no account to run rootless podman as"
    if name and wanted != ROOT:
        account = _account(name)
        rootless = Mode(
            ROOTLESS, user=name, uid=account.pw_uid, gid=account.pw_gid, home=account.pw_dir, note=f"as {name}"
        )
        why = rootless_problem(rootless)
        if not why:
            return rootless
        why_not = f"rootless podman as {name} cannot hold the sandbox's limits: {why}"
    if wanted == ROOTLESS:
        return Mode(ROOTLESS, problem=f"SANDBOX_PODMAN_MODE=rootless, but {why_not}")
    base = uid_base()
    note = f"root podman, the container's uids mapped to host uids {base}-{base + 65535}"
    return Mode(ROOT, note=note if wanted == ROOT else f"{note} ({why_not})")


@conf.probed_once
def probe() -> str | None:
    """None when podman runs sandboxes here, else why not."""
    current = mode()
    if current.problem:
        return current.problem
    try:
        result = _run(current, ["version", "--format", "{{.Client.Version}}"], timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"podman does not run: {exc}"
    if result.returncode != 0:
        return f"podman does not run: {(result.stderr or result.stdout).strip()[-500:]}"
    return None


def version() -> str:
    result = _run(mode(), ["version", "--format", "{{.Client.Version}}"], timeout=60)
    return result.stdout.strip() or "?"


def isolation() -> str:
    current = mode()
    kind = f"rootless, {current.note}" if current.kind == ROOTLESS else current.note or "root"
    problem = disk.unavailable() if current.kind == ROOT else "rootless podman cannot bind loop-mounted disks"
    files = (
        f"memory limit = RAM + workspace + /tmp (tmpfs, charged to RAM: {problem})"
        if problem
        else "RAM capped at the memory asked; workspace and /tmp on size-limited loop-mounted disks"
    )
    return ISOLATION.format(mode=kind) + files


def info() -> dict[str, Any]:
    problem = probe()
    if problem:
        return {"isolation": isolation() if not mode().problem else "none", "available": False, "detail": problem}
    tag = conf.image()
    if not image_exists(tag):
        detail = f"podman {version()}; image {tag} not loaded yet: the first sandbox loads it (see sandbox/README.md)"
        return {"isolation": isolation(), "available": True, "detail": detail}
    return {"isolation": isolation(), "available": True, "detail": f"podman {version()}; image {tag}"}


# -- the image, once per node ------------------------------------------------------------------------
def image_exists(tag: str) -> bool:
    return _run(mode(), ["image", "exists", tag], timeout=60).returncode == 0


def image_id(tag: str) -> str:
    result = _run(mode(), ["image", "inspect", "--format", "{{.Id}}", tag], timeout=60)
    return f"sha256:{result.stdout.strip()}" if result.returncode == 0 and result.stdout.strip() else ""


def image_labels(tag: str) -> dict[str, str]:
    result = _run(mode(), ["image", "inspect", "--format", "{{json .Labels}}", tag], timeout=60)
    if result.returncode != 0:
        raise SandboxError(f"podman image inspect {tag}: {result.stderr.strip()[-500:]}")
    return json.loads(result.stdout or "{}") or {}


def _checked(result: subprocess.CompletedProcess[str], what: str) -> str:
    if result.returncode != 0:
        raise SandboxError(
            f"{what} failed (exit {result.returncode}): {(result.stderr or result.stdout).strip()[-2000:]}"
        )
    return result.stdout


def load_from_docker(tag: str, log: Callable[[str], None]) -> bool:
    """`docker save | podman load` when a Docker engine on this node holds the image; False otherwise."""
    try:
        from sandbox import docker as sandbox_docker

        if not sandbox_docker.engine_available()[0] or not sandbox_docker.image_exists(tag):
            return False
    except Exception:  # no SDK, no engine: nothing to load from
        return False
    log(f"loading {tag} into podman from the Docker engine (docker save | podman load)")
    saver = subprocess.Popen(["docker", "save", tag], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        loaded = _run(mode(), ["load"], stdin=saver.stdout, timeout=1800)
    finally:
        assert saver.stdout is not None
        saver.stdout.close()
        saver.wait(timeout=60)
    if saver.returncode != 0:
        raise SandboxError(f"docker save {tag} failed: {saver.stderr.read().decode(errors='replace')[-1000:]}")
    _checked(loaded, f"podman load of {tag}")
    return True


def import_rootfs(tarball: Path, tag: str, *, changes: list[str], inputs: str) -> None:
    """`podman import` of the debootstrap rootfs (sandbox/image.py), as `docker import` does it."""
    args = ["import"]
    for change in [*changes, f"LABEL {LABEL}.inputs={inputs}"]:
        args += ["--change", change]
    # The tarball is opened by the worker and handed over as stdin: a rootless podman running as
    # another account need not read the worker's cache.
    with tarball.open("rb") as fh:
        _checked(_run(mode(), [*args, "-", tag], stdin=fh, timeout=1800), f"podman import of {tag}")


def ensure_image(tag: str, *, log: Callable[[str], None] = lambda line: None) -> str:
    """The image in podman's store under ``tag``, put there once per node by loading it from this
    node's Docker engine where it has the image; never pulled from a registry. A node without that
    engine gets it from ``manage.py build_sandbox_image --engine podman`` (sandbox.image builds or
    imports it there: minutes, and root for the offline build, so not inside a run's start)."""
    if image_exists(tag):
        return tag
    conf.cache_dir().mkdir(parents=True, exist_ok=True)
    with (conf.cache_dir() / ".podman-lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one load per node; the others wait and then find it
        if image_exists(tag):
            return tag
        started = time.monotonic()
        if not load_from_docker(tag, log):
            raise SandboxError(
                f"no Docker engine on this node holds {tag} and podman's store lacks it: run "
                "`manage.py build_sandbox_image --engine podman` on this node once (it imports the offline "
                "build of the default image; a task's variant is built by sandbox.variants before its run starts)"
            )
        if not image_exists(tag):
            raise SandboxError(f"loading {tag} into podman did not produce the image")
        log(f"image {tag} in podman's store after {time.monotonic() - started:.1f}s")
    return tag


# -- sessions -----------------------------------------------------------------------------------------
def _ulimits() -> list[str]:
    # Podman's defaults (nofile 1048576, nproc 4194304) are above the hard limits of many hosts, and
    # in a user namespace the runtime cannot raise a limit ("error setting rlimit type 6: operation
    # not permitted"): at most what podman itself runs with, the worker's hard nofile, and nproc
    # 32768 (podman 4.3 lowers its own RLIMIT_NPROC to that, /proc/<podman>/limits). nproc is no
    # wall here (it counts per host uid); the pids limit of the cgroup is.
    args = ["--ulimit", "core=0:0"]
    for name, limit, most in (("nofile", resource.RLIMIT_NOFILE, 1 << 20), ("nproc", resource.RLIMIT_NPROC, 32768)):
        hard = resource.getrlimit(limit)[1]
        value = most if hard == resource.RLIM_INFINITY else min(hard, most)
        args += ["--ulimit", f"{name}={value}:{value}"]
    return args


class PodmanSession(Session):
    backend = "podman"

    def __init__(self, spec: SandboxSpec) -> None:
        super().__init__(spec)
        self.mode = mode()
        self.name = NAME_PREFIX + self.id
        self.channel: process.PipeChannel | None = None
        self.disks: list[disk.Disk] = []

    def sandbox_uid(self) -> tuple[int, int]:
        """The host uid/gid of the container's user 1000 where the worker can tell (root mode)."""
        uid, _, gid = conf.docker_uid().partition(":")
        return uid_base() + int(uid), uid_base() + int(gid or uid)

    def run_args(self) -> list[str]:
        spec = self.spec
        uid, _, gid = conf.docker_uid().partition(":")
        tmp_mb = conf.tmp_mb()
        args = ["run", "-i", "--rm", "--pull", "never", "--log-driver", "none", "--name", self.name]
        args += ["--user", conf.docker_uid(), "--network", "slirp4netns" if spec.network else "none"]
        if self.disks:
            memory = spec.memory_mb
            workspace, tmp = self.disks
            mounts = [(workspace.source, spec.workdir, False), (tmp.source, "/tmp", False)]
            tmpfs: list[str] = []
        else:
            # tmpfs pages are charged to the memory cgroup: the limit covers RAM + disk + /tmp (info() says so).
            memory = spec.memory_mb + spec.disk_mb + tmp_mb
            mounts = []
            opts = "rw,exec,nosuid,nodev"
            tmpfs = [f"{spec.workdir}:{opts},size={spec.disk_mb}m,mode=0755,U", f"/tmp:{opts},size={tmp_mb}m,mode=1777"]
        args += ["--memory", f"{memory}m", "--memory-swap", f"{memory}m", "--cpus", str(spec.cpus)]
        args += ["--pids-limit", str(spec.pids), "--cap-drop", "ALL", "--security-opt", "no-new-privileges"]
        # Only the mounts named here are writable: no tmpfs of podman's own on /run, /var/tmp.
        args += ["--read-only", "--read-only-tmpfs=false", "--hostname", "sandbox", "--workdir", spec.workdir]
        args += ["--shm-size", "64m", "--ipc", "private", "--cgroupns", "private", *_ulimits()]
        if self.mode.kind == ROOT:
            base = uid_base()
            args += ["--uidmap", f"0:{base}:65536", "--gidmap", f"0:{base}:65536"]
        for target in tmpfs:
            args += ["--tmpfs", target]
        mounts += [(str(Path(m.source).resolve()), m.target, m.read_only) for m in spec.mounts]
        for source, target, read_only in mounts:
            if not os.path.exists(source):
                raise SandboxError(f"mount source {source} does not exist")
            args += ["--mount", f"type=bind,source={source},target={target}" + (",readonly" if read_only else "")]
        for key, value in self.labels.items():
            args += ["--label", f"{key}={value}"]
        # As the Docker backend: the server's config (its argv) carries spec.env too.
        for key, value in {"HOME": spec.workdir, **spec.env}.items():
            args += ["--env", f"{key}={value}"]
        return [*args, spec.image or conf.image(), *self.server_command(workdir=spec.workdir)]

    def _start(self) -> process.PipeChannel:
        problem = probe()
        if problem:
            raise SandboxUnavailable(f"podman cannot run sandboxes here: {problem}")
        tag = self.spec.image or conf.image()
        try:
            ensure_image(tag)
        except SandboxError as exc:
            raise SandboxUnavailable(
                f"sandbox image {tag} is not in podman's store and cannot be loaded: {exc}"
            ) from exc
        if self.mode.kind == ROOT:
            uid, gid = self.sandbox_uid()
            try:
                self.disks = disk.session_disks(
                    session=self.id, workspace_mb=self.spec.disk_mb, tmp_mb=conf.tmp_mb(), uid=uid, gid=gid
                )
            except disk.DiskError as exc:
                raise SandboxError(f"cannot make the sandbox's disks: {exc}") from exc
        args = [*global_args(), *self.run_args()]
        self.channel = process.start(args, env=_env(self.mode), preexec=_preexec(self.mode), cwd="/")
        return self.channel

    def identity(self) -> dict[str, str]:
        tag = self.spec.image or conf.image()
        return {"image": tag, "image_digest": image_id(tag), "podman_mode": self.mode.kind}

    def _diagnostics(self) -> str:
        return self.channel.diagnostics() if self.channel else ""

    def _destroy(self) -> None:
        # The podman process is only the attached client: the container is removed by name.
        try:
            _run(self.mode, ["rm", "--force", "--time", "0", "--ignore", self.name], timeout=120)
        except (OSError, subprocess.TimeoutExpired):
            pass  # the reaper finds it by its labels
        for scratch in self.disks:
            scratch.close()


def open_session(spec: SandboxSpec) -> PodmanSession:
    return PodmanSession(spec).start()


# -- used by the reaper -------------------------------------------------------------------------------
def sandbox_containers() -> Iterator[dict[str, Any]]:
    """Every podman sandbox container, as {"id", "name", "labels", "status"}."""
    result = _run(mode(), ["ps", "--all", "--filter", f"label={LABEL}", "--format", "json"], timeout=60)
    for container in json.loads(_checked(result, "podman ps") or "[]"):
        yield {
            "id": container["Id"],
            "name": (container.get("Names") or [container["Id"]])[0],
            "labels": dict(container.get("Labels") or {}),
            "status": str(container.get("State", "")).lower(),
        }


def remove_container(container_id: str) -> bool:
    result = _run(mode(), ["rm", "--force", "--time", "0", container_id], timeout=120)
    return result.returncode == 0


# -- used by sandbox/image.py: builds without Docker ----------------------------------------------------
def build_from_dockerfile(
    context: Path, tag: str, *, labels: dict[str, str], log: Callable[[str], None], offline: bool = False
) -> None:
    """`podman build` of ``context`` (its FROM needs a registry), as the account sessions run as.
    ``offline`` (a task's variant, sandbox.variants): FROM an image in podman's store, never pulled,
    and no network in the build. (Not in the sessions' user namespace: `--userns-uid-map` stores the
    layer's files under the mapped host uids, and the sessions' own map then cannot open /run.)"""
    args = ["build", "--tag", tag, "--layers=false"]
    if offline:
        args += ["--pull=never", "--network=none"]
    for key, value in labels.items():
        args += ["--label", f"{key}={value}"]
    output = _checked(_run(mode(), [*args, str(context)], timeout=3600), f"podman build of {context}")
    for line in output.splitlines()[-20:]:
        log(line)


def run_in_image(tag: str, command: list[str]) -> str:
    """Output of ``command`` in a throwaway container of the image: no network, as the sandbox user."""
    args = ["run", "--rm", "--pull", "never", "--network", "none", "--user", conf.docker_uid(), *_ulimits()]
    return _checked(_run(mode(), [*args, tag, *command], timeout=300), f"podman run of {tag}")


def add_labels(tag: str, labels: dict[str, str]) -> None:
    """Give the image more labels, in place: a container of it is committed under the same tag."""
    name = f"{NAME_PREFIX}label-{os.getpid()}"
    _checked(_run(mode(), ["create", "--pull", "never", "--name", name, tag, "true"]), f"podman create of {tag}")
    try:
        args = ["commit", "--quiet"]
        for key, value in labels.items():
            # podman keeps a quoted value's backslashes (`"{\"a\": 1}"` stays escaped): values go
            # unquoted, JSON without its spaces, and any other whitespace is refused.
            try:
                value = json.dumps(json.loads(value), sort_keys=True, separators=(",", ":"))
            except ValueError:
                pass
            if any(c.isspace() for c in value):
                raise SandboxError(f"label {key}: podman cannot commit a value with whitespace: {value[:200]!r}")
            args += ["--change", f"LABEL {key}={value}"]
        _checked(_run(mode(), [*args, name, tag], timeout=600), f"podman commit of {tag}")
    finally:
        _run(mode(), ["rm", "--force", name])
