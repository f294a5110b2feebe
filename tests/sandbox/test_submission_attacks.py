"""Submitted code attacks its evaluation: one test per way around the walls, on Docker and bwrap.

The evaluator below calls the submission's ``play(n)`` 20 times and emits the sum of the moves:
an honest submission that always plays 1 scores exactly 20. Every attack plays 1 too and tries
to make the score anything else (999 is what they forge). Each must end with the true score or
an evaluation error, and never with a forged value. Attacks that need to get past the driver's
audit hook first start a fresh interpreter with ``_posixsubprocess.fork_exec`` (no audit event),
so what is tested is the sandbox wall, not the hook.
"""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

import pytest

from sandbox import SandboxSpec
from sandbox.evaluation import EvaluationResult, Submission, evaluate
from tests.attack_snippets import fork_exec

SECRET = "hidden-label-7f3a9c"
FORGED = 999.0
HONEST = 20.0

EVALUATOR = """
from arena import Player, SubmissionError, emit, fail

try:
    player = Player("play")
    total = 0
    for n in range(20):
        move = player(n, seed=n)
        if isinstance(move, bool) or move not in (0, 1):
            fail(f"play returned {move!r}; it must return 0 or 1")
        total += move
except SubmissionError as exc:
    fail(str(exc))
emit({"total": total})
"""

# Shared by the attacks: start programs without an audit event, and forge metrics everywhere.
PRELUDE = (
    r"""
import os, sys, json, time
FORGED = b'{"total": 999}\n'
"""
    + fork_exec("spawn")
    + r'''
def unhooked(code, wait=True):
    """Python without the driver's audit hook: ctypes, fork and open work there."""
    return spawn([sys.executable, "-c", code], wait)
'''
)


@pytest.fixture
def evaluator_dir(public_dir: Path) -> Path:
    path = public_dir / "evaluator"
    path.mkdir()
    (path / "evaluate.py").write_text(EVALUATOR)
    (path / "labels.csv").write_text(f"id,label\n1,{SECRET}\n")
    for file in path.iterdir():
        file.chmod(0o666)  # world-writable on the host: only the read-only mount protects them
    path.chmod(0o777)
    return path


def score(backend: str, evaluator_dir: Path, source: str, **limits: object) -> EvaluationResult:
    spec = limits.pop("spec", None)
    submission = Submission(
        files={"player.py": (PRELUDE + source).encode()},
        module="player.py",
        functions=["play"],
        call_timeout=float(limits.pop("call_timeout", 5.0)),
        load_timeout=float(limits.pop("load_timeout", 30.0)),
        spec=spec,  # type: ignore[arg-type]
        cpu_charge=bool(limits.pop("cpu_charge", True)),
    )
    return evaluate(
        evaluator_dir=evaluator_dir,
        artifacts={},
        command="python3 $EVALUATOR_DIR/evaluate.py",
        timeout=float(limits.pop("timeout", 90)),
        spec=SandboxSpec(memory_mb=512, disk_mb=64),
        backend=backend,
        submission=submission,
    )


# Submissions run behind the relay that signs their CPU time (for evaluators that charge it) or,
# for evaluators that never read it (MLGym's games), without it: the walls hold either way.
RELAY_OR_NOT = pytest.mark.parametrize("cpu_charge", [True, False], ids=["relay", "no-relay"])


def assert_not_forged(result: EvaluationResult) -> None:
    """The true score, or an evaluation error; never the forged value; the evaluator untouched."""
    assert result.ok or result.metrics is None, result
    if result.ok:
        assert result.metrics == {"total": HONEST}, result.output
    assert SECRET not in result.output


@RELAY_OR_NOT
def test_it_scores_an_honest_submission(backend, evaluator_dir, cpu_charge) -> None:
    result = score(backend, evaluator_dir, "def play(n):\n    return 1\n", cpu_charge=cpu_charge)
    assert result.ok, result.error + result.output
    assert result.metrics == {"total": HONEST}


@RELAY_OR_NOT
def test_it_measures_the_submissions_cpu_time_only_behind_the_relay(backend, evaluator_dir, cpu_charge) -> None:
    (evaluator_dir / "evaluate.py").write_text(
        "from arena import Player, emit\n"
        "player = Player('play')\n"
        "total = sum(player(n) for n in range(20))\n"
        "emit({'total': total, 'measured': float(player.cpu_seconds is not None)})\n"
    )
    result = score(backend, evaluator_dir, "def play(n):\n    return 1\n", cpu_charge=cpu_charge)
    assert result.ok, result.error + result.output
    assert result.metrics == {"total": HONEST, "measured": 1.0 if cpu_charge else 0.0}


@RELAY_OR_NOT
def test_it_gives_the_submission_a_sandbox_holding_only_its_own_files(backend, evaluator_dir, cpu_charge) -> None:
    source = r"""
def look():
    seen = {"workspace": sorted(p for p in os.listdir("/workspace") if p != ".referee")}
    seen["dirs"] = {d: os.path.exists(d) for d in ("/evaluator", "/referee-calls", "/referee")}
    hits = []
    for top in ("/",):
        for root, dirs, files in os.walk(top):
            dirs[:] = [d for d in dirs if os.path.join(root, d) not in ("/proc", "/sys", "/dev", "/usr", "/opt/venv")]
            for name in files:
                path = os.path.join(root, name)
                if not os.path.isfile(path) or os.path.islink(path):  # never open the pipes
                    continue
                try:
                    with open(path, "rb") as fh:
                        if b"hidden" + b"-label" in fh.read(1 << 20):
                            hits.append(os.path.join(root, name))
                except OSError:
                    pass
    seen["hits"] = hits
    return seen
SEEN = look()
print("SEEN", json.dumps(SEEN))
def play(n):
    return 1
"""
    result = score(backend, evaluator_dir, source, cpu_charge=cpu_charge)
    assert result.ok, result.error + result.output
    line = next(line for line in result.output.splitlines() if line.startswith("SEEN "))
    import json

    seen = json.loads(line[5:])
    assert seen["workspace"] == ["player.py"]
    assert seen["dirs"] == {"/evaluator": False, "/referee-calls": True, "/referee": True}
    assert seen["hits"] == []


def test_it_keeps_dir_fd_opens_from_reaching_the_evaluator(backend, evaluator_dir) -> None:
    source = r"""
root = os.open("/", os.O_RDONLY | os.O_DIRECTORY)
for relative in ("evaluator/labels.csv", "evaluator/evaluate.py"):
    for flags in (os.O_RDONLY, os.O_WRONLY | os.O_TRUNC):
        try:
            fd = os.open(relative, flags, dir_fd=root)
            print("OPENED", relative, os.read(fd, 100) if flags == os.O_RDONLY else os.write(fd, FORGED))
        except OSError as exc:
            print("refused", relative, type(exc).__name__)
def play(n):
    return 1
"""
    result = score(backend, evaluator_dir, source)
    assert result.ok and result.metrics == {"total": HONEST}, result.error + result.output
    assert "OPENED" not in result.output and result.output.count("refused") == 4
    assert (evaluator_dir / "labels.csv").read_text() == f"id,label\n1,{SECRET}\n"


@RELAY_OR_NOT
def test_it_ignores_forged_metrics_written_to_every_process_fd_in_reach(backend, evaluator_dir, cpu_charge) -> None:
    # The old attack: open /proc/<ppid>/fd/1 and write a metrics line plus a byte without newline.
    forge = r"""
import os
wrote = 0
for pid in (p for p in os.listdir("/proc") if p.isdigit()):
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        continue
    for fd in fds:
        try:
            handle = os.open(f"/proc/{pid}/fd/{fd}", os.O_WRONLY | os.O_NONBLOCK)
            os.write(handle, b'{"total": 999}\nx')
            os.close(handle)
            wrote += 1
        except OSError:
            pass
print("wrote to", wrote, "fds", flush=True)
"""
    source = f"unhooked({forge!r})\ndef play(n):\n    return 1\n"
    result = score(backend, evaluator_dir, source, cpu_charge=cpu_charge)
    assert_not_forged(result)
    assert "wrote to" in result.output  # the attack ran
    # Its line reached the evaluator only on its own reply pipe, before ready, and was refused there.
    assert not result.ok and "the submission's driver sent {'total': 999} instead of ready" in result.output


@RELAY_OR_NOT
def test_it_ignores_forged_lines_on_every_inherited_fd_and_the_metrics_path(backend, evaluator_dir, cpu_charge) -> None:
    source = r"""
def play(n):
    if n == 0:
        for fd in range(0, 1024):
            try:
                os.write(fd, FORGED)
            except OSError:
                pass
        for path in ("/workspace/.referee/metrics.json", "/tmp/metrics.json", "/referee-calls/metrics.json"):
            try:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "wb") as fh:
                    fh.write(FORGED)
            except OSError:
                pass
    return 1
"""
    result = score(backend, evaluator_dir, source, cpu_charge=cpu_charge)
    assert_not_forged(result)
    # The forged line reached the evaluator only as a reply, and was refused as one.
    assert not result.ok and "out of turn" in (result.error or "") + result.output


@RELAY_OR_NOT
def test_it_gives_starting_programs_with_fork_exec_nothing_to_reach(backend, evaluator_dir, cpu_charge) -> None:
    source = r"""
spawn(["/bin/sh", "-c", "echo FORK-EXEC-RAN; cat /evaluator/labels.csv; ls /evaluator; "
       "echo '{\"total\": 999}'; echo '{\"total\": 999}' > /referee-calls/replies.forged"])
def play(n):
    return 1
"""
    result = score(backend, evaluator_dir, source, cpu_charge=cpu_charge)
    assert result.ok and result.metrics == {"total": HONEST}, result.error + result.output
    assert "FORK-EXEC-RAN" in result.output  # the hook did not stop it: the sandbox did


def test_it_keeps_raw_syscalls_ptrace_and_signals_inside_the_submissions_sandbox(backend, evaluator_dir) -> None:
    attack = r"""
import ctypes, os, signal
libc = ctypes.CDLL(None, use_errno=True)
me, driver = os.getpid(), os.getppid()
relay = int(open(f"/proc/{driver}/stat").read().rsplit(")", 1)[1].split()[1])  # the driver's parent
relay_traced = libc.ptrace(16, relay, 0, 0) == 0
traced, signalled, seen = [], [], []
for name in os.listdir("/proc"):
    if not name.isdigit():
        continue
    pid = int(name)
    try:
        seen.append(open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode()[:80])
    except OSError:
        pass
    if pid in (me, driver, relay):  # killing the driver or its relay fails the evaluation, no more
        continue
    if libc.ptrace(16, pid, 0, 0) == 0:  # PTRACE_ATTACH
        traced.append(pid)
        libc.ptrace(17, pid, 0, 0)  # PTRACE_DETACH
    if libc.kill(pid, signal.SIGKILL) == 0:  # a raw syscall, not os.kill
        signalled.append(pid)
print("SEEN", seen, "TRACED", traced, "SIGNALLED", signalled, flush=True)
print("RELAY TRACED", relay_traced, flush=True)
"""
    source = f"unhooked({attack!r})\ndef play(n):\n    return 1\n"
    result = score(backend, evaluator_dir, source)
    assert result.ok and result.metrics == {"total": HONEST}, result.error + result.output
    seen = next(line for line in result.output.splitlines() if line.startswith("SEEN"))
    assert "evaluate.py" not in seen  # the evaluator is not even visible from here
    # The relay that vouches for the CPU time is undumpable: the submission cannot trace it for its key.
    assert "RELAY TRACED False" in result.output, result.output


def test_it_survives_a_submission_that_kills_everything_it_can_signal(backend, evaluator_dir) -> None:
    source = "import signal\nunhooked('import os, signal; os.kill(-1, signal.SIGKILL)')\ndef play(n):\n    return 1\n"
    result = score(backend, evaluator_dir, source)
    assert_not_forged(result)
    # kill(-1) took the driver with it; the evaluator lived to say so.
    assert not result.ok and "the submission's process exited" in result.output


def test_it_survives_a_submission_that_prints_a_gigabyte(backend, evaluator_dir) -> None:
    source = r"""
def play(n):
    if n == 3:
        chunk = b"y" * (1 << 20)
        for _ in range(1024):
            os.write(1, chunk)
    return 1
"""
    result = score(backend, evaluator_dir, source, call_timeout=20)
    assert_not_forged(result)
    assert len(result.output) < 20_000  # only a capped tail of the submission's output comes back
    # Its output filled its own sandbox's disk (64 MB here), which stopped it there.
    assert not result.ok and "play raised OSError: [Errno 28] No space left on device" in result.output


@pytest.mark.parametrize(
    "move",
    ["float('nan')", "float('inf')", "10 ** 400", "1e308", "'1'", "RAW_NAN"],
)
def test_it_refuses_non_finite_huge_and_mistyped_moves(backend, evaluator_dir, move: str) -> None:
    if move == "RAW_NAN":  # straight onto the replies pipe, past the driver's JSON encoder
        body = (
            "    import fcntl, stat\n"
            "    for fd in range(3, 256):\n"
            "        try:\n"
            "            if stat.S_ISFIFO(os.fstat(fd).st_mode) and fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY:\n"
            '                os.write(fd, (\'{"id": %d, "ok": NaN}\\n\' % (n + 1)).encode())\n'
            "        except OSError:\n"
            "            pass\n"
            "    return 1\n"
        )
    else:
        body = f"    return {move}\n"
    result = score(backend, evaluator_dir, "def play(n):\n" + body)
    assert not result.ok and result.metrics is None, result
    assert_not_forged(result)
    reason = {
        "float('nan')": "the reply is not JSON data: ValueError: Out of range float values are not JSON compliant",
        "float('inf')": "the reply is not JSON data: ValueError: Out of range float values are not JSON compliant",
        "10 ** 400": "play returned 1000000",
        "1e308": "play returned 1e+308; it must return 0 or 1",
        "'1'": "play returned '1'; it must return 0 or 1",
        "RAW_NAN": "the submission's reply is not JSON data: NaN is not a number JSON allows",
    }[move]
    assert result.output.startswith(f"evaluation failed: {reason}"), result.output[:500]


def test_it_fails_a_submission_that_sleeps_forever_in_a_call_or_at_load(backend, evaluator_dir) -> None:
    in_call = score(backend, evaluator_dir, "def play(n):\n    time.sleep(10 ** 6)\n", call_timeout=1)
    at_load = score(backend, evaluator_dir, "time.sleep(10 ** 6)\ndef play(n):\n    return 1\n", load_timeout=3)
    assert not in_call.ok and "within 1 s" in in_call.output
    assert not at_load.ok and "did not answer (loading)" in at_load.output
    assert in_call.duration < 60 and at_load.duration < 60


def test_it_leaves_nothing_running_after_a_submission_that_forks_and_exits(backend, evaluator_dir) -> None:
    marker = f"orphan-{uuid.uuid4().hex[:10]}"
    # Both processes carry this test's mark on their command lines (a comment; a sleep of a length no
    # other process asks for), so only this test's leftovers count: other sandboxes on a shared host
    # run the same relay paths.
    naps = f"1000.{uuid.uuid4().int % 10**9:09d}"
    orphan = (
        f"import os, time  # {marker}\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    while True:\n"
        "        try:\n"
        "            fd = os.open('/referee-calls/replies', os.O_WRONLY | os.O_NONBLOCK)\n"
        "            os.write(fd, b'{\"total\": 999}\\n')\n"
        "            os.close(fd)\n"
        "        except OSError:\n"
        "            pass\n"
        "        time.sleep(0.05)\n"
    )
    source = f"unhooked({orphan!r}, wait=True)\nspawn(['/bin/sleep', {naps!r}], wait=False)\n"
    source += f"MARK = {marker!r}\ndef play(n):\n    return 1\n"
    spec = SandboxSpec(memory_mb=512, disk_mb=64, labels={"test.marker": marker})
    result = score(backend, evaluator_dir, source, spec=spec)
    assert_not_forged(result)
    # The orphan's forged lines reached the evaluator only as replies: refused as such.
    first = result.output.splitlines()[0]
    assert not result.ok and (
        first == "evaluation failed: the submission's driver sent {'total': 999} instead of ready"
        or first.startswith("evaluation failed: the submission answered out of turn")
        or first.startswith("evaluation failed: a line on the pipes did not come from Referee's relay")
    ), result.output[:500]
    if backend in ("docker", "podman"):
        from importlib import import_module

        sandbox_containers = import_module(f"sandbox.{backend}").sandbox_containers
        assert [c for c in sandbox_containers() if c["labels"].get("test.marker") == marker] == []
    # No process of the submission's sandbox is left on the host (a dying namespace takes a moment).
    for _ in range(40):
        leftovers = []
        for pid in (p for p in os.listdir("/proc") if p.isdigit()):
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmdline or cmdline == f"/bin/sleep\x00{naps}\x00".encode():
                leftovers.append(cmdline)
        if not leftovers:
            break
        time.sleep(0.05)
    assert leftovers == []


def test_it_keeps_the_shared_pipe_directory_read_only(backend, evaluator_dir) -> None:
    source = r'''
for action in ("touch", "rm", "mkfifo"):
    unhooked(f"""
import os
try:
    if {action!r} == "touch": open("/referee-calls/new", "w")
    elif {action!r} == "rm": os.unlink("/referee-calls/replies")
    else: os.mkfifo("/referee-calls/replies2")
    print("DID", {action!r}, flush=True)
except OSError as exc:
    print("refused", {action!r}, exc.strerror, flush=True)
""")
def play(n):
    return 1
'''
    result = score(backend, evaluator_dir, source)
    assert result.ok and result.metrics == {"total": HONEST}, result.error + result.output
    assert "DID" not in result.output and result.output.count("refused") == 3
