"""The submission's side of an evaluation: load the submitted module and answer calls (stdlib only).

Runs INSIDE the submission's own sandbox, which holds only the submitted files: no evaluator,
no labels, no opponents, no metrics file, no network. The evaluator runs in another sandbox and
reaches this process only through two named pipes that the worker made and mounted into both:

    python3 -I driver.py CALLS REPLIES MODULE FUNCTION[,FUNCTION...]

Protocol (one JSON object per line, UTF-8; the evaluator's side is runtime/arena.py):
    replies <- {"ready": true, "functions": [...]}      or {"error": "cannot load ..."}
    calls   -> {"id": n, "function": name, "args": [...], "kwargs": {...}, "seed": int | null}
    replies <- {"id": n, "ok": value}                    or {"id": n, "error": "..."}
Values are JSON data only (no NaN or infinity); dicts keep non-string keys (runtime/arena_wire.py).
The evaluator enforces the time and size limit of every reply and checks every value; nothing the submission writes anywhere else (its stdout,
its stderr, other files, other processes of its sandbox) reaches the evaluator or the score.
"""

import ctypes
import hashlib
import hmac
import importlib.util
import json
import os
import random
import subprocess
import sys
import traceback

# -I leaves this folder off sys.path: the pipes' codec is imported from it before anything submitted.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import arena_wire  # noqa: E402

del sys.path[0]

# A second wall only: the sandbox is the first (it holds nothing secret). Python-level process
# starts and reads of /proc are refused; raw syscalls or _posixsubprocess get around this hook,
# which is why it is not relied upon.
BLOCKED_EVENTS = {
    "subprocess.Popen",
    "os.system",
    "os.exec",
    "os.posix_spawn",
    "os.spawn",
    "os.fork",
    "os.forkpty",
    "ctypes.dlopen",
    "sys.addaudithook",
}
FORBIDDEN = ("/proc",)


def hook(event, args):
    if event in BLOCKED_EVENTS:
        raise PermissionError(f"{event} is not allowed during evaluation")
    if event in ("open", "os.listdir", "os.scandir", "os.chdir") and args:
        if isinstance(args[0], (str, bytes, os.PathLike)):
            target = os.path.realpath(os.fsdecode(args[0]))
            if any(target == p or target.startswith(p + os.sep) for p in FORBIDDEN):
                raise PermissionError(f"{target} is off limits during evaluation")


def describe(exc):
    return f"{type(exc).__name__}: {exc}"[:2000]


def main():
    calls_path, replies_path, module_path, names = sys.argv[1:5]
    functions = [name for name in names.split(",") if name]
    # Blocks until the evaluator opens the other end; then the replies pipe (the evaluator
    # already holds it open for reading, so this does not block).
    calls = open(calls_path, "rb")
    replies = open(replies_path, "wb", buffering=0)

    def send(message):
        try:
            line = arena_wire.dumps(message, allow_nan=False)
        except (TypeError, ValueError) as exc:
            line = json.dumps({"id": message.get("id"), "error": f"the reply is not JSON data: {describe(exc)}"})
        replies.write(line.encode() + b"\n")

    sys.dont_write_bytecode = True  # the workspace holds the submitted files, nothing of ours
    module_path = os.path.abspath(module_path)
    sys.path.insert(0, os.path.dirname(module_path))
    name = os.path.splitext(os.path.basename(module_path))[0]
    sys.addaudithook(hook)
    try:
        spec = importlib.util.spec_from_file_location(name, module_path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        table = {function: getattr(module, function) for function in functions}
    except BaseException as exc:
        traceback.print_exc()
        send({"error": f"cannot load {', '.join(functions)} from {os.path.basename(module_path)}: {describe(exc)}"})
        return
    send({"ready": True, "functions": functions})
    for line in calls:
        request = arena_wire.loads(line)
        reply = {"id": request.get("id")}
        function = table.get(request.get("function"))
        if function is None:
            reply["error"] = f"no function {request.get('function')!r}"
        else:
            if request.get("seed") is not None:
                random.seed(request["seed"])  # the evaluator seeds random strategies: reproducible scores
            try:
                reply["ok"] = function(*request.get("args", []), **request.get("kwargs", {}))
            except BaseException as exc:
                traceback.print_exc()
                reply["error"] = f"{request.get('function')} raised {describe(exc)}"
        send(reply)


# -- The relay: the CPU time each call cost, measured outside the submission's process ---------
#
# With a key file (CPU_KEY_FILE, written by the worker before anything submitted runs here),
# this process does not load the submission: it is a relay. It reads the key and deletes the
# file, makes itself undumpable (no ptrace, no /proc/<pid>/mem or environ for the submission,
# which runs as the same user), then runs the submission as its child, which reads the calls
# pipe itself and replies over a pipe of the relay's. After each line the child sends it
# forwards that line and one of its own:
#     {"cpu_ns": n, "mac": HMAC(key, index, sha256(line), n)}
# n being the CPU time the whole sandbox used since the previous line (its cgroup's counter on
# Docker, where the sandbox has its own; else the child's threads): work done between calls is
# charged to the next one. The evaluator (arena.py) holds the same key and refuses a line whose
# MAC is wrong, so a child that opens the named pipes itself cannot vouch for its own time.
CPU_KEY_FILE = ".referee/cpu-key"
CGROUP_COUNTERS = (
    ("/sys/fs/cgroup/cpu.stat", "usage_usec", 1000),  # cgroup v2, the sandbox's own namespace
    ("/sys/fs/cgroup/cpuacct/cpuacct.usage", None, 1),  # cgroup v1 (Docker mounts the container's)
    ("/sys/fs/cgroup/cpu,cpuacct/cpuacct.usage", None, 1),
)


def cgroup_reader():
    if os.environ.get("REFEREE_CPU_SOURCE") != "cgroup":
        return None
    for path, field, scale in CGROUP_COUNTERS:
        try:
            fd = os.open(path, os.O_RDONLY)
            text = os.pread(fd, 1 << 16, 0).decode()
        except OSError:
            continue

        def read(path=path, field=field, scale=scale, fd=fd):
            # Read once a reply: the file stays open and is read again from its start.
            text = os.pread(fd, 1 << 16, 0).decode()
            if field is None:
                return int(text.strip()) * scale
            for line in text.splitlines():
                name, _, value = line.partition(" ")
                if name == field:
                    return int(value) * scale
            raise OSError(f"no {field} in {path}")

        if text:
            return read
    return None


def threads_reader(pid):
    """Without a cgroup of its own: the child's live threads to the nanosecond (schedstat), and its
    whole CPU time, exited threads included, to the kernel's tick (stat); the larger, never less
    than before (an exited thread leaves the live sum)."""
    tick = 1e9 / os.sysconf("SC_CLK_TCK")
    seen = [0]

    def read():
        live = 0
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            return seen[0]
        for task in tasks:
            try:
                with open(f"/proc/{pid}/task/{task}/schedstat") as fh:
                    live += int(fh.read().split()[0])
            except (OSError, ValueError, IndexError):
                continue
        try:
            with open(f"/proc/{pid}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            whole = int((int(fields[11]) + int(fields[12])) * tick)  # utime, stime
        except (OSError, ValueError, IndexError):
            whole = 0
        seen[0] = max(seen[0], live, whole)
        return seen[0]

    return read


def undumpable():
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(4, 0, 0, 0, 0) != 0:  # PR_SET_DUMPABLE, 0
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0) failed")


def mac(key, index, line, cpu_ns):
    message = f"{index}:{hashlib.sha256(line).hexdigest()}:{cpu_ns}".encode()
    return hmac.digest(key, message, "sha256").hex()


def relay(key):
    calls_path, replies_path, module_path, names = sys.argv[1:5]
    undumpable()
    # The calls go straight to the child (the relay has nothing to add to them: one hop less a
    # call); only its replies pass through here, to be signed with the CPU time behind them.
    calls = os.open(calls_path, os.O_RDONLY)
    replies = open(replies_path, "wb", buffering=0)
    from_child_r, from_child_w = os.pipe()
    child = subprocess.Popen(
        [sys.executable, "-I", os.path.abspath(__file__), f"/dev/fd/{calls}", f"/dev/fd/{from_child_w}",
         module_path, names],
        pass_fds=(calls, from_child_w),
        env={name: value for name, value in os.environ.items() if not name.startswith("REFEREE_")},
    )  # fmt: skip
    os.close(calls)
    os.close(from_child_w)
    counter = cgroup_reader() or threads_reader(child.pid)
    from_child = os.fdopen(from_child_r, "rb")
    last = counter()
    index = 0
    for line in from_child:
        now = counter()
        spent, last = max(0, now - last), now
        index += 1
        line = line.rstrip(b"\n") + b"\n"
        # One write for both lines: one wake-up of the evaluator a reply.
        signed = json.dumps({"cpu_ns": spent, "mac": mac(key, index, line, spent)}).encode()
        replies.write(line + signed + b"\n")
    child.wait()


if __name__ == "__main__":
    try:
        with open(CPU_KEY_FILE, "rb") as fh:
            KEY = fh.read().strip()
        os.unlink(CPU_KEY_FILE)
    except FileNotFoundError:
        KEY = b""
    if KEY:
        relay(KEY)
    else:
        main()
