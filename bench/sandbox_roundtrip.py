"""Sandbox round trip: persistent shell vs a fresh `docker exec` vs a fresh `docker run`.

    python bench/sandbox_roundtrip.py [--runs 200] [--exec-runs 50] [--docker-runs 5]

Prints medians (ms) and ratios measured side by side in one run, plus sandbox start times
(container + shell server) on Docker, Podman and bubblewrap. Target: shell <= 1/3 of docker exec.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from sandbox import SandboxSpec, backend_info, open_session  # noqa: E402
from sandbox import docker as sandbox_docker  # noqa: E402
from sandbox.image import build_image  # noqa: E402


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def timed(action: Callable[[], object], runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        samples.append(time.perf_counter() - started)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200, help="persistent-shell round trips")
    parser.add_argument("--exec-runs", type=int, default=50, help="fresh docker exec runs")
    parser.add_argument("--docker-runs", type=int, default=5, help="container starts and docker runs")
    args = parser.parse_args()

    if not sandbox_docker.engine_available()[0]:
        sys.exit("no Docker engine reachable: " + sandbox_docker.engine_available()[1])
    image = build_image(log=lambda line: None)
    print(f"image {image}; {args.runs} shell round trips, {args.exec_runs} execs, {args.docker_runs} runs")

    starts = []
    for _ in range(args.docker_runs):
        started = time.perf_counter()
        session = open_session(SandboxSpec(), backend="docker")
        starts.append(time.perf_counter() - started)
        session.close()

    with open_session(SandboxSpec(), backend="docker") as session:
        session.run("true")  # warm up
        shell = timed(lambda: session.run("true"), args.runs)
        container_id = session.container.id
        fresh_exec = [sandbox_docker.plain_exec(container_id, ["true"]) for _ in range(args.exec_runs)]
    fresh_run = [sandbox_docker.plain_run(image, ["true"]) for _ in range(args.docker_runs)]

    rows = [
        ("docker sandbox start (container + shell server)", starts),
        ("persistent shell round trip (`true`)", shell),
        ("fresh docker exec (`true`)", fresh_exec),
        ("fresh docker run --rm (`true`)", fresh_run),
    ]
    if backend_info("podman")["available"]:
        podman_starts = []
        for _ in range(args.docker_runs):
            started = time.perf_counter()
            session = open_session(SandboxSpec(), backend="podman")  # the first loads the image, once
            podman_starts.append(time.perf_counter() - started)
            session.close()
        with open_session(SandboxSpec(), backend="podman") as session:
            session.run("true")
            rows.append(("podman sandbox start", podman_starts[1:] or podman_starts))
            rows.append(("podman persistent shell round trip", timed(lambda: session.run("true"), args.runs)))
    if backend_info("bwrap")["available"]:
        bwrap_starts = []
        for _ in range(args.docker_runs):
            started = time.perf_counter()
            session = open_session(SandboxSpec(), backend="bwrap")
            bwrap_starts.append(time.perf_counter() - started)
            session.close()
        with open_session(SandboxSpec(), backend="bwrap") as session:
            session.run("true")
            rows.append(("bwrap sandbox start", bwrap_starts))
            rows.append(("bwrap persistent shell round trip", timed(lambda: session.run("true"), args.runs)))

    width = max(len(name) for name, _ in rows)
    print(f"{'':{width}}  median ms      p90 ms")
    for name, samples in rows:
        p90 = sorted(samples)[int(0.9 * (len(samples) - 1))] * 1000
        print(f"{name:{width}}  {median_ms(samples):9.2f}  {p90:10.2f}")
    ratio_exec = median_ms(shell) / median_ms(fresh_exec)
    ratio_run = median_ms(shell) / median_ms(fresh_run)
    print(f"shell / docker exec = {ratio_exec:.3f} (target <= 0.333: {'met' if ratio_exec <= 1 / 3 else 'MISSED'})")
    print(f"shell / docker run  = {ratio_run:.4f}")
    print(f"docker exec is {1 / ratio_exec:.1f}x and docker run {1 / ratio_run:.0f}x the persistent shell")


if __name__ == "__main__":
    main()
