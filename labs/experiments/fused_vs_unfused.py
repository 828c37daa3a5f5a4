"""
Fused vs unfused element-wise chains
====================================

bias+GELU, the SwiGLU gate silu(a) * b and residual+LayerNorm do a few floating-point operations
per element and nothing else, so their speed is set by how many bytes cross device memory.
Eager PyTorch runs one kernel per op and writes every intermediate back to memory;
`torch.compile` and the hand-written Triton kernels below read each input once and write the
output once. This lab measures the three side by side, from sizes where launching a kernel costs
more than running it (64 x 8192) to sizes where only bandwidth matters (16384 x 8192), and puts
each against the copy bandwidth measured on the same device in the same run.

On a CPU the lab runs in its CPU form: eager vs torch.compile (Inductor generates C++ there), and
the Triton kernels run under TRITON_INTERPRET=1, NumPy emulating the GPU, for correctness only.
Triton decides at decoration time whether a kernel is compiled or interpreted, so the interpreter
runs in a child process that sets the variable before importing this module (see interpret.py);
a worker that also launches real GPU kernels is never switched over by accident.
"""

import functools
import os
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from .catalog import CHAINS, FusedParams  # torch-free: parameters, bounds, defaults
from .copy_roof import copy_roof
from .correctness import compare
from .device import DTYPES, Device, get_device, pinned_cpu_threads
from .fused_configs import launch_table
from .kernel_count import count_aten_ops, count_kernels
from .params import ITEMSIZE
from .result import Progress, ProgressFn, Result, new_result
from .timing import measure, sync, timing_method, wall_per_call_ms
from .triton_shim import NO_TRITON, next_power_of_2, triton_or_none

triton = triton_or_none()
if triton is not None:
    import triton.language as tl
else:  # a CPU-only install: eager and torch.compile still run, the Triton rows say why not
    triton = tl = NO_TRITON

# Fixed when the kernels below were decorated: interpreted kernels take CPU tensors, compiled ones don't.
INTERPRETED = os.environ.get("TRITON_INTERPRET", "0") == "1"
# Compiled for an NVIDIA GPU, kernels may use PTX's approximate reciprocal (see erf_fast).
RCP_APPROX = not INTERPRETED and torch.version.hip is None

# %%
# The chains, eager: one kernel per PyTorch op, every intermediate a round trip to memory.
# The same functions on float32 inputs are the reference.


def bias_gelu(x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    return F.gelu(x + bias)


def swiglu(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return F.silu(a) * b


def residual_layernorm(
    x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5
) -> torch.Tensor:
    return F.layer_norm(x + residual, x.shape[-1:], weight, bias, eps)


# %%
# The Triton kernels: one pass, float32 math in registers.
#
# Every load is marked evict_first: each byte is used once, so keeping it in L2 only pushes out
# data that is still wanted (the bias, the LayerNorm weights). Offsets stay int32, which
# catalog.MAX_ELEMENTS guarantees is enough, because 64-bit index math costs registers and instructions
# in a kernel that has little else to do.


@triton.jit
def erf_fast(x, RCP_APPROX: tl.constexpr):
    # Abramowitz & Stegun 7.1.26: |error| < 1.5e-7, about float32's own rounding, in a dozen
    # instructions (one reciprocal, one exp2, five FMAs). libdevice's erff costs two or three times
    # that, enough for bias+GELU's arithmetic to compete with its memory traffic for issue slots
    # and keep the kernel off the copy roof (NOTES.md has the figures).
    a = tl.abs(x)
    d = 1.0 + 0.3275911 * a
    if RCP_APPROX:
        # `1.0 / d` is an IEEE-rounded division: a reciprocal plus Newton steps and a slow-path check.
        # The hardware's approximate reciprocal (1 ulp) is one instruction, and the polynomial's own
        # error is a thousand times larger. On an H200, whose memory is 40% faster than an H100's with
        # the same SMs, the division alone held the kernel at 81% of the copy roof (95% without it).
        t = tl.inline_asm_elementwise("rcp.approx.ftz.f32 $0, $1;", "=r,r", [d], dtype=tl.float32, is_pure=True, pack=1)
    else:  # the interpreter (NumPy) runs no PTX
        t = 1.0 / d
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    y = 1.0 - poly * tl.exp(-a * a)
    return tl.where(x < 0, -y, y)


@triton.jit
def bias_gelu_kernel(
    x_ptr,
    bias_ptr,
    y_ptr,
    n_rows,
    n_cols,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    LIBDEVICE_ERF: tl.constexpr = False,
    RCP_APPROX: tl.constexpr = False,
):
    # A 1D grid over BLOCK_M x BLOCK_N tiles. The tile's slice of the bias is loaded once and
    # broadcast down its rows: a per-element gather (bias[offset % n_cols]) would cost a scalar
    # load per element, where the tile gets 16-byte vector loads along the row.
    pid = tl.program_id(0)
    n_col_blocks = tl.cdiv(n_cols, BLOCK_N)
    rows = (pid // n_col_blocks) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = (pid % n_col_blocks) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_ok = cols < n_cols
    mask = (rows[:, None] < n_rows) & col_ok[None, :]
    offsets = rows[:, None] * n_cols + cols[None, :]
    x = tl.load(x_ptr + offsets, mask=mask, eviction_policy="evict_first").to(tl.float32)
    bias = tl.load(bias_ptr + cols, mask=col_ok).to(tl.float32)
    v = x + bias[None, :]
    # The exact (erf) GELU, as F.gelu computes by default; the tanh form would be a different function.
    if LIBDEVICE_ERF:
        e = tl.erf(v * 0.7071067811865476)
    else:
        e = erf_fast(v * 0.7071067811865476, RCP_APPROX)
    y = 0.5 * v * (1.0 + e)
    tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def swiglu_kernel(a_ptr, b_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    # Purely element-wise, so the tensors are flat arrays and the grid a 1D walk over them.
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    a = tl.load(a_ptr + offsets, mask=mask, eviction_policy="evict_first").to(tl.float32)
    b = tl.load(b_ptr + offsets, mask=mask, eviction_policy="evict_first").to(tl.float32)
    y = a * tl.sigmoid(a) * b  # silu(a) = a * sigmoid(a)
    tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def residual_layernorm_kernel(
    x_ptr, r_ptr, w_ptr, b_ptr, y_ptr, n_rows, n_cols, eps, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr
):
    # BLOCK_M whole rows per program (BLOCK_N >= n_cols): the row stays in registers, so the mean
    # and the variance are exact two-pass sums over values already loaded, and each byte crosses
    # memory once. Several rows per program keep short rows from leaving most threads idle.
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    col_ok = cols < n_cols
    mask = (rows[:, None] < n_rows) & col_ok[None, :]
    offsets = rows[:, None] * n_cols + cols[None, :]
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
    r = tl.load(r_ptr + offsets, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
    h = x + r
    mean = tl.sum(h, axis=1) / n_cols
    # Masked lanes hold 0 in h but must not contribute (0 - mean)^2 to the variance.
    d = tl.where(mask, h - mean[:, None], 0.0)
    var = tl.sum(d * d, axis=1) / n_cols
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=col_ok).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=col_ok).to(tl.float32)
    y = d * rstd[:, None] * w[None, :] + b[None, :]
    tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)


# %%
# Launch configurations, per device, from fused_configs.json (fused_tuning.py chooses them and
# NOTES.md has what they reached). Element-wise kernels need many bytes in flight per SM to cover
# memory latency: a few 16-byte loads per thread per input, and a grid of thousands of programs at
# the large sizes so that the last wave is a small part. What is enough differs by device: the
# H100's bias+GELU configuration reached 81% of the copy roof on an H200.


def bias_gelu_config(n_rows: int, n_cols: int, device_name: str | None = None, cfg: dict | None = None):
    """(BLOCK_M, BLOCK_N, warps) for this shape from the device's table entry (or from `cfg`)."""
    # H100: 8 x 512 tiles over 4 warps: 32 elements, four 16-byte loads of x per thread.
    cfg = cfg or launch_table(device_name)["bias_gelu"]
    block_n = min(next_power_of_2(n_cols), cfg["block_n"])
    block_m = min(max(1, cfg["tile"] // block_n), next_power_of_2(n_rows))
    return block_m, block_n, cfg["warps"]


def swiglu_config(n_elements: int, device_name: str | None = None, cfg: dict | None = None) -> tuple[int, int]:
    # H100: 2048 elements over 8 warps: one 16-byte load per input per thread, many programs.
    cfg = cfg or launch_table(device_name)["swiglu"]
    block = min(cfg["block"], next_power_of_2(n_elements))
    return block, cfg["warps"] if block >= cfg["block"] else 4


def layernorm_config(n_rows: int, n_cols: int, device_name: str | None = None, cfg: dict | None = None):
    cfg = cfg or launch_table(device_name)["residual_layernorm"]
    block_n = next_power_of_2(n_cols)
    block_m = min(max(1, cfg["tile"] // block_n), next_power_of_2(n_rows))
    # Enough warps that a thread holds at most ~16 floats of each row: more would spill registers.
    warps = cfg["warps"] or min(16, max(4, block_m * block_n // 512))
    return block_m, block_n, warps


def _device_name(t: torch.Tensor) -> str | None:
    """The GPU's name, which picks its row of the table (None on a CPU: the interpreter's default)."""
    return (
        _cuda_name(t.device.index if t.device.index is not None else torch.cuda.current_device()) if t.is_cuda else None
    )


@functools.cache
def _cuda_name(index: int) -> str:
    return torch.cuda.get_device_name(index)


def bias_gelu_triton(
    x: torch.Tensor,
    bias: torch.Tensor,
    out: torch.Tensor | None = None,
    config: tuple[int, int, int] | None = None,
    libdevice_erf: bool = False,
) -> torch.Tensor:
    assert x.is_contiguous() and bias.is_contiguous()
    n_rows, n_cols = x.shape
    out = torch.empty_like(x) if out is None else out
    block_m, block_n, warps = config or bias_gelu_config(n_rows, n_cols, _device_name(x))
    grid = (triton.cdiv(n_rows, block_m) * triton.cdiv(n_cols, block_n),)
    bias_gelu_kernel[grid](
        x,
        bias,
        out,
        n_rows,
        n_cols,
        BLOCK_M=block_m,
        BLOCK_N=block_n,
        LIBDEVICE_ERF=libdevice_erf,
        RCP_APPROX=RCP_APPROX,
        num_warps=warps,
    )
    return out


def swiglu_triton(
    a: torch.Tensor, b: torch.Tensor, out: torch.Tensor | None = None, config: tuple[int, int] | None = None
) -> torch.Tensor:
    assert a.is_contiguous() and b.is_contiguous() and a.shape == b.shape
    out = torch.empty_like(a) if out is None else out
    n = a.numel()
    block, warps = config or swiglu_config(n, _device_name(a))
    swiglu_kernel[(triton.cdiv(n, block),)](a, b, out, n, BLOCK=block, num_warps=warps)
    return out


def residual_layernorm_triton(
    x: torch.Tensor,
    residual: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor,
    eps: float = 1e-5,
    out: torch.Tensor | None = None,
    config: tuple[int, int, int] | None = None,
) -> torch.Tensor:
    assert x.is_contiguous() and residual.is_contiguous()
    n_rows, n_cols = x.shape
    out = torch.empty_like(x) if out is None else out
    block_m, block_n, warps = config or layernorm_config(n_rows, n_cols, _device_name(x))
    residual_layernorm_kernel[(triton.cdiv(n_rows, block_m),)](
        x, residual, weight, bias, out, n_rows, n_cols, eps, BLOCK_M=block_m, BLOCK_N=block_n, num_warps=warps
    )
    return out


# %%
# The bytes model: the fewest bytes a call must move (each input read once, the output written
# once). Achieved bandwidth for every variant is this over the median time, so the variants'
# bandwidths compare like their speeds; the eager traffic model shows why eager is slower.


@dataclass(frozen=True)
class Chain:
    name: str
    title: str
    eager: Callable[..., torch.Tensor]
    triton: Callable[..., torch.Tensor]
    min_bytes: Callable[[int, int, int], int]  # (rows, cols, itemsize) -> bytes
    eager_bytes: Callable[[int, int, int], int]
    model: str
    eager_kernels: int


CHAIN_TABLE: dict[str, Chain] = {
    "bias_gelu": Chain(
        "bias_gelu",
        "bias + GELU",
        bias_gelu,
        bias_gelu_triton,
        min_bytes=lambda r, c, s: (2 * r * c + c) * s,
        eager_bytes=lambda r, c, s: (4 * r * c + c) * s,
        model="fused: read x (R*C) + bias (C), write y (R*C) = (2RC + C)*itemsize; "
        "eager: add reads x + bias and writes t, gelu reads t and writes y = (4RC + C)*itemsize",
        eager_kernels=2,
    ),
    "swiglu": Chain(
        "swiglu",
        "SwiGLU gate silu(a) * b",
        swiglu,
        swiglu_triton,
        min_bytes=lambda r, c, s: 3 * r * c * s,
        eager_bytes=lambda r, c, s: 5 * r * c * s,
        model="fused: read a, b (2RC), write y (RC) = 3RC*itemsize; "
        "eager: silu reads a and writes t (2RC), mul reads t, b and writes y (3RC) = 5RC*itemsize",
        eager_kernels=2,
    ),
    "residual_layernorm": Chain(
        "residual_layernorm",
        "residual add + LayerNorm",
        residual_layernorm,
        residual_layernorm_triton,
        min_bytes=lambda r, c, s: (3 * r * c + 2 * c) * s,
        eager_bytes=lambda r, c, s: (5 * r * c + 2 * c) * s,
        model="fused: read x, residual (2RC) + weight, bias (2C), write y (RC) = (3RC + 2C)*itemsize; "
        "eager: add reads x, residual and writes h (3RC), layer_norm reads h + weight, bias and writes y "
        "(2RC + 2C) = (5RC + 2C)*itemsize (mean/rstd, 8R bytes, left out)",
        eager_kernels=2,
    ),
}


def make_inputs(chain: str, rows: int, cols: int, dtype: torch.dtype, device: str, seed: int) -> tuple:
    """Fresh random inputs (never zeros: they hide unwritten outputs and can run faster than data)."""
    g = torch.Generator(device=device).manual_seed(seed)

    def randn(*shape, scale=1.0, shift=0.0):
        return (torch.randn(*shape, generator=g, device=device, dtype=torch.float32) * scale + shift).to(dtype)

    if chain == "bias_gelu":
        return randn(rows, cols), randn(cols)
    if chain == "swiglu":
        return randn(rows, cols), randn(rows, cols)
    return randn(rows, cols), randn(rows, cols), randn(cols, scale=0.1, shift=1.0), randn(cols, scale=0.1)


def reference(chain: str, inputs: tuple) -> torch.Tensor:
    """The chain in float32 on the same (rounded) inputs: the answer every variant is held to."""
    return CHAIN_TABLE[chain].eager(*(t.float() for t in inputs))


# %%
# Correctness of the Triton kernels on their own, on awkward shapes (columns that are not a
# power of two exercise the masks). Outputs start as NaN so an element the kernel never wrote fails.

CHECK_SHAPES = ((3, 1000), (17, 64), (130, 768))


def check_triton_kernels(device: str, dtype: str, chains=CHAINS, shapes=CHECK_SHAPES, seed: int = 1234) -> list[dict]:
    checks = []
    for chain in chains:
        for i, (rows, cols) in enumerate(shapes):
            inputs = make_inputs(chain, rows, cols, DTYPES[dtype], device, seed + i)
            out = torch.full((rows, cols), float("nan"), dtype=DTYPES[dtype], device=device)
            CHAIN_TABLE[chain].triton(*inputs, out=out)
            checks.append(
                {
                    "name": f"{chain} triton {rows}x{cols} {dtype}",
                    "chain": chain,
                    "size": f"{rows}x{cols}",
                    **compare(out, reference(chain, inputs), dtype),
                }
            )
    return checks


def interpreter_check(dtype: str | list[str] = "float32", chains=CHAINS) -> list[dict]:
    """Entry point for interpret.py's child process (TRITON_INTERPRET=1): the kernels on CPU tensors."""
    if not INTERPRETED:
        raise RuntimeError("interpreter_check needs TRITON_INTERPRET=1 set before this module is imported")
    dtypes = [dtype] if isinstance(dtype, str) else list(dtype)
    return [c for d in dtypes for c in check_triton_kernels("cpu", d, chains)]


# %%
# Measurement


def _variant_fn(variant: str, chain: Chain, inputs: tuple) -> Callable[[], torch.Tensor]:
    if variant == "eager":
        return lambda: chain.eager(*inputs)
    if variant == "compile":
        # dynamic=False: each size gets kernels specialised to its shape, as a deployed model
        # with fixed shapes would; the first call compiles (outside the timed region).
        compiled = torch.compile(chain.eager, dynamic=False)
        return lambda: compiled(*inputs)
    return lambda: chain.triton(*inputs)  # allocates its output per call, as eager and compile do


@pinned_cpu_threads
def run(params: FusedParams, progress: ProgressFn | None = None, device: Device | None = None) -> Result:
    """Run the sweep; returns rows per (chain, size, variant) with time, bandwidth, kernels and error."""
    device = device or get_device()
    t_start = time.perf_counter()
    prog = Progress(progress)
    dtype, itemsize = DTYPES[params.dtype], ITEMSIZE[params.dtype]
    result = new_result(
        "fused_vs_unfused",
        params,
        device,
        timing_method(device) + ". Bandwidth = modelled "
        "bytes (each input read once, the output written once) / median time, also as % of "
        "the copy bandwidth measured in this run; errors against a float32 reference. wall_ms: "
        "host clock over back-to-back calls, synchronized once at the end, which includes host "
        "overhead that per-call events can hide behind the preceding cache flush.",
    )
    # A long-lived worker would otherwise pile recompiles onto the same code objects until Dynamo's
    # recompile limit makes torch.compile silently fall back to eager.
    torch._dynamo.reset()

    prog(2, "measuring the copy roof")
    roof = copy_roof(device)
    result.artifacts["copy_roof"] = roof.to_dict()
    result.artifacts["bytes_model"] = {c: CHAIN_TABLE[c].model for c in params.chains}

    variants = list(params.variants)
    run_triton_here = "triton" in variants and device.is_cuda and triton is not NO_TRITON and not INTERPRETED
    if "triton" in variants and not run_triton_here:
        variants.remove("triton")
    if not device.is_cuda:
        result.note(
            "CPU form: torch.compile generates C++ (Inductor) here, not GPU kernels; kernel counts "
            "need a GPU, so eager rows count the ATen operators dispatched per call instead (aten_ops)."
        )

    steps = len(params.chains) * len(params.sizes)
    series: dict[str, dict] = {}
    for ci, chain_name in enumerate(params.chains):
        chain = CHAIN_TABLE[chain_name]
        for si, (rows, cols) in enumerate(params.sizes):
            step = ci * len(params.sizes) + si
            prog(5 + 85 * step / steps, f"{chain.title} {rows}x{cols}")
            inputs = make_inputs(chain_name, rows, cols, dtype, device.torch_device, seed=1000 * ci + si)
            ref = reference(chain_name, inputs)
            min_bytes = chain.min_bytes(rows, cols, itemsize)
            size_rows = []
            for variant in variants:
                fn = _variant_fn(variant, chain, inputs)
                row = {
                    "chain": chain_name,
                    "size": f"{rows}x{cols}",
                    "elements": rows * cols,
                    "variant": variant,
                    "bytes_min": min_bytes,
                    "bytes_eager_model": chain.eager_bytes(rows, cols, itemsize),
                }
                try:
                    if variant == "triton":  # poisoned output: an element the kernel skips stays NaN
                        out = torch.full_like(inputs[0], float("nan"))
                        chain.triton(*inputs, out=out)
                    else:
                        out = fn()
                    sync(device)
                except Exception as exc:  # noqa: BLE001 - e.g. no C++ compiler for Inductor: skip, say why
                    row.update(skipped=f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}")
                    result.note(f"{variant} skipped for {chain_name} {rows}x{cols}: {row['skipped']}")
                    result.rows.append(row)
                    continue
                check = compare(out, ref, params.dtype)
                result.add_check(f"{chain_name} {variant} {rows}x{cols}", check)
                del out
                timing = measure(fn, device)
                gbps = min_bytes / (timing.median_ms * 1e-3) / 1e9
                row.update(
                    kernels=count_kernels(fn, device),
                    aten_ops=count_aten_ops(fn) if not device.is_cuda and variant == "eager" else None,
                    median_ms=timing.median_ms,
                    q25_ms=timing.q25_ms,
                    q75_ms=timing.q75_ms,
                    spread_pct=timing.spread_pct,
                    reps=timing.reps,
                    wall_ms=wall_per_call_ms(fn, device),
                    gbps=gbps,
                    pct_of_copy=100 * gbps / roof.gbps,
                    max_abs_error=check["max_abs_error"],
                    rel_l2_error=check["rel_l2_error"],
                    passed=check["passed"],
                )
                size_rows.append(row)
                result.rows.append(row)
                s = series.setdefault(f"{chain_name} {variant}", {"name": f"{chain_name} {variant}", "x": [], "y": []})
                s["x"].append(rows * cols)
                s["y"].append(gbps)
            eager = next((r for r in size_rows if r["variant"] == "eager"), None)
            for r in size_rows:
                r["speedup_vs_eager"] = eager["median_ms"] / r["median_ms"] if eager else None
            del inputs, ref

    if "triton" in params.variants and not run_triton_here:
        prog(92, "Triton kernels under the interpreter (correctness only)")
        _triton_correctness_only(params, device, result)

    result.artifacts["plot"] = {
        "title": f"Achieved bandwidth, {params.dtype}",
        "x_label": "elements (rows x cols)",
        "x_scale": "log",
        "y_label": "GB/s (modelled bytes / median time)",
        "series": list(series.values()),
        "hlines": [{"name": "measured copy", "y": roof.gbps}],
    }
    result.elapsed_s = time.perf_counter() - t_start
    prog(100, "done")
    return result


def _triton_correctness_only(params: FusedParams, device: Device, result: Result) -> None:
    """No GPU (or no Triton): say so, and where Triton is installed run the kernels interpreted."""
    if triton is NO_TRITON:
        result.note("triton not installed: the hand-written kernels were not run")
        return
    from .interpret import run_interpreter

    if INTERPRETED:  # this process itself runs under TRITON_INTERPRET=1
        checks = check_triton_kernels(device.torch_device, params.dtype, params.chains)
    else:
        checks = run_interpreter("fused_vs_unfused", {"dtype": params.dtype, "chains": list(params.chains)})
    for c in checks:
        outcome = {k: v for k, v in c.items() if k not in ("name", "chain", "size")}
        result.add_check(c["name"] + " (interpreter)", outcome)
        result.rows.append(
            {
                "chain": c["chain"],
                "size": c["size"],
                "variant": "triton (interpreter)",
                "median_ms": None,
                "max_abs_error": c["max_abs_error"],
                "rel_l2_error": c["rel_l2_error"],
                "passed": c["passed"],
            }
        )
    result.note(
        "Triton kernels ran under TRITON_INTERPRET=1 (NumPy on the CPU, in a child process so this "
        "one's kernels stay compiled): correctness only, their time says nothing about speed"
    )


COLUMNS = (
    "chain",
    "size",
    "variant",
    "kernels",
    "aten_ops",
    "median_ms",
    "spread_pct",
    "wall_ms",
    "gbps",
    "pct_of_copy",
    "speedup_vs_eager",
    "max_abs_error",
    "passed",
)
