"""GPU lab experiments: pure torch/triton code, no Django.

Each experiment is a module with its variants, a correctness check, a measurement and a
`run(params, progress, device) -> Result`; its parameter dataclass (bounds, device-dependent
defaults, working set) is in experiment_params.py.
This package's catalog is what the Django side and the CLI use:

    from labs.experiments import CATALOG, validate_params, run_experiment
    params = validate_params("fused_vs_unfused", {"sizes": "64x8192"}, device_kind="cuda",
                             device_memory_bytes=80 * 2**30)      # ParamError(field, message) if not
    result = run_experiment("fused_vs_unfused", {"sizes": "64x8192"}, progress=print)  # a JSON-able dict

Only run_experiment (and an entry's `run` and `columns`) imports torch, triton and the experiment
module. The catalog, the parameter schemas and validate_params use the torch-free params.py and
experiment_params.py, so the Django web process can check a request without ever importing torch.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import experiment_params
from .params import ParamError, Params

if TYPE_CHECKING:  # torch-side types, for annotations only
    from .common import Device, ProgressFn


@dataclass(frozen=True)
class Experiment:
    id: str
    title: str
    section: str  # the lesson section it illustrates
    module: str  # the experiment module (imports torch)
    params_class: str  # its parameters' class in experiment_params (torch-free)
    # Device kind -> a default run on a warm worker. Measured on an H100: fused 10-19 s (33 s in a
    # fresh process with cold compile caches), launch_overhead 3 s, attention 8 s.
    estimated_seconds: dict[str, int]
    summary: str

    @property
    def _module(self):
        return importlib.import_module(f"{__name__}.{self.module}")

    @property
    def params_cls(self) -> type[Params]:
        return getattr(experiment_params, self.params_class)

    @property
    def run(self):
        return self._module.run

    @property
    def columns(self) -> tuple[str, ...]:
        return self._module.COLUMNS

    def describe(self, device_kind: str = "cuda") -> dict:
        """The catalog entry as plain data (for a form or an API)."""
        return {"id": self.id, "title": self.title, "section": self.section, "summary": self.summary,
                "estimated_seconds": self.estimated_seconds.get(device_kind, self.estimated_seconds["cpu"]),
                "params": self.params_cls.schema(device_kind)}


CATALOG: dict[str, Experiment] = {e.id: e for e in (
    Experiment("fused_vs_unfused", "Fused vs unfused element-wise chains", "fusion", "fused_vs_unfused",
               "FusedParams", {"cuda": 20, "cpu": 60},
               "bias+GELU, SwiGLU and residual+LayerNorm: eager, torch.compile and a hand-written Triton "
               "kernel, bandwidth against the measured copy roof from launch-bound to bandwidth-bound sizes"),
    Experiment("launch_overhead", "Launch overhead and CUDA Graphs", "cuda-graphs", "launch_overhead",
               "LaunchParams", {"cuda": 5, "cpu": 5},
               "a decode-like chain of tiny ops, eager vs one captured CUDA graph: microseconds per kernel"),
    Experiment("attention", "Attention: naive vs FlashAttention", "flashattention", "attention",
               "AttentionParams", {"cuda": 10, "cpu": 20},
               "materialized scores vs SDPA's flash, cuDNN, memory-efficient and math backends (and flash-attn): "
               "time, TFLOP/s, peak memory, error"),
    Experiment("flash_tiling_trace", "FlashAttention, tile by tile", "flashattention", "flash_tiling_trace",
               "TilingTraceParams", {"cuda": 2, "cpu": 2},
               "a step-through trace of the tiled forward pass with online softmax: the tile on chip, running max "
               "and sum, rescale factors and HBM bytes so far, against naive attention; HBM bytes vs N"),
    Experiment("roofline", "The roofline: bandwidth and compute roofs", "roofline", "roofline",
               "RooflineParams", {"cuda": 10, "cpu": 5},
               "calibrates this device's bandwidth roof (copy) and compute roof (large matmul), cached per device, "
               "and the ridge point where kernels turn from memory-bound to compute-bound"),
)}


def get_experiment(experiment_id: str) -> Experiment:
    try:
        return CATALOG[experiment_id]
    except KeyError:
        raise ParamError("experiment", f"unknown experiment {experiment_id!r}; known: {', '.join(CATALOG)}") from None


def catalog(device_kind: str = "cuda") -> list[dict]:
    return [e.describe(device_kind) for e in CATALOG.values()]


def validate_params(experiment_id: str, params: dict[str, Any] | None = None, *, device_kind: str = "cuda",
                    device_memory_bytes: int | None = None) -> Params:
    """Parse and check a request for the target device before it is queued; raises ParamError(field, message)."""
    exp = get_experiment(experiment_id)
    parsed = exp.params_cls.from_dict(params or {}, device_kind)
    parsed.validate(device_memory_bytes, device_kind)
    return parsed


def run_experiment(experiment_id: str, params: dict[str, Any] | None = None, progress: ProgressFn | None = None,
                   device: str | Device = "auto") -> dict:
    """Validate for the local device, run, and return the result as a JSON-serializable dict."""
    from .common import get_device

    dev = get_device(device) if isinstance(device, str) else device
    parsed = validate_params(experiment_id, params, device_kind=dev.kind, device_memory_bytes=dev.memory_bytes)
    return get_experiment(experiment_id).run(parsed, progress=progress, device=dev).to_dict()


__all__ = ["CATALOG", "Experiment", "ParamError", "catalog", "get_experiment", "run_experiment", "validate_params"]
