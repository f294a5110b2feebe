"""The GPUs of this host, as the sandbox can hand them out (Docker device requests by id).

`GPU_DEVICES` (settings, from the environment) names them: "0,1" offers devices 0 and 1, "none" none,
"auto" (the default) asks `nvidia-smi` and offers every GPU it lists, or none where it is missing.
The names (e.g. "NVIDIA H100 80GB HBM3") come from `nvidia-smi` where it answers, else from
`GPU_NAME`, else "unknown GPU"; a run records them as the type it ran on.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass

from sandbox.conf import _setting

SMI_TIMEOUT = 10.0


@dataclass(frozen=True)
class Gpu:
    id: str
    name: str


def _smi() -> list[Gpu]:
    binary = shutil.which("nvidia-smi")
    if not binary:
        return []
    try:
        result = subprocess.run(
            [binary, "--query-gpu=index,name", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=SMI_TIMEOUT,
        )
    except (OSError, subprocess.TimeoutExpired):
        return []
    if result.returncode != 0:
        return []
    gpus = []
    for line in result.stdout.splitlines():
        index, _, name = line.partition(",")
        if index.strip().isdigit():
            gpus.append(Gpu(index.strip(), name.strip() or "unknown GPU"))
    return gpus


def host_gpus() -> list[Gpu]:
    """The GPUs runs may take on this host (see the module's docstring)."""
    configured = str(_setting("GPU_DEVICES", "auto")).strip()
    if configured.lower() == "auto":
        return _smi()
    if configured.lower() == "none":
        return []
    ids = [part.strip() for part in configured.split(",") if part.strip()]
    if not ids:
        return []
    names = {gpu.id: gpu.name for gpu in _smi()}
    fallback = str(_setting("GPU_NAME", "") or "unknown GPU")
    return [Gpu(id, names.get(id, fallback)) for id in ids]
