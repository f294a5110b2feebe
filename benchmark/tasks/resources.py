"""What a task needs of the host beyond the sandbox's defaults: GPUs.

A Referee task folder says it in `sandbox.gpus` (task.yaml). MLGym's task files do not: MLGym ran
its vision, language and two of its RL tasks on GPUs (its paper and agent configs), so those ids
need one here unless their config says otherwise. MountainCarContinuous (both variants) is small
enough for a CPU and runs on any worker.
"""

from __future__ import annotations

from benchmark.models import Task

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
