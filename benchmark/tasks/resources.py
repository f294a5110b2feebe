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
# Unpinned lines resolve to today's releases. MLGym's RL lists (jax, flax, tensorflow_probability...)
# then get jax 0.7+, whose removal of jax.interpreters.xla.pytype_aval_mappings breaks the newest
# tensorflow_probability (0.25) at import: MLGym's networks.py could not even load. A bare `jax`
# beside tensorflow_probability is capped to the last JAX that tfp imports with. gymnax 1.0 made
# env.step return (obs, state, reward, terminated, truncated, info), six values where MLGym's
# policy.py and evaluate.py unpack five: a bare `gymnax` is capped to the 0.0 series.
# package -> (the package whose presence calls for the cap, "" for always; the cap).
COMPAT_CAPS: dict[str, tuple[str, str]] = {"jax": ("tensorflow_probability", "<0.7"), "gymnax": ("", "<1")}
SPECIFIER = re.compile(r"[<>=!~;@]")

MLGYM_GPU_TASKS = frozenset(
    {
        "imageCaptioningCOCO",
        "imageClassificationCifar10",
        "imageClassificationCifar10L1",
        "imageClassificationFMnist",
        "languageModelingFineWeb",
        "naturalLanguageInferenceMNLI",  # its task id (its folder is data/bertMNLI)
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


def _package(line: str) -> str:
    return re.split(r"[\s\[<>=!~;@]", line.strip(), maxsplit=1)[0].lower().replace("-", "_")


def _capped(lines: list[str]) -> list[str]:
    names = {_package(line) for line in lines}
    capped = []
    for line in lines:
        cap = COMPAT_CAPS.get(_package(line))
        unpinned = not SPECIFIER.search(line)
        capped.append(line.strip() + cap[1] if cap and (not cap[0] or cap[0] in names) and unpinned else line)
    return capped


def task_requirements(task: Task) -> list[str]:
    """The pip requirement lines the task's image variant adds to the sandbox image (sandbox.variants);
    a CPU task's CUDA extras are dropped, and a bare line that today's releases break is capped
    (COMPAT_CAPS)."""
    lines = [str(line) for line in (task.config or {}).get("requirements", [])]
    return _capped(lines if task_gpus(task) else [_without_cuda_extras(line) for line in lines])


def task_image(task: Task) -> str | None:
    """The task's image variant (sandbox.variants), or None for the plain sandbox image. Here, below
    benchmark.tasks.evaluation and benchmark.tasks.mlgym_build, which both start sandboxes in it."""
    requirements = task_requirements(task)
    if not requirements:
        return None
    from sandbox.variants import variant_tag

    return variant_tag(requirements)
