"""Benchmark: CPU time of `manage.py invite_reviewer`, against Django's bare start-up.

Run: python bench/invite_command.py [--repeat R]

Each run is a fresh process on a throw-away SQLite database (migrated once, in a temporary
REFEREE_VAR_DIR), as an admin would type the command. Side by side in the same run:
- `shell -c pass`: Django's start-up alone, the floor any command pays;
- `check`: the system checks, which import every URL conf and view (scipy, the LLM SDKs). The
  command ran them before it opted out, and reversing the link in the project's URL conf
  imported the same views.
No mail server is configured, so the command sends nothing and prints the link once; the
run checks that it did.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(env: dict[str, str], *args: str) -> tuple[float, str]:
    """(CPU seconds of the child, its stdout). CPU, not wall time: on a shared machine the wall
    time mostly measures the other tenants; the child's own CPU time is what the command costs."""
    before = _cpu()
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    return _cpu() - before, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as var:
        env = {**os.environ, "REFEREE_VAR_DIR": var, "EMAIL_HOST": ""}
        env.pop("DATABASE_URL", None)
        _run(env, "migrate", "-v0")
        times: dict[str, list[float]] = {"invite_reviewer": [], "shell -c pass": [], "check": []}
        for n in range(args.repeat):
            took, out = _run(env, "invite_reviewer", f"bench{n}@example.org", "--expertise", "nlp,rl")
            links = [line for line in out.splitlines() if "/accounts/invite/" in line]
            if len(links) != 1:
                raise SystemExit(f"expected the link once, got {len(links)} times:\n{out}")
            times["invite_reviewer"].append(took)
            times["shell -c pass"].append(_run(env, "shell", "-c", "pass")[0])
            times["check"].append(_run(env, "check")[0])
    print(f"{args.repeat} runs each, median (min-max) CPU seconds (user + system) of the process:")
    for name, values in times.items():
        print(f"  {name:16} {statistics.median(values):6.2f}  ({min(values):.2f}-{max(values):.2f})")
    floor = statistics.median(times["shell -c pass"])
    print(f"invite_reviewer over Django start-up: {statistics.median(times['invite_reviewer']) - floor:+.2f} s")


if __name__ == "__main__":
    main()
