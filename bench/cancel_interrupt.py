"""How soon a cancelled run's command stops: Session.interrupt() -> the command's result.

    python bench/cancel_interrupt.py [--runs 20] [--backend docker]

A `sleep 300` is interrupted from another thread half a second after it starts; prints the
median and the maximum time from interrupt() to the result. A cancelled run adds at most
CANCEL_POLL_SECONDS (benchmark.runs.services.CancelWatch polls the run's status that often).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from benchmark.runs.services import CANCEL_POLL_SECONDS  # noqa: E402
from sandbox import SandboxSpec, open_session  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--backend", default="docker")
    args = parser.parse_args()
    session = open_session(SandboxSpec(disk_mb=64, memory_mb=512), backend=args.backend)
    samples = []
    try:
        for _ in range(args.runs):
            fired: list[float] = []

            def fire(fired: list[float] = fired) -> None:
                fired.append(time.perf_counter())
                session.interrupt()

            timer = threading.Timer(0.5, fire)
            timer.start()
            result = session.run("sleep 300", timeout=None)
            samples.append(time.perf_counter() - fired[0])
            timer.join()
            assert result.interrupted, result
    finally:
        session.close()
    print(f"backend {args.backend}, {args.runs} interrupts of `sleep 300`:")
    print(f"  interrupt -> result: median {1000 * statistics.median(samples):.1f} ms, max {1000 * max(samples):.1f} ms")
    print(f"  a cancelled run's command stops within that + the status poll ({CANCEL_POLL_SECONDS:g} s)")


if __name__ == "__main__":
    main()
