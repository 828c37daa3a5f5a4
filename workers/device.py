"""What compute device a worker offers, found without importing torch.

The check runs in the worker's parent process before it forks; initialising CUDA there would
break CUDA in the children, so it asks `nvidia-smi` instead.
"""

from __future__ import annotations

import os
import shutil
import subprocess


def describe_device() -> dict[str, object]:
    """{"kind": "cuda" | "cpu", "name": ..., "count": N}; honours CUDA_VISIBLE_DEVICES."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None and visible.strip() in {"", "-1"}:
        return _cpu()
    smi = shutil.which("nvidia-smi")
    if not smi:
        return _cpu()
    try:
        out = subprocess.run(
            [smi, "--query-gpu=name,memory.total", "--format=csv,noheader,nounits"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout
    except (subprocess.SubprocessError, OSError):
        return _cpu()
    gpus = []
    for line in out.splitlines():
        name, _, mib = line.rpartition(",")
        if name.strip():
            gpus.append((name.strip(), int(mib) * 2**20 if mib.strip().isdigit() else None))
    if visible:
        indices = [int(i) for i in visible.split(",") if i.strip().isdigit()]
        gpus = [gpus[i] for i in indices if i < len(gpus)]
    if not gpus:
        return _cpu()
    return {"kind": "cuda", "name": gpus[0][0], "count": len(gpus), "memory_bytes": gpus[0][1]}


def _cpu() -> dict[str, object]:
    return {"kind": "cpu", "name": "CPU", "count": os.cpu_count() or 1, "memory_bytes": None}
