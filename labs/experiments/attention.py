"""
Attention: materialized scores vs fused kernels
===============================================

Naive attention computes the whole N x N score matrix, writes it to memory, reads it back for the
softmax, writes the probabilities and reads them again for the product with V. Its memory grows
with N squared, and so does its traffic. FlashAttention tiles the computation so that scores live
only in on-chip memory, one block at a time, with an online softmax: memory grows with N and the
time is set by the arithmetic.

This lab times naive attention against PyTorch's scaled_dot_product_attention backends (flash,
cuDNN, memory-efficient, math; each where this device and dtype have it) and the `flash-attn`
package where it is installed, across sequence lengths: time, TFLOP/s, extra memory at the peak,
and the error against a float32 reference. Runs that would not fit in memory are skipped with
the reason. Variants live in a registry, so another implementation (the course's own Triton
FlashAttention) can add itself with `register_variant`.
"""

import importlib.util
import time
import warnings
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from .catalog import AttentionParams, flops, use_attention_registry  # torch-free parameters
from .correctness import compare
from .device import DTYPES, Device, get_device, pinned_cpu_threads
from .params import ITEMSIZE, human_bytes
from .result import Progress, ProgressFn, Result, new_result
from .timing import measure, sync, timing_method

# %%
# Variants: a registry, so that a later implementation registers itself without touching run().


@dataclass(frozen=True)
class AttentionVariant:
    """One way to compute softmax(Q K^T / sqrt(d)) V on (batch, heads, N, d) tensors.

    build(q, k, v, causal) returns a callable that returns the output as (batch, heads, N, d)
    (a view is fine). unavailable(device, dtype) returns a reason or None. context() is entered
    around the first call and the timing (SDPA's backend choice). peak_bytes estimates the extra
    memory at the peak, to skip runs that would not fit instead of crashing. cpu_check(params), where
    given, runs on a CPU for a variant that cannot be timed there (a Triton kernel under the
    interpreter) and returns correctness checks (compare()'s fields plus name, shape).
    """

    name: str
    title: str
    build: Callable[..., Callable[[], torch.Tensor]]
    unavailable: Callable[[Device, str], str | None] = lambda device, dtype: None
    context: Callable[[], AbstractContextManager] = nullcontext
    peak_bytes: Callable[[int, int, int, int, int], int] | None = None  # (batch, heads, n, d, itemsize)
    cpu_check: Callable[["AttentionParams"], list[dict]] | None = None


VARIANTS: dict[str, AttentionVariant] = {}


def register_variant(variant: AttentionVariant) -> AttentionVariant:
    VARIANTS[variant.name] = variant
    return variant


# %%
# Naive attention: every intermediate a full (batch, heads, N, N) tensor in memory. The softmax
# runs in float32, as a careful naive implementation does for stability; that is where most of
# its memory goes.


def naive_attention(q, k, v, causal: bool, mask: torch.Tensor | None = None) -> torch.Tensor:
    scores = torch.matmul(q, k.transpose(-2, -1))  # (B, H, N, N) in the input dtype
    scores = scores.float().mul_(q.shape[-1] ** -0.5)
    if causal:
        scores.masked_fill_(mask, float("-inf"))
    probs = torch.softmax(scores, dim=-1).to(q.dtype)
    return torch.matmul(probs, v)


def _build_naive(q, k, v, causal):
    n = q.shape[-2]
    mask = torch.ones(n, n, dtype=torch.bool, device=q.device).triu_(1) if causal else None
    return lambda: naive_attention(q, k, v, causal, mask)


def _naive_peak(b, h, n, d, s):
    # float32 scores and float32 probabilities alive together, then the probabilities in dtype.
    return b * h * n * n * (8 + (s if s < 4 else 0)) + b * h * n * d * s


register_variant(AttentionVariant("naive", "naive (scores materialized)", _build_naive, peak_bytes=_naive_peak))


# %%
# PyTorch's SDPA backends, each forced with sdpa_kernel. A backend that cannot run this device,
# dtype or shape raises "No available kernel" and warns why; the warning becomes the reason.

_SDPA = {
    "sdpa_flash": ("FLASH_ATTENTION", "SDPA flash (FlashAttention-2)"),
    "sdpa_cudnn": ("CUDNN_ATTENTION", "SDPA cuDNN"),
    "sdpa_efficient": ("EFFICIENT_ATTENTION", "SDPA memory-efficient"),
    "sdpa_math": ("MATH", "SDPA math (unfused)"),
}


def _sdpa_variant(name: str, backend_name: str, title: str) -> AttentionVariant:
    from torch.nn.attention import SDPBackend, sdpa_kernel

    backend = getattr(SDPBackend, backend_name, None)

    def build(q, k, v, causal):
        return lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    def unavailable(device, dtype):
        if backend is None:
            return f"this torch has no SDPBackend.{backend_name}"
        if not device.is_cuda and backend_name in ("CUDNN_ATTENTION", "EFFICIENT_ATTENTION"):
            return "needs a CUDA GPU (PyTorch has no CPU kernel for this backend)"
        return None

    # The math backend materializes the scores like naive attention does.
    peak = _naive_peak if backend_name == "MATH" else None
    return AttentionVariant(name, title, build, unavailable, context=lambda: sdpa_kernel(backend), peak_bytes=peak)


for _name, (_backend, _title) in _SDPA.items():
    register_variant(_sdpa_variant(_name, _backend, _title))


# %%
# The flash-attn package (Tri Dao's kernels), where installed. It wants (batch, N, heads, d).

FLASH_ATTN_MISSING = "flash-attn not installed: PyTorch's built-in FlashAttention-2 backend (sdpa_flash) stood in"


def _build_flash_attn(q, k, v, causal):
    from flash_attn import flash_attn_func

    qt, kt, vt = (t.transpose(1, 2).contiguous() for t in (q, k, v))
    return lambda: flash_attn_func(qt, kt, vt, causal=causal).transpose(1, 2)


def _flash_attn_unavailable(device, dtype):
    if importlib.util.find_spec("flash_attn") is None:
        return FLASH_ATTN_MISSING
    if not device.is_cuda:
        return "flash-attn needs a CUDA GPU"
    if dtype not in ("bfloat16", "float16"):
        return "flash-attn runs bf16 and fp16 only"
    return None


register_variant(AttentionVariant("flash_attn", "flash-attn package", _build_flash_attn, _flash_attn_unavailable))

# %%
# The course's own FlashAttention forward in Triton (flash_attention.py). On a CPU it is not timed:
# its kernel runs under the Triton interpreter in a child process, for correctness only.

from . import flash_attention as _triton_flash  # noqa: E402

register_variant(
    AttentionVariant(
        "triton_flash",
        "Tilewise Triton FlashAttention",
        _triton_flash.build,
        _triton_flash.unavailable,
        cpu_check=_triton_flash.cpu_check,
    )
)

# The same algorithm for Hopper in Gluon, Triton's lower-level language (flash_attention_gluon.py):
# warp-specialized, asynchronous tensor-core work. Hopper GPUs only; nothing to check on a CPU.
from . import flash_attention_gluon as _gluon_flash  # noqa: E402

register_variant(
    AttentionVariant(
        "gluon_flash", "Tilewise FlashAttention for Hopper (Gluon)", _gluon_flash.build, _gluon_flash.unavailable
    )
)

# From here on AttentionParams defaults to and accepts this registry's names, later registrations
# included; before this module is imported it knows the built-ins by name only.
use_attention_registry(VARIANTS)


# %%
# The float32 reference, on a subset of query rows at large N: the full reference would itself
# need the N x N matrix this lab is about. Rows are spread over the sequence, the last included.


def check_rows(n: int, max_rows: int = 1024) -> torch.Tensor:
    if n <= max_rows:
        return torch.arange(n)
    return torch.linspace(0, n - 1, max_rows).round().long().unique()


def reference_rows(q, k, v, causal: bool, rows: torch.Tensor) -> torch.Tensor:
    previous = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("highest")  # no TF32 in the reference
    try:
        kf, vf = k.float(), v.float()
        b, h, n, d = q.shape
        rows = rows.to(q.device)
        chunk = max(1, (512 * 2**20) // (b * h * n * 4))
        outs = []
        for start in range(0, len(rows), chunk):
            r = rows[start : start + chunk]
            scores = q[:, :, r].float() @ kf.transpose(-2, -1) * d**-0.5
            if causal:
                keys = torch.arange(n, device=q.device)
                scores.masked_fill_(keys[None, :] > r[:, None], float("-inf"))
            outs.append(torch.softmax(scores, dim=-1) @ vf)
        return torch.cat(outs, dim=2)
    finally:
        torch.set_float32_matmul_precision(previous)


# %%
# Memory


def free_bytes(device: Device) -> int:
    if device.is_cuda:
        free, _ = torch.cuda.mem_get_info(device.index)
        # Memory the caching allocator holds but no tensor uses is free to us too.
        return free + torch.cuda.memory_reserved(device.index) - torch.cuda.memory_allocated(device.index)
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return device.memory_bytes


def skip_reason(variant: AttentionVariant, p: "AttentionParams", n: int, free: int) -> str | None:
    """Why this run would not fit, or None: decided before running, so nothing crashes."""
    if variant.peak_bytes is None:
        return None
    need = variant.peak_bytes(p.batch, p.heads, n, p.head_dim, ITEMSIZE[p.dtype])
    if need > 0.95 * free:
        return (
            f"needs about {human_bytes(need)} for the {p.batch}x{p.heads}x{n}x{n} scores, only {human_bytes(free)} free"
        )
    return None


def _measure_peak(fn, device: Device):
    """Run once; return (output, extra bytes allocated at the peak, output included)."""
    if not device.is_cuda:
        return fn(), None
    sync(device)
    torch.cuda.reset_peak_memory_stats(device.index)
    base = torch.cuda.memory_allocated(device.index)
    out = fn()
    sync(device)
    return out, torch.cuda.max_memory_allocated(device.index) - base


def _first_call(variant: AttentionVariant, fn, device: Device):
    """First call under the variant's context, turning 'cannot run here' into a reason."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            return _measure_peak(fn, device), None
        except torch.cuda.OutOfMemoryError:
            return None, "out of memory"
        except (RuntimeError, NotImplementedError, ValueError) as exc:
            why = [
                str(w.message).splitlines()[0]
                for w in caught
                if "kernel not used because" in str(w.message) or "not supported" in str(w.message).lower()
            ]
            return None, "; ".join(why[:3]) or str(exc).splitlines()[0][:300]


# %%
# Measurement


@pinned_cpu_threads
def run(params: AttentionParams, progress: ProgressFn | None = None, device: Device | None = None) -> Result:
    """Each variant at each N: median time, TFLOP/s, peak extra memory, error vs float32."""
    device = device or get_device()
    t_start = time.perf_counter()
    prog = Progress(progress)
    dtype = DTYPES[params.dtype]
    b, h, d = params.batch, params.heads, params.head_dim
    result = new_result(
        "attention",
        params,
        device,
        timing_method(device) + ". TFLOP/s = 4*B*H*N^2*d (halved "
        "when causal) / median time; peak extra memory = torch.cuda.max_memory_allocated during "
        "one call minus what was allocated before it (output included); errors against a "
        "float32 reference on up to 1024 query rows spread over the sequence.",
    )
    unavailable: dict[str, str] = {}
    for name in params.variants:
        reason = VARIANTS[name].unavailable(device, params.dtype)
        if reason:
            unavailable[name] = reason
            result.note(reason if reason == FLASH_ATTN_MISSING else f"{name}: {reason}")

    plot = {name: {"name": name, "x": [], "y": []} for name in params.variants}
    mem_plot = {name: {"name": name, "x": [], "y": []} for name in params.variants}
    steps = len(params.seq_lens) * len(params.variants)
    for ni, n in enumerate(params.seq_lens):
        g = torch.Generator(device=device.torch_device).manual_seed(ni)
        q, k, v = (torch.randn(b, h, n, d, generator=g, device=device.torch_device, dtype=dtype) for _ in range(3))
        rows = check_rows(n)
        ref = reference_rows(q, k, v, params.causal, rows)
        work = flops(b, h, n, d, params.causal)
        naive_ms = None
        for vi, name in enumerate(params.variants):
            prog(3 + 95 * (ni * len(params.variants) + vi) / steps, f"N={n}: {name}")
            variant = VARIANTS[name]
            row = {"seq_len": n, "variant": name, "flops": work}
            reason = unavailable.get(name) or skip_reason(variant, params, n, free_bytes(device))
            if reason is None:
                fn = variant.build(q, k, v, params.causal)
                with variant.context():
                    first, reason = _first_call(variant, fn, device)
                    if first is not None:
                        out, peak = first
                        check = compare(out[:, :, rows.to(out.device)], ref, params.dtype)
                        del out
                        result.add_check(f"{name} N={n}", check)
                        timing = measure(fn, device)
            if reason is not None:
                row["skipped"] = reason
                result.rows.append(row)
                if device.is_cuda:
                    torch.cuda.empty_cache()
                continue
            naive_ms = timing.median_ms if name == "naive" else naive_ms
            tflops = work / (timing.median_ms * 1e-3) / 1e12
            row.update(
                median_ms=timing.median_ms,
                q25_ms=timing.q25_ms,
                q75_ms=timing.q75_ms,
                spread_pct=timing.spread_pct,
                reps=timing.reps,
                tflops=tflops,
                peak_extra_bytes=peak,
                peak_extra_gb=peak / 1e9 if peak is not None else None,
                max_abs_error=check["max_abs_error"],
                rel_l2_error=check["rel_l2_error"],
                passed=check["passed"],
            )
            result.rows.append(row)
            plot[name]["x"].append(n)
            plot[name]["y"].append(tflops)
            if peak is not None:
                mem_plot[name]["x"].append(n)
                mem_plot[name]["y"].append(peak / 1e9)
        for row in result.rows:
            if row["seq_len"] == n and "median_ms" in row:
                row["speedup_vs_naive"] = naive_ms / row["median_ms"] if naive_ms else None
        del q, k, v, ref
    skipped: dict[tuple[str, str], list[str]] = {}
    for row in result.rows:
        if row.get("skipped") and row["variant"] not in unavailable:
            skipped.setdefault((row["variant"], row["skipped"]), []).append(str(row["seq_len"]))
    for (name, reason), ns in skipped.items():
        result.note(f"{name} skipped at N={', '.join(ns)}: {reason}")
    if not device.is_cuda:
        _cpu_checks(params, device, result)
    result.artifacts["plot"] = {
        "title": f"Attention throughput, {params.dtype}, d={d}, {h} heads",
        "x_label": "sequence length N",
        "x_scale": "log",
        "y_label": "TFLOP/s",
        "series": [s for s in plot.values() if s["x"]],
    }
    if device.is_cuda:
        result.artifacts["memory_plot"] = {
            "title": "Extra memory at the peak",
            "x_label": "sequence length N",
            "x_scale": "log",
            "y_label": "GB",
            "series": [s for s in mem_plot.values() if s["x"]],
        }
    result.elapsed_s = time.perf_counter() - t_start
    prog(100, "done")
    return result


def _cpu_checks(params: AttentionParams, device: Device, result: Result) -> None:
    """Variants that cannot be timed on a CPU but can be checked there (rows without a time)."""
    for name in params.variants:
        variant = VARIANTS[name]
        checks = variant.cpu_check(params) if variant.cpu_check and variant.unavailable(device, params.dtype) else []
        for c in checks:
            outcome = {k: c[k] for k in ("max_abs_error", "rel_l2_error", "atol", "rtol", "passed")}
            result.add_check(f"{c['name']} (interpreter)", outcome)
            # "skipped" holds why there is no time (tables show it; nothing plots the row).
            result.rows.append(
                {
                    "seq_len": c["shape"][2],
                    "variant": f"{name} (interpreter)",
                    **outcome,
                    "skipped": "not timed: correctness only, under the Triton interpreter",
                }
            )
        if checks:
            result.note(
                f"{name}: checked under TRITON_INTERPRET=1 (NumPy on the CPU, in a child process): "
                "correctness only, its time says nothing about speed"
            )


COLUMNS = (
    "seq_len",
    "variant",
    "median_ms",
    "spread_pct",
    "tflops",
    "peak_extra_gb",
    "speedup_vs_naive",
    "max_abs_error",
    "passed",
    "skipped",
)
