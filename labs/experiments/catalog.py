"""The lab catalog: each experiment's parameters (fields, bounds, device-dependent defaults, working
set) and its entry (title, lesson section, module, estimated time).

Torch-free, like params.py: the Django web process lists the labs, shows their parameter schemas
and refuses a request that cannot run before it is queued, without ever importing torch:

    from labs.experiments.catalog import CATALOG, validate_params
    params = validate_params("fused_vs_unfused", {"sizes": "64x8192"}, device_kind="cuda",
                             device_memory_bytes=80 * 2**30)      # ParamError(field, message) if not

An entry names its experiment module as a string, imported on first use of `run` or `columns`:
importing it imports torch. Running is runner.run_experiment's job (on a worker or the CLI).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .params import (
    DTYPE_NAMES,
    ITEMSIZE,
    ParamError,
    Params,
    param,
    parse_bool,
    parse_dtype,
    parse_ints,
    parse_sizes,
    parse_strs,
)

# ---------------------------------------------------------------------------------------------
# fused_vs_unfused
# ---------------------------------------------------------------------------------------------

CHAINS = ("bias_gelu", "swiglu", "residual_layernorm")
FUSED_VARIANTS = ("eager", "compile", "triton")
GPU_SIZES = ((64, 8192), (1024, 8192), (4096, 8192), (16384, 8192))
CPU_SIZES = ((64, 1024), (1024, 4096))
MAX_COLS = 16384  # residual+LayerNorm keeps a whole row in registers
MAX_ELEMENTS = 1 << 28  # 512 MiB per bf16 tensor; also keeps int32 offsets in the kernels safe


@dataclass(frozen=True)
class FusedParams(Params):
    chains: tuple[str, ...] = param(CHAINS, "element-wise chains to run", choices=CHAINS, max_items=3, parse=parse_strs)
    sizes: tuple[tuple[int, int], ...] = param(
        GPU_SIZES,
        "rows x cols, from launch-bound to bandwidth-bound",
        min=1,
        max=131072,
        max_items=6,
        parse=parse_sizes,
    )
    dtype: str = param(
        "bfloat16",
        "element type of inputs and outputs (math is float32 inside)",
        choices=DTYPE_NAMES,
        parse=parse_dtype,
    )
    variants: tuple[str, ...] = param(
        FUSED_VARIANTS,
        "eager (one kernel per op), compile, triton (hand-fused)",
        choices=FUSED_VARIANTS,
        max_items=3,
        parse=parse_strs,
    )

    @classmethod
    def defaults_for(cls, device_kind: str) -> FusedParams:
        # A CPU has no bf16 arithmetic to speak of and a fraction of the bandwidth: smaller, float32.
        return cls() if device_kind == "cuda" else cls(sizes=CPU_SIZES, dtype="float32")

    def check(self, device_kind: str) -> None:
        for rows, cols in self.sizes:
            if not 16 <= cols <= MAX_COLS:
                raise ParamError("sizes", f"{rows}x{cols}: cols must be between 16 and {MAX_COLS}")
            if rows * cols > MAX_ELEMENTS:
                raise ParamError("sizes", f"{rows}x{cols}: at most {MAX_ELEMENTS} elements per size")

    def working_set_bytes(self) -> int:
        n = max(r * c for r, c in self.sizes)
        # Per element: up to 3 inputs, an output and 2 eager intermediates in dtype; the float32
        # reference (3 upcast inputs, an intermediate, its output) and the error tensor in float32.
        per_element = 6 * ITEMSIZE[self.dtype] + 6 * 4
        # The copy roof's source and destination (1 GiB) and do_bench's 256 MiB flush buffer.
        return n * per_element + (1024 + 256) * 2**20


# ---------------------------------------------------------------------------------------------
# launch_overhead
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LaunchParams(Params):
    lengths: tuple[int, ...] = param(
        (10, 50, 100, 200, 400), "ops in the chain (one kernel each)", min=1, max=2000, max_items=8, parse=parse_ints
    )
    hidden: int = param(1024, "elements per op: a decode step's activation vector", min=16, max=65536)
    dtype: str = param("float32", "element type", choices=DTYPE_NAMES, parse=parse_dtype)

    memory_field = "hidden"

    def working_set_bytes(self) -> int:
        # Two parameter vectors per op, plus activations: kilobytes, but say so honestly.
        return 4 * max(self.lengths) * self.hidden * 4 + 256 * 2**20


# ---------------------------------------------------------------------------------------------
# attention
# ---------------------------------------------------------------------------------------------

# The variants themselves hold torch code, so their registry (name -> AttentionVariant) lives in
# attention.py, which hands it over here when imported; a variant registered there later counts
# too. A process that never imports attention.py (the web process) knows the built-ins by name.
BUILTIN_ATTENTION_VARIANTS = (
    "naive",
    "sdpa_flash",
    "sdpa_cudnn",
    "sdpa_efficient",
    "sdpa_math",
    "flash_attn",
    "triton_flash",
    "gluon_flash",
)
_attention_registry: Mapping[str, Any] | None = None


def use_attention_registry(registry: Mapping[str, Any]) -> None:
    global _attention_registry
    _attention_registry = registry


def attention_variants() -> tuple[str, ...]:
    """Names of the attention variants this process knows, in registration order."""
    return tuple(_attention_registry) if _attention_registry is not None else BUILTIN_ATTENTION_VARIANTS


GPU_SEQ_LENS = (1024, 2048, 4096, 8192, 16384)
CPU_SEQ_LENS = (128, 256, 512, 1024)
MAX_FLOPS = {"cuda": 1e14, "cpu": 5e10}  # per call at the largest N: a few tenths of a second


def flops(batch: int, heads: int, n: int, d: int, causal: bool) -> float:
    """Two matmuls of 2*N*N*d each per head: 4*B*H*N^2*d, half of it under a causal mask."""
    total = 4.0 * batch * heads * n * n * d
    return total / 2 if causal else total


@dataclass(frozen=True)
class AttentionParams(Params):
    seq_lens: tuple[int, ...] = param(
        GPU_SEQ_LENS, "sequence lengths N", min=16, max=65536, max_items=8, parse=parse_ints
    )
    batch: int = param(1, "batch size", min=1, max=64)
    heads: int = param(32, "attention heads", min=1, max=128)
    head_dim: int = param(128, "head dimension d", min=16, max=256)
    dtype: str = param("bfloat16", "element type", choices=DTYPE_NAMES, parse=parse_dtype)
    causal: bool = param(False, "causal mask (half the work)", parse=parse_bool)
    variants: tuple[str, ...] = param(
        BUILTIN_ATTENTION_VARIANTS, "implementations to compare (registry names)", max_items=16, parse=parse_strs
    )

    memory_field = "seq_lens"

    @classmethod
    def defaults_for(cls, device_kind: str) -> AttentionParams:
        variants = attention_variants()  # variants registered after import count too
        if device_kind == "cuda":
            return cls(variants=variants)
        return cls(seq_lens=CPU_SEQ_LENS, heads=4, head_dim=64, dtype="float32", variants=variants)

    def check(self, device_kind: str) -> None:
        known = attention_variants()
        for name in self.variants:
            if name not in known:
                raise ParamError("variants", f"unknown variant {name!r}; choose from {', '.join(known)}")
        if self.head_dim % 8:
            raise ParamError("head_dim", "must be a multiple of 8 (the fused kernels' requirement)")
        worst = flops(self.batch, self.heads, max(self.seq_lens), self.head_dim, self.causal)
        limit = MAX_FLOPS.get(device_kind, MAX_FLOPS["cpu"])
        if worst > limit:
            raise ParamError(
                "seq_lens",
                f"N={max(self.seq_lens)} is {worst:.2g} FLOP per call, more than "
                f"{limit:.0e} allowed on {device_kind}; lower N, heads or batch",
            )

    def working_set_bytes(self) -> int:
        n, s = max(self.seq_lens), ITEMSIZE[self.dtype]
        qkvo = 4 * self.batch * self.heads * n * self.head_dim * s
        # A fused variant's output and the float32 reference's copies of K and V; the reference's
        # score chunk (<= 512 MiB); do_bench's flush buffer. Naive runs are skipped, not refused.
        ref = 2 * self.batch * self.heads * n * self.head_dim * 4 + 512 * 2**20
        return 2 * qkvo + ref + 256 * 2**20


# ---------------------------------------------------------------------------------------------
# flash_tiling_trace (NumPy on the CPU whatever the device: a trace for reading, not a benchmark)
# ---------------------------------------------------------------------------------------------

TRACE_COMPUTE = ("float64", "float32")
TRACE_MAX_TILES = 4096  # tiles (Q blocks x K/V blocks) per run: bounds the run time and the trace


@dataclass(frozen=True)
class TilingTraceParams(Params):
    seq_len: int = param(128, "sequence length N (one head)", min=8, max=512)
    head_dim: int = param(16, "head dimension d", min=2, max=128)
    block_m: int = param(32, "query rows per tile (B_r): held on chip for a whole inner loop", min=4, max=128)
    block_n: int = param(32, "key/value rows per tile (B_c): streamed through the inner loop", min=4, max=128)
    dtype: str = param(
        "bfloat16",
        "element type the HBM byte counts assume (bf16: 2 bytes per element)",
        choices=DTYPE_NAMES,
        parse=parse_dtype,
    )
    compute: str = param("float64", "precision the NumPy trace computes in", choices=TRACE_COMPUTE)
    causal: bool = param(False, "causal mask: tiles wholly above the diagonal are skipped", parse=parse_bool)
    max_steps: int = param(256, "steps kept in the trace (the computation always runs to the end)", min=1, max=1024)
    seed: int = param(0, "random seed for Q, K and V", min=0, max=2**31 - 1)

    memory_field = "seq_len"

    def check(self, device_kind: str) -> None:
        tiles = -(-self.seq_len // self.block_m) * -(-self.seq_len // self.block_n)
        if tiles > TRACE_MAX_TILES:
            field = "block_n" if self.block_n <= self.block_m else "block_m"
            raise ParamError(
                field,
                f"N={self.seq_len} with {self.block_m}x{self.block_n} tiles is {tiles} tiles, "
                f"more than {TRACE_MAX_TILES}; use larger blocks or a smaller N",
            )


# ---------------------------------------------------------------------------------------------
# roofline (calibration: the device's bandwidth and compute roofs, cached per device)
# ---------------------------------------------------------------------------------------------

ROOFLINE_MAX_MATMUL = {"cuda": 16384, "cpu": 2048}  # CPU: 2*2048^3 = 17 GFLOP, a few tenths of a second per call


@dataclass(frozen=True)
class RooflineParams(Params):
    matmul_size: int = param(8192, "n of the n x n x n matmul that measures the compute roof", min=256, max=16384)
    dtype: str = param("bfloat16", "element type of the compute roof's matmul", choices=DTYPE_NAMES, parse=parse_dtype)
    recalibrate: bool = param(False, "measure again even if this device has a cached calibration", parse=parse_bool)

    memory_field = "matmul_size"

    @classmethod
    def defaults_for(cls, device_kind: str) -> RooflineParams:
        return cls() if device_kind == "cuda" else cls(matmul_size=1024, dtype="float32")

    def check(self, device_kind: str) -> None:
        limit = ROOFLINE_MAX_MATMUL.get(device_kind, ROOFLINE_MAX_MATMUL["cpu"])
        if self.matmul_size > limit:
            raise ParamError("matmul_size", f"at most {limit} on {device_kind}")

    def working_set_bytes(self) -> int:
        # A, B and C of the matmul; the copy roof's 512 MiB source and its clone; do_bench's flush buffer.
        return 3 * self.matmul_size**2 * ITEMSIZE[self.dtype] + (1024 + 256) * 2**20


# ---------------------------------------------------------------------------------------------
# The catalog
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Experiment:
    id: str
    title: str
    section: str  # the lesson section it illustrates
    module: str  # the experiment module under labs.experiments (imports torch)
    params_cls: type[Params]  # its parameters (torch-free, above)
    # Device kind -> seconds for a default run on a warm worker (NOTES.md has the H100 figures).
    estimated_seconds: dict[str, int]
    summary: str

    @property
    def _module(self):
        return importlib.import_module(f"{__package__}.{self.module}")

    @property
    def run(self):
        return self._module.run

    @property
    def columns(self) -> tuple[str, ...]:
        return self._module.COLUMNS

    def describe(self, device_kind: str = "cuda") -> dict:
        """The catalog entry as plain data (for a form or an API)."""
        return {
            "id": self.id,
            "title": self.title,
            "section": self.section,
            "summary": self.summary,
            "estimated_seconds": self.estimated_seconds.get(device_kind, self.estimated_seconds["cpu"]),
            "params": self.params_cls.schema(device_kind),
        }


CATALOG: dict[str, Experiment] = {
    e.id: e
    for e in (
        Experiment(
            "fused_vs_unfused",
            "Fused vs unfused element-wise chains",
            "fusion",
            "fused_vs_unfused",
            FusedParams,
            {"cuda": 20, "cpu": 60},
            "bias+GELU, SwiGLU and residual+LayerNorm: eager, torch.compile and a hand-written Triton "
            "kernel, bandwidth against the measured copy roof from launch-bound to bandwidth-bound sizes",
        ),
        Experiment(
            "launch_overhead",
            "Launch overhead and CUDA Graphs",
            "cuda-graphs",
            "launch_overhead",
            LaunchParams,
            {"cuda": 5, "cpu": 5},
            "a decode-like chain of tiny ops, eager vs one captured CUDA graph: microseconds per kernel",
        ),
        Experiment(
            "attention",
            "Attention: naive vs FlashAttention",
            "flashattention",
            "attention",
            AttentionParams,
            {"cuda": 10, "cpu": 20},
            "materialized scores vs SDPA's flash, cuDNN, memory-efficient and math backends (and flash-attn): "
            "time, TFLOP/s, peak memory, error",
        ),
        Experiment(
            "flash_tiling_trace",
            "FlashAttention, tile by tile",
            "flashattention",
            "flash_tiling_trace",
            TilingTraceParams,
            {"cuda": 2, "cpu": 2},
            "a step-through trace of the tiled forward pass with online softmax: the tile on chip, running max "
            "and sum, rescale factors and HBM bytes so far, against naive attention; HBM bytes vs N",
        ),
        Experiment(
            "roofline",
            "The roofline: bandwidth and compute roofs",
            "roofline",
            "roofline",
            RooflineParams,
            {"cuda": 10, "cpu": 5},
            "calibrates this device's bandwidth roof (copy) and compute roof (large matmul), cached per device, "
            "and the ridge point where kernels turn from memory-bound to compute-bound",
        ),
    )
}


def get_experiment(experiment_id: str) -> Experiment:
    try:
        return CATALOG[experiment_id]
    except KeyError:
        raise ParamError("experiment", f"unknown experiment {experiment_id!r}; known: {', '.join(CATALOG)}") from None


def catalog(device_kind: str = "cuda") -> list[dict]:
    """Every entry as plain data, with the defaults and bounds of `device_kind`."""
    return [e.describe(device_kind) for e in CATALOG.values()]


def validate_params(
    experiment_id: str,
    params: dict[str, Any] | None = None,
    *,
    device_kind: str = "cuda",
    device_memory_bytes: int | None = None,
) -> Params:
    """Parse and check a request for the target device before it is queued; raises ParamError(field, message)."""
    exp = get_experiment(experiment_id)
    parsed = exp.params_cls.from_dict(params or {}, device_kind)
    parsed.validate(device_memory_bytes, device_kind)
    return parsed
