"""The persistent shell server that runs INSIDE a sandbox (stdlib only, Python 3.7+).

It is started once per session (``python3 -I -c BOOTSTRAP <size> <config json>``, this source
then sent on stdin, so that ``ps`` stays readable) and speaks a
binary-safe framed protocol on stdin/stdout, so the host never has to guess where a command's
output ends: every reply is ``type (1 byte) + length (4 bytes, big endian) + payload``.

Why a server instead of writing commands into a bare ``bash``: a timeout must kill the command
with its whole process group (and anything it left behind) while the shell survives, and a
builtin loop (``while true; do ...; done``) runs inside bash itself, so it cannot be killed
without killing the shell. Here each command runs in a fresh ``bash`` in its own session that
first restores the shell state (cwd, variables, functions, aliases) saved by the previous
command and saves it again when it exits; the server, which enforces timeouts inside the
sandbox, is never part of the killed group. Killed commands keep the state from before them.
In docker and bwrap the server is PID 1 of the sandbox: the agent's signals cannot end it, and
it reaps orphans. Commands raise their own oom_score_adj so that the OOM killer picks them.

Requests (one JSON line each):
  {"op": "run", "command": str, "timeout": float, "idle_timeout": float|null, "limit": int}
  {"op": "put", "path": str, "mode": int, "size": int}   followed by ``size`` raw bytes
  {"op": "get", "path": str, "max": int}
  {"op": "interrupt"}   only while a command runs: kill it (its D says "interrupted"); ignored otherwise
  {"op": "exit"}
Replies: R ready(json) | O output bytes (head) | T output bytes (tail) | D done(json)
         | K ok | F file bytes | X error(json)
"""

import json
import os
import select
import signal
import struct
import subprocess
import sys
import time

WRAPPER = r"""
{ echo 800 > /proc/self/oom_score_adj; } 2>/dev/null
__sbx_state="$1"
if [ -f "$__sbx_state/env" ]; then . "$__sbx_state/env" 2>/dev/null; fi
shopt -s expand_aliases
trap '__sbx_rc=$?; builtin export -n __sbx_rc __sbx_state __sbx_cmd 2>/dev/null;
{ builtin printf "builtin cd -- %q 2>/dev/null\n" "$PWD"; builtin export -p;
  builtin declare -f; builtin alias -p; } > "$__sbx_state/env" 2>/dev/null; exit $__sbx_rc' EXIT
__sbx_cmd="$2"
set -a
eval "$__sbx_cmd"
"""

INTERRUPT = b'{"op": "interrupt"}\n'  # byte for byte what the host sends (sandbox.base)
OOM_FILES = ("/sys/fs/cgroup/memory/memory.oom_control", "/sys/fs/cgroup/memory.events")
OOM_MARKERS = (b"MemoryError", b"Cannot allocate memory", b"std::bad_alloc", b"out of memory")


def send(kind, payload=b""):
    data = struct.pack(">cI", kind, len(payload)) + payload
    view = memoryview(data)
    while view:
        written = os.write(1, view)
        view = view[written:]


def send_json(kind, obj):
    send(kind, json.dumps(obj).encode())


def oom_kills():
    for path in OOM_FILES:
        if not path:
            continue
        try:
            with open(path) as fh:
                for line in fh:
                    key, _, value = line.partition(" ")
                    if key == "oom_kill":
                        return int(value)
        except (OSError, ValueError):
            continue
    return None


def cannot_start_reply(out):
    """The D reply for a command that never started: exit 126, as bash gives for one it cannot run."""
    return {
        "exit_code": 126,
        "timed_out": False,
        "killed": None,
        "oom": False,
        "total": out.total,
        "omitted": 0,
        "duration": 0.0,
    }


def outcome(code, killed, ooms, out):
    """(exit code, out of memory) of a finished command. A killed one exits 130 (interrupted) or
    124 (timed out) and is never called out of memory. Otherwise the cgroup's OOM-kill counter
    decides where it can be read (``ooms`` is its value before the command); without one a
    SIGKILL is taken for the OOM killer's; and a failed command whose last output names memory
    exhaustion counts too."""
    signaled = code < 0
    exit_code = 130 if killed == "interrupted" else 124 if killed else (128 - code if signaled else code)
    after = oom_kills()
    oom = False
    if not killed:
        if ooms is not None and after is not None:
            oom = after > ooms
        elif signaled and -code == signal.SIGKILL:
            oom = True
        if not oom and exit_code != 0:
            oom = any(marker in bytes(out.recent) for marker in OOM_MARKERS)
    return exit_code, oom


def harden():
    # Not dumpable: processes of the same uid (the agent's) cannot ptrace this server or open
    # /proc/<pid>/fd/1 to forge frames on the host channel.
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 4
    except Exception:
        pass


class Server:
    def __init__(self, config):
        self.workdir = config["workdir"]
        self.state_dir = config["state_dir"]
        self.scope = config.get("kill_scope", "namespace")
        self.pids_limit = int(config.get("pids") or 0)
        self.env = dict(os.environ)
        self.env.update(config.get("env") or {})
        self.protected = set(self.pids()) if self.scope == "namespace" else set()
        self.protected.update({1, os.getpid()})
        self.sessions = set()  # sessions of started commands: what "tree" scope may kill
        os.makedirs(self.state_dir, mode=0o700, exist_ok=True)
        self.stdin = Input(sys.stdin.fileno())

    @staticmethod
    def pids():
        return [int(name) for name in os.listdir("/proc") if name.isdigit()]

    @staticmethod
    def stat(pid):
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
            return fields[0], int(fields[1]), int(fields[3])  # state, ppid, session
        except (OSError, IndexError, ValueError):
            return None

    def leftovers(self, session):
        """Processes to kill after a command: everything but the server's own in a sandbox
        namespace; the command's session and descendants for the unisolated local backend."""
        found = []
        if self.scope == "namespace":
            for pid in self.pids():
                info = self.stat(pid) if pid not in self.protected else None
                if info and info[0] != b"Z":
                    found.append(pid)
            return found
        children = {}
        for pid in self.pids():
            info = self.stat(pid)
            if info and info[0] != b"Z":
                children.setdefault(info[1], []).append(pid)
                if info[2] == session or info[2] in self.sessions:
                    found.append(pid)
        stack = [os.getpid()]
        while stack:
            for child in children.get(stack.pop(), []):
                found.append(child)
                stack.append(child)
        return [pid for pid in set(found) if pid not in self.protected]

    def reap(self, skip=None):
        """As PID 1, collect orphans that died (they would hold pids forever); never the
        running command, whose status Popen needs."""
        if os.getpid() != 1:
            return
        for pid in self.pids():
            if pid == skip:
                continue
            info = self.stat(pid)
            if info and info[0] == b"Z" and info[1] == 1:
                try:
                    os.waitpid(pid, os.WNOHANG)
                except OSError:
                    pass

    def kill_all(self, session):
        # Stop first, then kill, and repeat: a fork bomb respawns between single kills.
        for _ in range(200):
            self.reap(skip=session)
            targets = self.leftovers(session)
            if not targets:
                return
            for sig in (signal.SIGSTOP, signal.SIGKILL):
                for pid in targets:
                    try:
                        os.kill(pid, sig)
                    except OSError:
                        pass
            time.sleep(0.005)

    def run(self, request):
        limit = max(int(request.get("limit") or 65536), 2)
        out = Output(limit)
        ooms = oom_kills()
        started = time.monotonic()
        try:
            proc = self.spawn(request["command"], out)
        except OSError as exc:
            out.absorb(f"[sandbox: cannot start the command: {exc}]\n".encode())
            send_json(b"D", cannot_start_reply(out))
            return
        fd = proc.stdout.fileno()
        os.set_blocking(fd, False)
        pidfd = open_pidfd(proc.pid)
        killed = self.follow(proc, fd, pidfd, out, started, request.get("timeout"), request.get("idle_timeout"))
        if killed:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass
            self.kill_all(proc.pid)
        proc.wait()
        self.reap()
        drain(fd, out)
        if pidfd is not None:
            os.close(pidfd)
        proc.stdout.close()
        duration = time.monotonic() - started
        exit_code, oom = outcome(proc.returncode, killed, ooms, out)
        if out.tail:
            send(b"T", bytes(out.tail))
        send_json(
            b"D",
            {
                "exit_code": exit_code,
                "timed_out": killed in ("timeout", "idle"),
                "interrupted": killed == "interrupted",
                "killed": killed,
                "oom": oom,
                "total": out.total,
                "omitted": out.omitted,
                "duration": duration,
            },
        )

    def follow(self, proc, fd, pidfd, out, started, timeout, idle):
        """Pass the command's output on until it exits (None) or must be killed: "timeout",
        "idle" (no output for ``idle`` seconds) or "interrupted" (the host asked, or went away).
        Waits on the pidfd where there is one, so an exit is seen at once; else polls."""
        if self.stdin.interrupted():
            return "interrupted"
        last_output = started
        eof = False
        while True:
            now = time.monotonic()
            waits = [1.0]
            if timeout:
                waits.append(started + timeout - now)
            if idle:
                waits.append(last_output + idle - now)
            wait = min(waits)
            if wait <= 0:
                return "timeout" if timeout and now - started >= timeout else "idle"
            watch = [] if eof else [fd]
            if pidfd is not None:
                watch.append(pidfd)
            if not self.stdin.closed:
                watch.append(self.stdin.fd)  # the host may ask to interrupt (a cancelled run)
            ready = select.select(watch, [], [], min(wait, 0.05) if pidfd is None else wait)[0]
            if self.stdin.fd in ready:
                self.stdin.fill()
                if self.stdin.interrupted():
                    return "interrupted"
            if fd in ready:
                try:
                    data = os.read(fd, 1 << 16)
                except BlockingIOError:
                    data = None
                if data == b"":
                    eof = True
                elif data:
                    last_output = time.monotonic()
                    out.absorb(data)
            if proc.poll() is not None:
                # Exited; a background child may still hold the pipe, so take what is buffered.
                return None

    def spawn(self, command, out):
        """Start the command; background processes may outlive commands, but when they fill
        half the process limit (a fork bomb) they are all killed so that the shell keeps working."""
        cwd = self.workdir if os.path.isdir(self.workdir) else "/"
        self.reap()
        # Half the process limit in background processes is a fork bomb, not a training job.
        crowded = self.pids_limit and len(self.leftovers(-1)) >= max(8, self.pids_limit // 2)
        for attempt in range(3):
            if crowded or attempt:
                self.kill_all(-1)
                out.absorb(b"[sandbox: background processes filled the process limit; killed them all]\n")
                crowded = False
            try:
                proc = subprocess.Popen(
                    ["bash", "--noprofile", "--norc", "-c", WRAPPER, "bash", self.state_dir, command],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    cwd=cwd,
                    env=self.env,
                    start_new_session=True,
                )
                self.sessions.add(proc.pid)
                return proc
            except BlockingIOError:
                continue
        raise OSError("cannot start a process in the sandbox")

    def resolve(self, path):
        return path if path.startswith("/") else os.path.join(self.workdir, path)

    def put(self, request):
        size = int(request["size"])
        data = self.stdin.read(size)
        if len(data) != size:
            raise SystemExit(0)
        path = self.resolve(request["path"])
        try:
            parent = os.path.dirname(path)
            if parent:
                os.makedirs(parent, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)
            os.chmod(path, int(request.get("mode", 0o644)))
        except OSError as exc:
            send_json(b"X", {"error": f"{request['path']}: {exc.strerror or exc}"})
            return
        send(b"K")

    def get(self, request):
        path = self.resolve(request["path"])
        limit = int(request.get("max") or (256 << 20))
        try:
            with open(path, "rb") as fh:
                data = fh.read(limit + 1)
        except OSError as exc:
            send_json(b"X", {"error": f"{request['path']}: {exc.strerror or exc}"})
            return
        if len(data) > limit:
            send_json(b"X", {"error": f"{request['path']}: larger than {limit} bytes"})
            return
        send(b"F", data)

    def serve(self):
        send_json(b"R", {"pid": os.getpid(), "oom_counter": oom_kills() is not None})
        while True:
            line = self.stdin.readline()
            if not line:
                break
            request = json.loads(line)
            op = request.get("op")
            if op == "run":
                self.run(request)
            elif op == "put":
                self.put(request)
            elif op == "get":
                self.get(request)
            elif op == "interrupt":
                continue  # the command it was meant for ended first: no reply, none is awaited
            elif op == "exit":
                break
            else:
                send_json(b"X", {"error": f"unknown op {op!r}"})
        self.kill_all(-1)


class Input:
    """stdin read straight from its fd with a buffer of our own: the command loop selects on the
    fd to see an interrupt, which a buffered reader could hold unseen in its buffer."""

    def __init__(self, fd):
        self.fd = fd
        self.buffer = bytearray()
        self.closed = False

    def fill(self):
        """One read (the caller knows the fd is readable, or is willing to wait)."""
        data = os.read(self.fd, 1 << 16)
        if data:
            self.buffer += data
        else:
            self.closed = True

    def readline(self):
        while b"\n" not in self.buffer and not self.closed:
            self.fill()
        end = self.buffer.find(b"\n") + 1 or len(self.buffer)
        line = bytes(self.buffer[:end])
        del self.buffer[:end]
        return line

    def read(self, size):
        while len(self.buffer) < size and not self.closed:
            self.fill()
        data = bytes(self.buffer[:size])
        del self.buffer[:size]
        return data

    def interrupted(self):
        """True if the host asked to interrupt (the request is consumed), or went away: nobody
        would read the command's output. Only interrupts can arrive while a command runs."""
        if self.closed:
            return True
        if self.buffer.startswith(INTERRUPT):
            del self.buffer[: len(INTERRUPT)]
            return True
        return False


class Output:
    """Streams the first half of the limit at once (head) and keeps a rolling tail."""

    def __init__(self, limit):
        self.head_left = limit // 2
        self.tail_limit = limit - limit // 2
        self.tail = bytearray()
        self.recent = bytearray()  # last 4 KiB, wherever it went: read for out-of-memory messages
        self.total = 0
        self.omitted = 0

    def absorb(self, data):
        self.total += len(data)
        self.recent = (self.recent + data)[-4096:]
        if self.head_left > 0:
            head = data[: self.head_left]
            send(b"O", head)
            self.head_left -= len(head)
            data = data[len(head) :]
        if data:
            self.tail += data
            excess = len(self.tail) - self.tail_limit
            if excess > 0:
                self.omitted += excess
                del self.tail[:excess]


def drain(fd, out):
    # What is already in the pipe; never wait for EOF (a background child may hold the pipe).
    for _ in range(256):
        try:
            data = os.read(fd, 1 << 16)
        except (BlockingIOError, OSError):
            return
        if not data:
            return
        out.absorb(data)


def open_pidfd(pid):
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def configure(config):
    global OOM_FILES
    if config.get("oom_file"):
        OOM_FILES = (config["oom_file"], *OOM_FILES)


def main():
    # As PID 1 of its namespace (docker, bwrap) the server receives from inside the sandbox
    # only signals it handles: with no handlers, `kill -9 -1` or `pkill python` by the agent
    # cannot end it. Python's own SIGINT handler is removed for that reason.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    harden()
    config = json.loads(sys.argv[-1])
    configure(config)
    Server(config).serve()


if __name__ == "__main__":
    main()
