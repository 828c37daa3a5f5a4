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
            [smi, "--query-gpu=name", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=10, check=True,
        ).stdout
    except (subprocess.SubprocessError, OSError):
        return _cpu()
    names = [line.strip() for line in out.splitlines() if line.strip()]
    if visible:
        indices = [int(i) for i in visible.split(",") if i.strip().isdigit()]
        names = [names[i] for i in indices if i < len(names)]
    if not names:
        return _cpu()
    return {"kind": "cuda", "name": names[0], "count": len(names)}


def _cpu() -> dict[str, object]:
    return {"kind": "cpu", "name": "CPU", "count": os.cpu_count() or 1}
