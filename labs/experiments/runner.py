"""Running a lab: validate the request for the local device, run it, return the result as JSON.

What a worker (labs.services) and the command line call. Importing this module imports torch.

    from labs.experiments.runner import run_experiment
    result = run_experiment("fused_vs_unfused", {"sizes": "64x8192"}, progress=print)  # a JSON-able dict
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .catalog import get_experiment, validate_params
from .config import configured
from .device import Device, get_device
from .result import ProgressFn


def run_experiment(
    experiment_id: str,
    params: dict[str, Any] | None = None,
    progress: ProgressFn | None = None,
    device: str | Device = "auto",
    *,
    cpu_threads: int | None = None,
    cache_dir: str | Path | None = None,
) -> dict:
    """Validate for the local device, run, and return the result as a JSON-serializable dict.

    cpu_threads (torch threads of a CPU-form run) and cache_dir (the roofline calibration cache)
    apply to this run only; None keeps the configured value (config.py's defaults unless set).
    """
    with configured(cpu_threads=cpu_threads, cache_dir=cache_dir):
        dev = get_device(device) if isinstance(device, str) else device
        parsed = validate_params(experiment_id, params, device_kind=dev.kind, device_memory_bytes=dev.memory_bytes)
        return get_experiment(experiment_id).run(parsed, progress=progress, device=dev).to_dict()
