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

import importlib.util
import json
import os
import random
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


if __name__ == "__main__":
    main()
