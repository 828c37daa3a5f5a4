"""
The roofline: where each kernel sits against the device's limits
================================================================

A kernel does `flops` floating-point operations and moves `bytes` between device memory and the
chip. Its arithmetic intensity AI = flops / bytes says which limit it meets first: the time to
move the bytes at the device's bandwidth B, or the time to do the arithmetic at its peak P. The
attainable throughput is min(P, AI * B); the AI where the two meet, P / B, is the ridge point.
Left of it a kernel is memory-bound (only fewer bytes make it faster), right of it compute-bound.

This lab measures the two roofs on the device it runs on, as a calibration cached per device:
the bandwidth roof is the copy roof the other labs use (a large clone(), bytes read + written over
the median time), the compute roof a large matmul (bf16 8192^3 on a GPU, float32 on a CPU). Then
`place(points, roofs)` puts measured kernels on the chart, and `points_from_result(result)` turns
a finished lab run of the other experiments into such points through their byte and FLOP models.

This module imports torch only inside the functions that measure, so the web process can call
place, points_from_result, roofline_view and cached_roofs to draw the roofline of any finished run.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import math
import os
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import config
from .catalog import RooflineParams  # torch-free: parameters, bounds
from .params import ITEMSIZE

if TYPE_CHECKING:
    from .device import Device
    from .result import ProgressFn, Result

LOW_PCT = 10.0  # a kernel below this % of its roof is held back by something other than the roofs

# %%
# The calibration cache: one JSON file per device and library versions.


def cache_dir() -> Path:
    """config.py's cache folder (LABS_CACHE_DIR on a worker, --cache-dir on the command line)."""
    return config.current().cache_dir or config.default_cache_dir()


def cache_key(device: Mapping, versions: Mapping, matmul_size: int, dtype: str) -> dict:
    """What a calibration depends on: the device, the library versions and the compute roof's matmul."""
    key = {
        "device": device["name"],
        "kind": device["kind"],
        "capability": device.get("capability"),
        "memory_bytes": device.get("memory_bytes"),
        "torch": versions.get("torch"),
        "cuda": versions.get("cuda"),
        "triton": versions.get("triton"),
        "matmul_size": matmul_size,
        "dtype": dtype,
    }
    if device["kind"] != "cuda":
        key["torch_threads"] = device.get("torch_threads")
    return key


def cache_path(key: Mapping) -> Path:
    digest = hashlib.sha1(json.dumps(key, sort_keys=True).encode()).hexdigest()[:12]
    slug = re.sub(r"[^a-z0-9]+", "-", str(key["device"]).lower()).strip("-")[:40]
    return cache_dir() / f"roofline-{slug}-{digest}.json"


def load_cached(key: Mapping) -> dict | None:
    try:
        data = json.loads(cache_path(key).read_text())
    except (OSError, ValueError):
        return None
    return data if data.get("key") == dict(key) else None


def store(roofs: Mapping) -> Path:
    """Write atomically (a temporary file renamed over the target): two workers may calibrate at once."""
    path = cache_path(roofs["key"])
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(roofs, indent=1, allow_nan=False))
    os.replace(tmp, path)
    return path


def cached_roofs(device_name: str | None = None, kind: str | None = None) -> list[dict]:
    """Every cached calibration (of one device, if named), newest first: for drawing a finished run's roofline."""
    found = []
    for path in cache_dir().glob("roofline-*.json"):
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if (device_name is None or data.get("device") == device_name) and (kind is None or data.get("kind") == kind):
            found.append(data)
    return sorted(found, key=lambda d: d.get("measured_at", ""), reverse=True)


# %%
# Measuring the roofs (torch from here on, imported inside the functions).


def measure_roofs(device: Device, matmul_size: int, dtype: str, *, fresh_copy_roof: bool = False) -> dict:
    """The bandwidth roof (copy_roof.copy_roof) and the compute roof (an n x n x n matmul), as a roofs dict."""
    import torch

    from .copy_roof import copy_roof
    from .timing import timing_method

    copy = copy_roof(device, fresh=fresh_copy_roof)  # copy_roof keeps one measurement per process
    n = matmul_size
    timing = _matmul_timing(device, n, dtype)
    flops = 2.0 * n**3
    peak = flops / (timing.median_ms * 1e-3)
    bw = copy.gbps * 1e9
    if device.is_cuda:
        torch.cuda.empty_cache()
    tf32 = device.is_cuda and dtype == "float32" and torch.backends.cuda.matmul.allow_tf32
    compute_method = (
        f"torch.mm of two {n}x{n} {dtype} matrices into a preallocated output"
        f"{' (TF32 allowed)' if tf32 else ''}: 2*n^3 FLOP over the median time; " + timing_method(device)
    )
    return {
        "device": device.name,
        "kind": device.kind,
        "description": device.describe(),
        "measured_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "bandwidth_bytes_per_s": bw,
        "bandwidth_gbps": copy.gbps,
        "bandwidth_method": copy.method,
        "bandwidth_timing": copy.timing.to_dict(),
        "compute_flops_per_s": peak,
        "compute_tflops": peak / 1e12,
        "compute_dtype": dtype,
        "matmul_size": n,
        "compute_method": compute_method,
        "compute_timing": timing.to_dict(),
        "ridge_flop_per_byte": peak / bw,
    }


def _matmul_timing(device: Device, n: int, dtype: str):
    """Median time of C = A @ B (n x n, random, into a preallocated C); the tensors die with the call."""
    import torch

    from .device import torch_dtype
    from .timing import measure

    g = torch.Generator(device=device.torch_device).manual_seed(0)
    a = torch.randn(n, n, generator=g, device=device.torch_device).to(torch_dtype(dtype))
    b = torch.randn(n, n, generator=g, device=device.torch_device).to(torch_dtype(dtype))
    c = torch.empty_like(a)
    return measure(lambda: torch.mm(a, b, out=c), device)


def calibrate(device: Device, params: RooflineParams, progress: ProgressFn | None = None) -> tuple[dict, dict]:
    """The device's roofs from the cache, or measured and cached; returns (roofs, cache info)."""
    from .device import library_versions

    key = cache_key(device.to_dict(), library_versions(), params.matmul_size, params.dtype)
    path = cache_path(key)
    if not params.recalibrate:
        cached = load_cached(key)
        if cached is not None:
            return cached, {"hit": True, "path": str(path)}
    if progress:
        progress(10, f"measuring the bandwidth and compute roofs (matmul {params.matmul_size}^3 {params.dtype})")
    roofs = {**measure_roofs(device, params.matmul_size, params.dtype, fresh_copy_roof=params.recalibrate), "key": key}
    info = {"hit": False, "path": str(path)}
    try:
        store(roofs)
    except OSError as exc:  # a read-only home: the run still reports the roofs, uncached
        info["error"] = f"{type(exc).__name__}: {exc}"
    return roofs, info


# %%
# Placing kernels on the roofline (pure arithmetic, no torch).


def _fmt_rate(flops_per_s: float) -> str:
    for unit, size in (("PFLOP/s", 1e15), ("TFLOP/s", 1e12), ("GFLOP/s", 1e9), ("MFLOP/s", 1e6)):
        if flops_per_s >= size:
            return f"{flops_per_s / size:.3g} {unit}"
    return f"{flops_per_s:.3g} FLOP/s"


def _fmt_bw(bytes_per_s: float) -> str:
    return f"{bytes_per_s / 1e12:.3g} TB/s" if bytes_per_s >= 1e12 else f"{bytes_per_s / 1e9:.3g} GB/s"


def _point(p: Any) -> dict:
    if isinstance(p, Mapping):
        return dict(p)
    name, flops, nbytes, seconds = p
    return {"name": name, "flops": flops, "bytes": nbytes, "seconds": seconds}


def place(points: Iterable[Sequence | Mapping], roofs: Mapping) -> list[dict]:
    """Each measured kernel against the roofs.

    points: (name, flops, bytes, seconds) tuples or dicts with those keys (other keys are kept).
    roofs: a calibration (`bandwidth_bytes_per_s`, `compute_flops_per_s`), e.g. a roofline run's
    artifacts["roofs"]. Returns, per point: arithmetic_intensity (FLOP/byte), achieved_flops_per_s
    and achieved_bytes_per_s, attainable_flops_per_s = min(peak, AI * bandwidth), bound ("memory"
    if AI < ridge point, else "compute"), pct_of_roof (achieved over the roof that bounds it) and
    a one-sentence verdict. A point without positive bytes and seconds raises ValueError.
    """
    bw, peak = float(roofs["bandwidth_bytes_per_s"]), float(roofs["compute_flops_per_s"])
    ridge = peak / bw
    out = []
    for raw in points:
        p = _point(raw)
        flops, nbytes, seconds = float(p["flops"]), float(p["bytes"]), float(p["seconds"])
        if not (nbytes > 0 and seconds > 0 and flops >= 0):
            raise ValueError(f"{p.get('name')}: needs flops >= 0, bytes > 0 and seconds > 0")
        ai = flops / nbytes
        achieved, achieved_bw = flops / seconds, nbytes / seconds
        attainable = min(peak, ai * bw)
        bound = "memory" if ai < ridge else "compute"
        # On the sloped roof achieved/attainable = (flops/s) / (AI * B) = (bytes/s) / B, which also
        # holds for a kernel that does no arithmetic at all (a copy).
        pct = 100 * (achieved_bw / bw if bound == "memory" else achieved / peak)
        if bound == "memory":
            verdict = (
                f"{p['name']} is memory-bound: at {ai:.3g} FLOP/byte it sits left of the ridge point "
                f"({ridge:.3g} FLOP/byte), so the bandwidth roof caps it at {_fmt_rate(attainable)}; it moves "
                f"{_fmt_bw(achieved_bw)}, {pct:.0f}% of the {_fmt_bw(bw)} roof"
            )
        else:
            verdict = (
                f"{p['name']} is compute-bound: at {ai:.3g} FLOP/byte it sits right of the ridge point "
                f"({ridge:.3g} FLOP/byte), so the compute roof caps it at {_fmt_rate(peak)}; it reaches "
                f"{_fmt_rate(achieved)}, {pct:.0f}% of that roof"
            )
        if pct < LOW_PCT:
            verdict += (
                ", so far below it that something else holds it back (launch overhead, latency, too little parallelism)"
            )
        elif pct > 105:
            verdict += (
                ", above the roof: its bytes model counts traffic a cache served, or the roof was "
                "measured under other conditions"
            )
        out.append(
            {
                **p,
                "flops": flops,
                "bytes": nbytes,
                "seconds": seconds,
                "arithmetic_intensity": ai,
                "achieved_flops_per_s": achieved,
                "achieved_tflops": achieved / 1e12,
                "achieved_bytes_per_s": achieved_bw,
                "achieved_gbps": achieved_bw / 1e9,
                "attainable_flops_per_s": attainable,
                "pct_of_roof": pct,
                "bound": bound,
                "ridge_flop_per_byte": ridge,
                "verdict": verdict + ".",
            }
        )
    return out


# %%
# Points from the other labs' results, through their byte and FLOP models. Rows without a time
# (skipped, interpreter-only) give no point.

# FLOP per element of each element-wise chain, transcendental functions (erf, exp) counted as one.
CHAIN_FLOPS = {
    "bias_gelu": (6, "x + b, then 0.5 * v * (1 + erf(v / sqrt(2))): 6 per element"),
    "swiglu": (3, "silu(a) * b = a * sigmoid(a) * b: 3 per element (sigmoid as one)"),
    "residual_layernorm": (8, "x + r, mean, subtract, square and sum, scale by rstd, * w + b: 8 per element"),
}
FUSED_ATTENTION_BYTES = (
    "fused kernel: Q, K, V read once and O written once, 4*B*H*N*d*s (the K/V re-reads of a tiled kernel served by L2)"
)
NAIVE_ATTENTION_BYTES = (
    "attention.naive_attention, kernel by kernel: Q K^T reads Q, K and writes S (s); "
    ".float() reads S, writes float32 (skipped for float32); scale, [mask], softmax each read "
    "and write float32; .to(dtype) reads float32, writes s (skipped for float32); P V reads "
    "P, V and writes O"
)
MATH_ATTENTION_BYTES = (
    "unfused lower bound: read Q, K; write S; read S; write P; read P, V; write O, with S and "
    "P in the input type: 4*B*H*N^2*s + 4*B*H*N*d*s"
)


def naive_attention_bytes(b: int, h: int, n: int, d: int, s: int, causal: bool) -> int:
    nn, qkv = b * h * n * n, b * h * n * d * s
    total = 2 * qkv + nn * s  # Q K^T
    if s != 4:
        total += nn * s + nn * 4  # .float()
    total += 2 * nn * 4  # * scale, in place
    if causal:
        total += 2 * nn * 4 + n * n  # masked_fill_ with an N x N bool mask
    total += 2 * nn * 4  # softmax
    if s != 4:
        total += nn * 4 + nn * s  # .to(dtype)
    return total + nn * s + 2 * qkv  # P V


def _attention_points(result: Mapping) -> list[dict]:
    prm = result["params"]
    b, h, d, s, causal = prm["batch"], prm["heads"], prm["head_dim"], ITEMSIZE[prm["dtype"]], prm["causal"]
    points = []
    for i, row in enumerate(result.get("rows", [])):
        if row.get("median_ms") is None or not row.get("flops"):
            continue
        n, variant = row["seq_len"], row["variant"]
        if variant == "naive":
            nbytes, model = naive_attention_bytes(b, h, n, d, s, causal), NAIVE_ATTENTION_BYTES
        elif variant == "sdpa_math":
            nbytes, model = 4 * b * h * n * n * s + 4 * b * h * n * d * s, MATH_ATTENTION_BYTES
        else:  # every fused variant, those registered later (the course's own kernel) included
            nbytes, model = 4 * b * h * n * d * s, FUSED_ATTENTION_BYTES
        points.append(
            {
                "name": f"attention {variant} N={n}",
                "flops": row["flops"],
                "bytes": nbytes,
                "seconds": row["median_ms"] * 1e-3,
                "experiment": "attention",
                "row": i,
                "flops_model": "4*B*H*N^2*d (halved when causal)",
                "bytes_model": model,
            }
        )
    return points


def _fused_points(result: Mapping) -> list[dict]:
    points = []
    for i, row in enumerate(result.get("rows", [])):
        if row.get("median_ms") is None or row.get("chain") not in CHAIN_FLOPS or not row.get("elements"):
            continue
        per_element, flops_model = CHAIN_FLOPS[row["chain"]]
        eager = row["variant"] == "eager"
        nbytes = row.get("bytes_eager_model") if eager else row.get("bytes_min")
        if not nbytes:
            continue
        points.append(
            {
                "name": f"{row['chain']} {row['variant']} {row['size']}",
                "flops": per_element * row["elements"],
                "bytes": nbytes,
                "seconds": row["median_ms"] * 1e-3,
                "experiment": "fused_vs_unfused",
                "row": i,
                "flops_model": flops_model,
                "bytes_model": "the eager traffic model (every intermediate a round trip)"
                if eager
                else "each input read once, the output written once",
            }
        )
    return points


def _launch_points(result: Mapping) -> list[dict]:
    prm = result["params"]
    hidden, s = prm["hidden"], ITEMSIZE[prm["dtype"]]
    points = []
    for i, row in enumerate(result.get("rows", [])):
        if row.get("median_ms") is None or not row.get("length"):
            continue
        length = row["length"]
        tanhs = length // 3  # ops cycle multiply, add, tanh
        nbytes = (length - tanhs) * 3 * hidden * s + tanhs * 2 * hidden * s
        points.append(
            {
                "name": f"chain of {length} ops, {row['variant']}",
                "flops": length * hidden,
                "bytes": nbytes,
                "seconds": row["median_ms"] * 1e-3,
                "experiment": "launch_overhead",
                "row": i,
                "flops_model": "one FLOP per element per op (tanh counted as one)",
                "bytes_model": "multiply and add read x and a parameter vector and write x (3*hidden*s); "
                "tanh reads and writes x (2*hidden*s)",
            }
        )
    return points


POINT_EXTRACTORS = {
    "attention": _attention_points,
    "fused_vs_unfused": _fused_points,
    "launch_overhead": _launch_points,
}


def points_from_result(result: Mapping) -> list[dict]:
    """Roofline points (name, flops, bytes, seconds and the models behind them) from a finished lab's result."""
    extract = POINT_EXTRACTORS.get(result.get("experiment"))
    return extract(result) if extract else []


# %%
# The chart


def roofline_plot(roofs: Mapping, placed: Sequence[Mapping] = (), title: str | None = None) -> dict:
    """The roof lines (log-log) and, as one-point series, each placed kernel; units follow the peak."""
    bw, peak = float(roofs["bandwidth_bytes_per_s"]), float(roofs["compute_flops_per_s"])
    ridge = peak / bw
    unit, size = ("TFLOP/s", 1e12) if peak >= 1e12 else ("GFLOP/s", 1e9)
    ais = [p["arithmetic_intensity"] for p in placed if p["arithmetic_intensity"] > 0]
    x0 = 2.0 ** math.floor(math.log2(min([ridge / 256, *ais])))
    x1 = 2.0 ** math.ceil(math.log2(max([ridge * 16, *ais])))
    series = [
        {"name": f"bandwidth roof ({_fmt_bw(bw)})", "x": [x0, ridge], "y": [x0 * bw / size, peak / size]},
        {
            "name": f"compute roof ({' '.join(filter(None, (_fmt_rate(peak), roofs.get('compute_dtype'))))})",
            "x": [ridge, x1],
            "y": [peak / size, peak / size],
        },
    ]
    for p in placed:
        if p["arithmetic_intensity"] > 0 and p["achieved_flops_per_s"] > 0:
            series.append(
                {"name": p["name"], "x": [p["arithmetic_intensity"]], "y": [p["achieved_flops_per_s"] / size]}
            )
    return {
        "title": title or f"Roofline: {roofs.get('device', '')} (ridge {ridge:.3g} FLOP/byte)",
        "x_label": "arithmetic intensity (FLOP/byte)",
        "y_label": f"{unit}",
        "x_log": True,
        "y_log": True,
        "series": series,
    }


def roofline_view(result: Mapping, roofs: Mapping) -> dict:
    """Everything the roofline view of a finished run needs: the roofs, its placed kernels and the chart."""
    placed = place(points_from_result(result), roofs)
    plot = roofline_plot(roofs, placed, title=f"{result.get('experiment')} on the roofline")
    return {"roofs": dict(roofs), "points": placed, "plot": plot}


# %%
# The run


def run(params: RooflineParams, progress: ProgressFn | None = None, device: Device | None = None) -> Result:
    from .device import pinned_cpu_threads

    return pinned_cpu_threads(_run)(params, progress, device)


def _run(params: RooflineParams, progress: ProgressFn | None, device: Device) -> Result:
    from .result import Progress, new_result

    t_start = time.perf_counter()
    prog = Progress(progress)
    prog(2, "looking for a cached calibration")
    roofs, cache = calibrate(device, params, prog)
    how = f"loaded the calibration of {roofs['measured_at']}" if cache["hit"] else "measured"
    result = new_result(
        "roofline",
        params,
        device,
        f"bandwidth roof: {roofs['bandwidth_method']}. Compute roof: {roofs['compute_method']}. "
        f"Ridge point = compute roof / bandwidth roof. Cached per device and library versions; "
        f"this run {how}.",
    )
    bt, ct = roofs["bandwidth_timing"], roofs["compute_timing"]
    unit, size = ("TFLOP/s", 1e12) if roofs["compute_flops_per_s"] >= 1e12 else ("GFLOP/s", 1e9)
    source = f"cache ({roofs['measured_at']})" if cache["hit"] else "measured now"
    result.rows = [
        {
            "roof": "bandwidth (copy)",
            "value": roofs["bandwidth_gbps"],
            "unit": "GB/s",
            "median_ms": bt["median_ms"],
            "spread_pct": bt["spread_pct"],
            "source": source,
        },
        {
            "roof": f"compute ({roofs['compute_dtype']} matmul {roofs['matmul_size']}^3)",
            "value": roofs["compute_flops_per_s"] / size,
            "unit": unit,
            "median_ms": ct["median_ms"],
            "spread_pct": ct["spread_pct"],
            "source": source,
        },
        {
            "roof": "ridge point",
            "value": roofs["ridge_flop_per_byte"],
            "unit": "FLOP/byte",
            "median_ms": None,
            "spread_pct": None,
            "source": source,
        },
    ]
    result.artifacts["roofs"] = roofs
    result.artifacts["cache"] = cache
    result.artifacts["plot"] = roofline_plot(roofs)
    result.note(
        f"Kernels with arithmetic intensity below {roofs['ridge_flop_per_byte']:.3g} FLOP/byte are "
        f"memory-bound on this device, above it compute-bound."
    )
    if cache["hit"]:
        result.note(
            f"Calibration loaded from {cache['path']} (measured {roofs['measured_at']}); run with "
            f"recalibrate=true to measure again."
        )
    if cache.get("error"):
        result.note(f"The calibration could not be cached: {cache['error']}")
    if not device.is_cuda:
        result.note(
            f"CPU roofs with {device.torch_threads} torch thread(s), as the CPU labs run: a float32 matmul "
            f"and a 64 MiB copy, not a GPU's figures."
        )
    result.elapsed_s = time.perf_counter() - t_start
    prog(100, "done")
    return result


COLUMNS = ("roof", "value", "unit", "median_ms", "spread_pct", "source")
