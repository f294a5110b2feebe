"""What a task needs of the host beyond the sandbox's defaults: GPUs, and Python packages.

A Referee task folder says it in `sandbox.gpus` (task.yaml). MLGym's task files do not: MLGym ran
its vision, language and two of its RL tasks on GPUs (its paper and agent configs), so those ids
need one here unless their config says otherwise. MountainCarContinuous (both variants) is small
enough for a CPU and runs on any worker.
"""

from __future__ import annotations

import re

from benchmark.models import Task

# `jax[cuda12]` on a CPU task: the CUDA wheels (gigabytes) would serve nothing; plain jax runs on the CPU.
CUDA_EXTRA = re.compile(r"\[([^\]]*)\]")

MLGYM_GPU_TASKS = frozenset(
    {
        "imageCaptioningCOCO",
        "imageClassificationCifar10",
        "imageClassificationCifar10L1",
        "imageClassificationFMnist",
        "languageModelingFineWeb",
        "bertMNLI",
        "rlBreakoutMinAtar",
        "rlMetaMazeMisc",
    }
)


def task_gpus(task: Task) -> int:
    """How many GPUs one run of the task takes (0: a CPU task)."""
    sandbox = (task.config or {}).get("sandbox") or {}
    if "gpus" in sandbox:
        return int(sandbox["gpus"])
    if task.source == "mlgym" and task.slug in MLGYM_GPU_TASKS:
        return 1
    return 0


def _without_cuda_extras(line: str) -> str:
    def keep(match: re.Match[str]) -> str:
        extras = [extra.strip() for extra in match.group(1).split(",") if "cuda" not in extra.lower()]
        return f"[{','.join(extras)}]" if extras else ""

    return CUDA_EXTRA.sub(keep, line, count=1)


def task_requirements(task: Task) -> list[str]:
    """The pip requirement lines the task's image variant adds to the sandbox image (sandbox.variants);
    a CPU task's CUDA extras are dropped."""
    lines = [str(line) for line in (task.config or {}).get("requirements", [])]
    return lines if task_gpus(task) else [_without_cuda_extras(line) for line in lines]
