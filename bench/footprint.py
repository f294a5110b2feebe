"""Footprint of `make up`: resident memory of each process at idle and after a run, start times.

    python bench/footprint.py [--old REF] [--no-old] [--idle 10] [--rounds 5] [--process-only]

Starts `scripts/up.py` of this checkout, then of the old process layout (REF, default: the commit
before `make up` ran one housekeeping process instead of three reapers, checked out in a temporary
clone), each with its own var dir and ports, the bwrap sandbox backend (no image build) and no
released data to import. For each it prints every process's RSS and PSS (PSS shares the pages that
forked or mapped processes have in common fairly, so it adds up), at idle and after one baseline
agent run, and the start time of `manage.py help` and of an RQ worker (from its spawn to "Listening on
<queue>", which RQ logs once registered), medians of --rounds with the layouts taking turns.
Goals (issue 20): <= 800 MB in all at idle, a command starting in <= 1 s. Both layouts are
measured in this one run on this machine. To compare with the process layout and imports as they
were before issue 20's lazy imports, pass `--old <commit before them>`.

First, one Django process on its own (no platform needed): RSS after `django.setup()` and the
system checks (which import the URL conf, as every command's start does), and the start time of
`manage.py help` and `manage.py check`, lazy (this checkout) beside eager (this checkout with the
packages a process used to pull in imported first: the LLM SDKs and Twisted at setup, scipy.stats
with the checks), medians of --rounds, taking turns. `--process-only` stops after that.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

BASE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE))

from config.redis_server import free_port, start_redis  # noqa: E402
from tests.ops.platform import Platform  # noqa: E402

GOAL_IDLE_MB = 800
GOAL_START_S = 1.0

RUN_ONE = """
import time
from accounts.roles import RESEARCHER
from accounts.services import user_create
from benchmark.models import AgentConfig, Task
from benchmark.runs.services import run_launch
owner = user_create(username="bench", email="bench@example.org", role=RESEARCHER, password="pw-bench-12345")
agent = AgentConfig.objects.create(name="baseline", kind=AgentConfig.Kind.BASELINE)
task = Task.objects.get(slug="prisoners_dilemma", is_current=True)
(run,) = run_launch(owner=owner, tasks=[task], agent=agent)
deadline = time.time() + 600
while run.status in ("queued", "running") and time.time() < deadline:
    time.sleep(0.5)
    run.refresh_from_db()
print("RUN", run.status, run.exit_status, run.step_count)
"""


@dataclass
class Proc:
    pid: int
    name: str
    rss_mb: float
    pss_mb: float


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == pid:
            found.append(int(entry.name))
    return found


def process_tree(root: int) -> list[int]:
    tree, todo = [], [root]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo.extend(_children(pid))
    return tree


def _kb(text: str, field: str) -> float:
    match = re.search(rf"^{field}:\s+(\d+) kB", text, re.MULTILINE)
    return int(match.group(1)) / 1024 if match else 0.0


def name_of(cmdline: list[str]) -> str:
    joined = " ".join(cmdline)
    if "scripts/up.py" in joined:
        return "supervisor (up.py)"
    if "redis-server" in joined:
        return "redis-server"
    if "gunicorn" in joined:
        return "web (gunicorn)"
    if "daphne" in joined:
        return "daphne"
    for word in ("rqworker", "housekeeping", "reap_runs", "reap_judgments", "sandbox_reaper"):
        if word in cmdline:
            rest = cmdline[cmdline.index(word) + 1 :]
            return f"{word} {rest[0]}" if word == "rqworker" and rest else word
    return os.path.basename(cmdline[0]) if cmdline else "?"


def measure(root: int) -> list[Proc]:
    procs = []
    for pid in process_tree(root):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_text().split("\0")[:-1]
            rss = _kb(Path(f"/proc/{pid}/status").read_text(), "VmRSS")
            pss = _kb(Path(f"/proc/{pid}/smaps_rollup").read_text(), "Pss")
        except OSError:  # gone meanwhile (a work horse that finished)
            continue
        if not cmdline or rss == 0:
            continue  # a kernel-less zombie
        procs.append(Proc(pid=pid, name=name_of(cmdline), rss_mb=rss, pss_mb=pss))
    return procs


def summary(procs: list[Proc]) -> dict[str, tuple[int, float, float]]:
    groups: dict[str, list[Proc]] = defaultdict(list)
    for proc in procs:
        groups[proc.name].append(proc)
    return {
        name: (len(group), sum(p.rss_mb for p in group), sum(p.pss_mb for p in group))
        for name, group in sorted(groups.items())
    }


def timed(cmd: list[str], *, cwd: Path, env: dict[str, str], until: str | None = None) -> float:
    """Seconds from spawn to exit, or to the first output line containing `until`."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    for line in proc.stdout:
        if until and until in line:
            break
    elapsed = time.perf_counter() - started
    proc.communicate(timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited with {proc.returncode}")
    return elapsed


@dataclass
class Layout:
    label: str
    root: Path
    idle: list[Proc]
    after_run: list[Proc]
    run: str
    help_s: float = 0.0
    worker_s: float = 0.0


def measure_layout(label: str, root: Path, *, idle_s: float) -> Layout:
    var = Path(tempfile.mkdtemp(prefix="referee-footprint-"))
    # bwrap sandboxes of a root worker run as an unprivileged uid, and a run's folders live under var:
    # mkdtemp's 0700 made the baseline run fail ("not readable by uid ..."), as a 0700 var would anywhere.
    var.chmod(0o755)
    platform = Platform(var, root=root, SANDBOX_BACKEND="bwrap")
    redis_url = f"redis://127.0.0.1:{platform.env['REFEREE_REDIS_PORT']}/0"
    print(f"== {label}: starting scripts/up.py of {root} ...", flush=True)
    try:
        platform.start(timeout=600)
        assert platform.proc is not None
        time.sleep(idle_s)
        idle = measure(platform.proc.pid)
        result = platform.manage("shell", "--no-imports", "-c", RUN_ONE, REDIS_URL=redis_url)
        run = next((line for line in result.stdout.splitlines() if line.startswith("RUN ")), "")
        run = run.removeprefix("RUN ") or f"could not run: {result.stderr.strip()[-300:]}"
        time.sleep(3)
        after = measure(platform.proc.pid)
    finally:
        platform.stop()
        shutil.rmtree(var, ignore_errors=True)
    return Layout(label=label, root=root, idle=idle, after_run=after, run=run)


def measure_start_times(layouts: list[Layout], *, rounds: int) -> None:
    """`manage.py help` and a worker's start, the layouts taking turns so that the load of this
    machine weighs on each alike; a Redis of its own for the workers."""
    var = Path(tempfile.mkdtemp(prefix="referee-footprint-start-"))
    port = free_port()
    redis = start_redis(data_dir=var / "redis", port=port, persist=False)
    try:
        samples: dict[str, dict[str, list[float]]] = {layout.label: {"help": [], "worker": []} for layout in layouts}
        for _ in range(rounds):
            for layout in layouts:
                env = {
                    **os.environ,
                    "REFEREE_VAR_DIR": str(var / layout.label),
                    "DJANGO_SETTINGS_MODULE": "config.settings",
                }
                env["REDIS_URL"] = f"redis://127.0.0.1:{port}/0"
                manage = [sys.executable, str(layout.root / "manage.py")]
                samples[layout.label]["help"].append(timed([*manage, "help"], cwd=layout.root, env=env))
                # Ready = listening on its queue (RQ logs it once registered); its exit is not counted.
                worker = [*manage, "rqworker", "default", "--burst"]
                samples[layout.label]["worker"].append(timed(worker, cwd=layout.root, env=env, until="Listening on"))
        for layout in layouts:
            layout.help_s = statistics.median(samples[layout.label]["help"])
            layout.worker_s = statistics.median(samples[layout.label]["worker"])
    finally:
        redis.terminate()
        redis.wait()
        shutil.rmtree(var, ignore_errors=True)


# What a process imported before issue 20, imported first by the "eager" variant: django.setup()
# already loaded the SDKs (the admin -> benchmark.llm -> client -> providers) and Twisted (the
# "daphne" app); the system checks, through the URL conf and the agreement views, scipy.stats.
# `help` runs no checks.
EAGER_SETUP = ("anthropic", "openai", "daphne.server")
EAGER_CHECKS = (*EAGER_SETUP, "scipy.stats")
HEAVY = ("anthropic", "openai", "scipy", "pandas", "pingouin", "plotly", "numpy", "twisted")

PROCESS_PROBE = """
import importlib, json, sys
for name in sys.argv[1].split(",") if sys.argv[1] else ():
    importlib.import_module(name)
import django
django.setup()
from django.core.management import call_command
call_command("check", verbosity=0)
rss = [l for l in open("/proc/self/status") if l.startswith("VmRSS:")][0].split()[1]
heavy = sorted({m.split(".")[0] for m in sys.modules} & set(sys.argv[2].split(",")))
print(json.dumps({"rss_mb": int(rss) / 1024, "heavy": heavy}))
"""

# manage.py as it is, with the eager imports done first when asked (argv[1]: comma-separated modules).
MANAGE_EAGER = """
import importlib, runpy, sys
for name in sys.argv[1].split(",") if sys.argv[1] else ():
    importlib.import_module(name)
sys.argv = ["manage.py", *sys.argv[2:]]
runpy.run_path("manage.py", run_name="__main__")
"""


def measure_process(*, rounds: int) -> None:
    var = Path(tempfile.mkdtemp(prefix="referee-footprint-process-"))
    env = {**os.environ, "REFEREE_VAR_DIR": str(var), "DJANGO_SETTINGS_MODULE": "config.settings"}
    variants = {"lazy (this checkout)": False, "eager (as before issue 20)": True}
    rss: dict[str, list[float]] = defaultdict(list)
    heavy: dict[str, list[str]] = {}
    times: dict[tuple[str, str], list[float]] = defaultdict(list)
    cpu: dict[tuple[str, str], list[float]] = defaultdict(list)  # CPU seconds: what the machine's load does not inflate
    try:
        subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=BASE, env=env, check=True)
        for _ in range(rounds):
            for label, is_eager in variants.items():
                eager = {
                    command: ",".join(mods) if is_eager else ""
                    for command, mods in (("help", EAGER_SETUP), ("check", EAGER_CHECKS))
                }
                out = subprocess.run(
                    [sys.executable, "-c", PROCESS_PROBE, eager["check"], ",".join(HEAVY)],
                    cwd=BASE,
                    env=env,
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout
                probe = json.loads(out.strip().splitlines()[-1])
                rss[label].append(probe["rss_mb"])
                heavy[label] = probe["heavy"]
                for command in ("help", "check"):
                    cmd = [sys.executable, "-c", MANAGE_EAGER, eager[command], command]
                    before = resource.getrusage(resource.RUSAGE_CHILDREN)
                    times[(label, command)].append(timed(cmd, cwd=BASE, env=env))
                    after = resource.getrusage(resource.RUSAGE_CHILDREN)
                    cpu[(label, command)].append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    finally:
        shutil.rmtree(var, ignore_errors=True)
    print(f"\none Django process after setup + checks, medians of {rounds} (goal: command start <= {GOAL_START_S:g} s)")
    print("(wall seconds, and CPU seconds in brackets: a loaded machine stretches the first, not the second)")
    print(f"{'variant':<36}{'RSS MB':>8}{'help s (cpu)':>18}{'check s (cpu)':>18}  heavy packages loaded")
    for label in variants:
        row = f"{label:<36}{statistics.median(rss[label]):>8.0f}"
        for command in ("help", "check"):
            wall, used = statistics.median(times[(label, command)]), statistics.median(cpu[(label, command)])
            row += f"{f'{wall:.2f} ({used:.2f})':>18}"
        print(f"{row}  {', '.join(heavy[label]) or '-'}")


def old_ref() -> str:
    """The parent of the commit that replaced the three reaper processes by `housekeeping`."""
    removal = subprocess.run(
        ["git", "log", "-1", "--format=%H", "-G", '"reap_runs", "--loop"', "--", "scripts/up.py"],
        cwd=BASE,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    if not removal:
        sys.exit("cannot find the commit that introduced housekeeping; pass --old REF")
    return f"{removal}^"


def old_checkout(ref: str) -> tuple[Path, str]:
    parent = Path(tempfile.mkdtemp(prefix="referee-footprint-old-"))
    parent.chmod(0o755)  # bwrap sandboxes of a root worker run as an unprivileged uid: task folders must be readable
    where = parent / "referee"
    subprocess.run(["git", "clone", "--quiet", "--shared", "--no-checkout", str(BASE), str(where)], check=True)
    subprocess.run(["git", "-C", str(where), "checkout", "--quiet", ref], check=True)
    subject = subprocess.run(
        ["git", "-C", str(where), "log", "-1", "--format=%h %s"], capture_output=True, text=True, check=True
    ).stdout.strip()
    return where, subject


def report(layouts: list[Layout]) -> None:
    names = sorted({p.name for layout in layouts for p in layout.idle + layout.after_run})
    header = f"{'process':<26}" + "".join(
        f"{layout.label + ' idle':>24}{layout.label + ' after run':>24}" for layout in layouts
    )
    print("\nresident memory, MB: count x (RSS sum / PSS sum)")
    print(header)
    for name in names:
        row = f"{name:<26}"
        for layout in layouts:
            for procs in (layout.idle, layout.after_run):
                count, rss, pss = summary(procs).get(name, (0, 0.0, 0.0))
                row += f"{f'{count} x ({rss:.0f} / {pss:.0f})' if count else '-':>24}"
        print(row)
    row = f"{'total':<26}"
    for layout in layouts:
        for procs in (layout.idle, layout.after_run):
            rss, pss = sum(p.rss_mb for p in procs), sum(p.pss_mb for p in procs)
            row += f"{f'{len(procs)} x ({rss:.0f} / {pss:.0f})':>24}"
    print(row)
    print()
    for layout in layouts:
        idle_pss = sum(p.pss_mb for p in layout.idle)
        idle_rss = sum(p.rss_mb for p in layout.idle)
        print(
            f"{layout.label}: {len(layout.idle)} processes at idle, RSS {idle_rss:.0f} MB, PSS {idle_pss:.0f} MB "
            f"(goal <= {GOAL_IDLE_MB} MB: {'met' if idle_pss <= GOAL_IDLE_MB else 'not met'} by PSS, "
            f"{'met' if idle_rss <= GOAL_IDLE_MB else 'not met'} by RSS); "
            f"manage.py help {layout.help_s:.2f} s, worker start {layout.worker_s:.2f} s "
            f"(goal <= {GOAL_START_S:g} s: {'met' if max(layout.help_s, layout.worker_s) <= GOAL_START_S else 'not met'}); "
            f"baseline run: {layout.run}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", default=None, help="git ref of the old layout (default: before housekeeping)")
    parser.add_argument("--no-old", action="store_true", help="measure this checkout only")
    parser.add_argument("--idle", type=float, default=10.0, help="seconds to let the platform settle first")
    parser.add_argument("--rounds", type=int, default=5, help="start-time samples per command and layout")
    parser.add_argument("--process-only", action="store_true", help="only the one-process lazy vs eager comparison")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} CPU cores, load average {os.getloadavg()[0]:.1f} at start")
    measure_process(rounds=args.rounds)
    if args.process_only:
        return
    layouts = [measure_layout("new", BASE, idle_s=args.idle)]
    where = None
    try:
        if not args.no_old:
            ref = args.old or old_ref()
            where, subject = old_checkout(ref)
            print(f"old layout: {ref} = {subject}")
            layouts.append(measure_layout("old", where, idle_s=args.idle))
        print(f"== start times, {args.rounds} rounds, layouts taking turns ...", flush=True)
        measure_start_times(layouts, rounds=args.rounds)
    finally:
        if where is not None:
            shutil.rmtree(where.parent, ignore_errors=True)
    report(layouts)
    print(f"load average {os.getloadavg()[0]:.1f} at the end (other work on this machine slows start times)")


if __name__ == "__main__":
    main()
