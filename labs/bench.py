"""Every lab at its default parameters: labs/experiments/NOTES.md's figures as ratios measured side by side.

    python -m labs.bench [--device auto|cuda|cpu] [--only attention] [--tables] [--json figures.json]
                         [--results all.json] [--no-probes] [--cpu-threads N] [--cache-dir PATH]

Timings on shared machines are noisy, so each comparison here is a ratio of two numbers taken in
the same run, printed next to the absolute figures, the device, the library versions and the
timing method. A timing-honesty section re-times one kernel with an independent timer and
repeats the lab's own timer five times (NOTES.md, "How the labs measure": within 5%, spread <= 3%).
--cpu-threads (default 1) and --cache-dir (default ~/.cache/tilewise-labs) are what a worker takes
from LABS_CPU_THREADS and LABS_CACHE_DIR.

--json writes the figures the course quotes (quizzes/content/<course>/figures.json): one named row
per figure, each with its value, unit, device, library versions and timing method. Where a size is
launch-bound the file holds both clocks, CUDA events (do_bench) and host wall-clock, as separate rows.
On a GPU, --json also runs a few probes that no lab covers (compile time, tensor-core rules, decode-
shaped matmuls, host wall-clock of the launch chain); --no-probes skips them. --results writes every
lab's full result instead.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import time

from labs.experiments import config
from labs.experiments.catalog import CATALOG, get_experiment
from labs.experiments.device import DTYPES, Device, cpu_threads, get_device, library_versions
from labs.experiments.report import fmt_value, format_result, format_table, versions_text
from labs.experiments.runner import run_experiment
from labs.experiments.timing import measure, sync, timing_method, wall_per_call_ms
from labs.experiments.triton_shim import NO_TRITON


def _by(rows: list[dict], *keys: str) -> dict:
    return {tuple(r.get(k) for k in keys): r for r in rows}


def fusion_table(result: dict) -> str:
    """One line per (chain, size): the three variants' times, their ratios to eager, % of the copy roof."""
    rows = [r for r in result["rows"] if r.get("median_ms") is not None]
    index = _by(rows, "chain", "size", "variant")
    out = []
    for chain, size in dict.fromkeys((r["chain"], r["size"]) for r in rows):
        line = {"chain": chain, "size": size}
        eager = index.get((chain, size, "eager"))
        for variant in ("eager", "compile", "triton"):
            r = index.get((chain, size, variant))
            if r is None:
                continue
            line[f"{variant}_ms"] = r["median_ms"]
            line[f"{variant}_wall_ms"] = r.get("wall_ms")
            line[f"{variant}_pct_copy"] = r["pct_of_copy"]
            line[f"{variant}_kernels"] = r.get("kernels")
            if eager and variant != "eager":
                line[f"speedup_{variant}"] = eager["median_ms"] / r["median_ms"]
        out.append(line)
    columns = (
        "chain",
        "size",
        "eager_ms",
        "compile_ms",
        "triton_ms",
        "speedup_compile",
        "speedup_triton",
        "eager_pct_copy",
        "compile_pct_copy",
        "triton_pct_copy",
        "eager_kernels",
        "compile_kernels",
        "triton_kernels",
    )
    roof = result["artifacts"]["copy_roof"]
    walls = ("chain", "size", "eager_wall_ms", "compile_wall_ms", "triton_wall_ms")
    return (
        f"copy roof {roof['gbps']:,.0f} GB/s ({roof['method']}); speedups are vs eager, same run\n"
        + format_table(out, columns)
        + "\nper call back to back on the host clock (host overhead included; matters at launch-bound sizes)\n"
        + format_table(out, walls)
    )


def launch_table(result: dict) -> str:
    index = _by(result["rows"], "length", "variant")
    out = []
    for length in dict.fromkeys(r["length"] for r in result["rows"]):
        eager, graph = index.get((length, "eager")), index.get((length, "graph"))
        line = {"length": length, "eager_us_per_kernel": eager["us_per_kernel"], "eager_kernels": eager.get("kernels")}
        if graph:
            line.update(
                graph_us_per_kernel=graph["us_per_kernel"],
                graph_kernels=graph.get("kernels"),
                speedup_graph=eager["median_ms"] / graph["median_ms"],
            )
        out.append(line)
    return format_table(
        out, ("length", "eager_us_per_kernel", "graph_us_per_kernel", "speedup_graph", "eager_kernels", "graph_kernels")
    )


def attention_table(result: dict) -> str:
    index = _by(result["rows"], "seq_len", "variant")
    out = []
    for r in result["rows"]:
        line = {"seq_len": r["seq_len"], "variant": r["variant"]}
        if r.get("skipped"):
            line["skipped"] = r["skipped"][:70]
        else:
            flash = index.get((r["seq_len"], "sdpa_flash"), {})
            line.update(
                median_ms=r["median_ms"],
                tflops=r["tflops"],
                peak_extra_gb=r.get("peak_extra_gb"),
                speedup_vs_naive=r.get("speedup_vs_naive"),
                speedup_vs_flash=flash["median_ms"] / r["median_ms"] if flash.get("median_ms") else None,
            )
        out.append(line)
    return format_table(
        out,
        (
            "seq_len",
            "variant",
            "median_ms",
            "tflops",
            "peak_extra_gb",
            "speedup_vs_naive",
            "speedup_vs_flash",
            "skipped",
        ),
    )


def trace_table(result: dict) -> str:
    """The byte model's totals at the run's N and across the sweep (the trace itself is for the UI)."""
    tr = result["artifacts"]["trace"]
    return (
        f"N={tr['seq_len']}, d={tr['head_dim']}, {tr['block_m']}x{tr['block_n']} tiles: {tr['steps_total']} steps "
        f"({tr['steps_stored']} stored)\n"
        + format_table(
            result["rows"], ("seq_len", "naive_bytes", "tiled_bytes", "compulsory_bytes", "naive_over_tiled")
        )
    )


def roofline_table(result: dict) -> str:
    return format_table(result["rows"], ("roof", "value", "unit", "median_ms", "spread_pct", "source"))


TABLES = {
    "fused_vs_unfused": fusion_table,
    "launch_overhead": launch_table,
    "attention": attention_table,
    "flash_tiling_trace": trace_table,
    "roofline": roofline_table,
}


def timing_honesty(device: Device) -> str:
    """The lab timer's median against an independent timer of the same callable, and its spread over 5 runs."""
    import torch

    from labs.experiments import fused_vs_unfused as fused

    if device.is_cuda:
        rows, cols, dtype = 16384, 8192, "bfloat16"
    else:
        rows, cols, dtype = 1024, 4096, "float32"
    lines = []
    for chain, variant in (("swiglu", "triton"), ("bias_gelu", "eager")):
        if variant == "triton" and (not device.is_cuda or fused.triton is NO_TRITON):
            continue
        c = fused.CHAIN_TABLE[chain]
        inputs = fused.make_inputs(chain, rows, cols, DTYPES[dtype], device.torch_device, seed=99)
        fn = c.triton if variant == "triton" else c.eager
        fn = lambda fn=fn, inputs=inputs: fn(*inputs)  # noqa: E731
        if device.is_cuda:
            import triton.testing

            medians = [measure(fn, device).median_ms for _ in range(5)]
            independent = triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median")
            how = "triton.testing.do_bench(return_mode='median')"
        else:
            from torch.utils import benchmark

            with cpu_threads():  # as the labs time on a CPU
                medians = [measure(fn, device).median_ms for _ in range(5)]
                timer = benchmark.Timer("fn()", globals={"fn": fn}, num_threads=config.current().cpu_threads)
                independent = timer.blocked_autorange(min_run_time=0.5).median * 1e3
            how = "torch.utils.benchmark.Timer.blocked_autorange"
        med = statistics.median(medians)
        agree = 100 * abs(med - independent) / independent
        spread = 100 * (max(medians) - min(medians)) / med
        lines.append(
            f"{chain} {variant} {rows}x{cols} {dtype}: lab median {fmt_value('median_ms', med)}, "
            f"{how} {fmt_value('median_ms', independent)} (differ {agree:.1f}%, target <= 5%); "
            f"5 runs spread {spread:.1f}% (target <= 3%)"
        )
        del inputs, fn
        if device.is_cuda:
            torch.cuda.empty_cache()
    return "\n".join(lines)


# --- the course's figures (--json) ----------------------------------------------------------------
#
# One named row per figure the course quotes. Names are built from what was measured (chain, size,
# variant), never from the value, so a new measurement replaces a row instead of adding one.
# `decimals` is how the course prints the value; quizzes/course_files.py formats it.

H100_SXM_DENSE_BF16_TFLOPS = 989.4  # spec sheet, for "% of spec" only
H100_SXM_HBM_TBPS = 3.35  # spec sheet, likewise
LAUNCH_BOUND_ELEMENTS = 1 << 20  # up to here a size is timed in µs and quoted with both clocks

WALL_METHOD = (
    "host wall-clock (time.perf_counter) per call over back-to-back calls, synchronized once at the end: "
    "includes the host's own overhead (Python, dispatch, guards, launches)"
)


# The labs count kernels with torch.profiler right after timing; every eager launch after a profiler
# session in the same process costs the host more (on the H100, about 11 -> 15 µs per kernel). Big
# kernels hide it; launch-bound figures do not, so the probes below measure those before any profiler.
AFTER_PROFILER = (
    "; timed after torch.profiler sessions in this process (host cost per launch inflated: see the probe_* rows)"
)


def _events_method(device: Device) -> str:
    if device.is_cuda:
        return "CUDA events through triton.testing.do_bench, L2 flushed before every call; median per call"
    return "time.perf_counter around each call on the CPU; median per call"


def _fig(name: str, value: float | None, unit: str, decimals: int, method: str, what: str) -> dict | None:
    if value is None:
        return None
    return {"name": name, "value": float(value), "unit": unit, "decimals": decimals, "method": method, "what": what}


def fusion_figures(result: dict, device: Device) -> list[dict | None]:
    """Time, bandwidth, share of the copy roof, kernels and speedups of every (chain, size, variant) row."""
    events = _events_method(device)
    roof = result["artifacts"]["copy_roof"]
    out = [
        _fig("copy_roof_tbps", roof["gbps"] / 1e3, "TB/s", 2, f"{roof['method']}; {events}", "device copy bandwidth")
    ]
    if device.is_cuda and "H100" in device.name:
        out.append(
            _fig(
                "copy_roof_pct_of_spec",
                100 * roof["gbps"] / 1e3 / H100_SXM_HBM_TBPS,
                "%",
                0,
                f"copy roof / {H100_SXM_HBM_TBPS} TB/s (H100 SXM spec sheet)",
                "device copy bandwidth",
            )
        )
    rows = [r for r in result["rows"] if r.get("median_ms") is not None]
    index = _by(rows, "chain", "size", "variant")
    for r in rows:
        rows_n, cols_n = (int(x) for x in r["size"].split("x"))
        tiny = rows_n * cols_n <= LAUNCH_BOUND_ELEMENTS
        base = f"{r['chain']}_{r['size']}_{r['variant']}"
        what = f"{r['chain']} {r['size']} {result['params']['dtype']}, {r['variant']}"
        scale, unit, dec = (1e3, "µs", 1) if tiny else (1.0, "ms", 3)
        suffix = "us" if tiny else "ms"
        note = AFTER_PROFILER if tiny and device.is_cuda else ""
        bw = f"modelled minimum bytes ({r['bytes_min']}) / median; {events}"
        out += [
            _fig(f"{base}_{suffix}", r["median_ms"] * scale, unit, dec, events + note, what),
            _fig(
                f"{base}_wall_{suffix}", r.get("wall_ms") and r["wall_ms"] * scale, unit, dec, WALL_METHOD + note, what
            ),
            _fig(f"{base}_tbps", r["gbps"] / 1e3, "TB/s", 2, bw, what),
            _fig(f"{base}_pct_copy", r["pct_of_copy"], "%", 0, f"{bw}; over the copy roof of the same run", what),
            _fig(f"{base}_kernels", r.get("kernels"), "", 0, "torch.profiler: device kernels per call", what),
        ]
        if r["variant"] == "eager":
            moved = f"modelled eager bytes ({r['bytes_eager_model']}) / median; {events}"
            out.append(
                _fig(
                    f"{base}_dram_tbps", r["bytes_eager_model"] / (r["median_ms"] * 1e-3) / 1e12, "TB/s", 2, moved, what
                )
            )
            continue
        eager = index.get((r["chain"], r["size"], "eager"))
        if eager:
            out.append(
                _fig(
                    f"{base}_speedup",
                    eager["median_ms"] / r["median_ms"],
                    "×",
                    2,
                    f"eager / {r['variant']}, {events}",
                    what,
                )
            )
            if eager.get("wall_ms") and r.get("wall_ms"):
                out.append(
                    _fig(
                        f"{base}_over_eager_wall",
                        r["wall_ms"] / eager["wall_ms"],
                        "×",
                        1,
                        f"{r['variant']} / eager, {WALL_METHOD}",
                        what,
                    )
                )
        if r["variant"] == "triton" and (compiled := index.get((r["chain"], r["size"], "compile"))):
            out.append(
                _fig(
                    f"{base}_vs_compile",
                    compiled["median_ms"] / r["median_ms"],
                    "×",
                    2,
                    f"compile / triton, {events}",
                    what,
                )
            )
    return out


def launch_figures(result: dict, device: Device) -> list[dict | None]:
    events = _events_method(device) + (AFTER_PROFILER if device.is_cuda else "")
    out = []
    index = _by(result["rows"], "length", "variant")
    for (length, variant), r in index.items():
        what = f"a chain of {length} tiny ops (hidden {result['params']['hidden']}), {variant}"
        base = f"launch_{length}_{variant}"
        out += [
            _fig(
                f"{base}_us_per_kernel", r["us_per_kernel"], "µs", 2, f"{events}, divided by the ops in the chain", what
            ),
            _fig(f"{base}_call_us", r["median_ms"] * 1e3, "µs", 0, events, what),
            _fig(f"{base}_kernels", r.get("kernels"), "", 0, "torch.profiler: device kernels per call", what),
        ]
        eager = index.get((length, "eager"))
        if variant == "graph" and eager:
            out += [
                _fig(f"{base}_speedup", eager["median_ms"] / r["median_ms"], "×", 1, f"eager / graph, {events}", what),
                _fig(
                    f"{base}_saved_us",
                    (eager["median_ms"] - r["median_ms"]) * 1e3,
                    "µs",
                    0,
                    f"eager - graph per call, {events}",
                    what,
                ),
            ]
    return out


def attention_figures(result: dict, device: Device) -> list[dict | None]:
    events = _events_method(device)
    p = result["params"]
    out = []
    timed = [r for r in result["rows"] if r.get("median_ms") is not None]
    index = _by(timed, "seq_len", "variant")
    for r in timed:
        n, v = r["seq_len"], r["variant"]
        what = f"attention forward, B={p['batch']}, H={p['heads']}, N={n}, d={p['head_dim']}, {p['dtype']}, {v}"
        base = f"attention_{n}_{v}"
        out += [
            _fig(f"{base}_ms", r["median_ms"], "ms", 2, events, what),
            _fig(f"{base}_tflops", r["tflops"], "TFLOP/s", 0, f"4·B·H·N²·d / median; {events}", what),
            _fig(
                f"{base}_peak_gb",
                r.get("peak_extra_gb"),
                "GB",
                2,
                "torch.cuda.max_memory_allocated during one call minus before it",
                what,
            ),
        ]
        naive, flash, cudnn = (index.get((n, name)) for name in ("naive", "sdpa_flash", "sdpa_cudnn"))
        if naive and v != "naive":
            out.append(
                _fig(f"{base}_vs_naive", naive["median_ms"] / r["median_ms"], "×", 1, f"naive / {v}, {events}", what)
            )
        if flash and v != "sdpa_flash":
            out.append(
                _fig(
                    f"{base}_vs_flash", flash["median_ms"] / r["median_ms"], "×", 2, f"SDPA flash / {v}, {events}", what
                )
            )
        if cudnn and v != "sdpa_cudnn":
            out.append(
                _fig(f"{base}_vs_cudnn", cudnn["median_ms"] / r["median_ms"], "×", 2, f"cuDNN / {v}, {events}", what)
            )
    return out


def roofline_figures(result: dict, device: Device) -> list[dict | None]:
    roofs = result["artifacts"]["roofs"]
    what = f"{roofs['compute_dtype']} {roofs['matmul_size']}³ matmul"
    tflops = roofs["compute_flops_per_s"] / 1e12
    name = f"matmul_{roofs['compute_dtype'].replace('bfloat16', 'bf16')}_{roofs['matmul_size']}"
    out = [
        _fig(f"{name}_tflops", tflops, "TFLOP/s", 0, roofs["compute_method"], what),
        _fig(f"{name}_ms", roofs["compute_timing"]["median_ms"], "ms", 2, roofs["compute_method"], what),
        _fig(
            "ridge_measured_flop_per_byte",
            roofs["ridge_flop_per_byte"],
            "FLOP/byte",
            0,
            "compute roof / bandwidth roof, both measured in this run",
            "the measured ridge point",
        ),
    ]
    if device.is_cuda and "H100" in device.name and roofs["compute_dtype"] == "bfloat16":
        out.append(
            _fig(
                f"{name}_pct_of_spec",
                100 * tflops / H100_SXM_DENSE_BF16_TFLOPS,
                "%",
                0,
                f"measured / {H100_SXM_DENSE_BF16_TFLOPS} TFLOP/s dense bf16 (H100 SXM spec sheet)",
                what,
            )
        )
    return out


FIGURES = {
    "fused_vs_unfused": fusion_figures,
    "launch_overhead": launch_figures,
    "attention": attention_figures,
    "roofline": roofline_figures,
}


# Probes: measurements the course quotes that no lab makes. GPU only; each one on its own, so a
# probe that cannot run here (no FP8 on this GPU, say) costs only its own rows.


def compile_probe(device: Device) -> list[dict | None]:
    """torch.compile's cold first call, the same with warm on-disk caches, a recompile, and a steady call.

    Runs before any lab, with fresh Inductor and Triton cache folders, so "cold" means cold.
    """
    import os
    import tempfile

    import torch
    import torch.nn.functional as F

    def gate(a, b):
        return F.silu(a) * b

    def timed_first_call(fn, *args) -> float:
        sync(device)
        t0 = time.perf_counter()
        fn(*args)
        sync(device)
        return time.perf_counter() - t0

    from torch._inductor.runtime.cache_dir_utils import temporary_cache_dir

    saved_triton = os.environ.get("TRITON_CACHE_DIR")
    with tempfile.TemporaryDirectory() as tmp, temporary_cache_dir(f"{tmp}/inductor"):
        os.environ["TRITON_CACHE_DIR"] = f"{tmp}/triton"
        try:
            a, b = (torch.randn(4096, 8192, device=device.torch_device, dtype=torch.bfloat16) for _ in range(2))
            gate(a, b)
            torch._dynamo.reset()
            compiled = torch.compile(gate, dynamic=False)
            cold = timed_first_call(compiled, a, b)
            steady = wall_per_call_ms(lambda: compiled(a, b), device)
            torch._dynamo.reset()
            again = torch.compile(gate, dynamic=False)
            warm = timed_first_call(again, a, b)
            recompile = timed_first_call(again, a[:2048].contiguous(), b[:2048].contiguous())
        finally:
            if saved_triton is None:
                os.environ.pop("TRITON_CACHE_DIR", None)
            else:
                os.environ["TRITON_CACHE_DIR"] = saved_triton
            torch._dynamo.reset()
    what = "torch.compile(dynamic=False) of silu(a) * b on 4096x8192 bf16"
    first = "host wall-clock of the first call, synchronized"
    return [
        _fig("compile_cold_first_call_s", cold, "s", 1, f"{first}; empty Inductor and Triton caches", what),
        _fig(
            "compile_warm_cache_first_call_s",
            warm,
            "s",
            2,
            f"{first}; after torch._dynamo.reset(), caches on disk",
            what,
        ),
        _fig("compile_new_shape_first_call_s", recompile, "s", 1, f"{first} at 2048x8192: a recompile", what),
        _fig("compile_steady_wall_us", steady * 1e3, "µs", 0, WALL_METHOD, what),
    ]


def tensor_core_probe(device: Device) -> list[dict | None]:
    """One 8192³ matmul under different rules: bf16 aligned and with K = 8190, fp32 with and without TF32, FP8."""
    import torch

    n, dev = 8192, device.torch_device
    events = _events_method(device)

    def tflops(a, b, **kw) -> float:
        fn = (lambda: torch._scaled_mm(a, b, **kw)) if kw else (lambda: torch.mm(a, b))
        return 2 * a.shape[0] * a.shape[1] * b.shape[1] / (measure(fn, device).median_ms * 1e-3) / 1e12

    a = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
    b = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
    k = n - 2  # rows of 8190 bf16 elements: 16380 bytes, not a multiple of 16
    out = [
        _fig("matmul_bf16_8192_probe_tflops", tflops(a, b), "TFLOP/s", 0, events, "bf16 8192³, aligned"),
        _fig(
            "matmul_bf16_k8190_tflops",
            tflops(a[:, :k].contiguous(), b[:k].contiguous()),
            "TFLOP/s",
            0,
            events,
            "bf16 (8192 x 8190) @ (8190 x 8192): K not a multiple of 8",
        ),
    ]
    before = torch.backends.cuda.matmul.allow_tf32
    try:
        for allow, name in ((False, "fp32"), (True, "tf32")):
            torch.backends.cuda.matmul.allow_tf32 = allow
            what = f"fp32 8192³, TF32 {'on' if allow else 'off'}"
            out.append(_fig(f"matmul_{name}_8192_tflops", tflops(a.float(), b.float()), "TFLOP/s", 0, events, what))
    finally:
        torch.backends.cuda.matmul.allow_tf32 = before
    try:
        one = torch.ones((), device=dev, dtype=torch.float32)
        a8 = a.to(torch.float8_e4m3fn)
        b8 = b.t().contiguous().to(torch.float8_e4m3fn).t()  # column-major, as _scaled_mm wants
        fp8 = tflops(a8, b8, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
        out.append(_fig("matmul_fp8_8192_tflops", fp8, "TFLOP/s", 0, events, "FP8 e4m3 8192³ (torch._scaled_mm)"))
    except Exception as exc:  # noqa: BLE001 - no FP8 tensor cores here: no row
        print(f"  fp8 matmul skipped: {type(exc).__name__}: {exc}", file=sys.stderr)
    return out + tensor_core_derived({r["name"]: r for r in out}, events)


def tensor_core_derived(rows: dict[str, dict], events: str) -> list[dict | None]:
    """Ratios and times that follow from the tensor-core probe's throughputs (2·n³ FLOP per 8192³ matmul)."""
    flop = 2 * 8192**3
    out = []
    for name in ("fp32", "tf32", "fp8"):
        if (r := rows.get(f"matmul_{name}_8192_tflops")) is not None:
            out.append(_fig(f"matmul_{name}_8192_ms", flop / (r["value"] * 1e12) * 1e3, "ms", 2, events, r["what"]))
    fp32, tf32 = rows.get("matmul_fp32_8192_tflops"), rows.get("matmul_tf32_8192_tflops")
    bf16, odd = rows.get("matmul_bf16_8192_probe_tflops"), rows.get("matmul_bf16_k8190_tflops")
    if fp32 and tf32:
        out.append(
            _fig(
                "matmul_tf32_over_fp32",
                tf32["value"] / fp32["value"],
                "×",
                1,
                f"TF32 / FP32 throughput, {events}",
                "fp32 8192³, TF32 on vs off",
            )
        )
    if bf16 and odd:
        out.append(
            _fig(
                "matmul_bf16_k8190_pct_of_aligned",
                100 * odd["value"] / bf16["value"],
                "%",
                0,
                f"K=8190 / aligned throughput, {events}",
                "bf16 8192³ vs inner dimension 8190",
            )
        )
    return out


def decode_gemm_probe(device: Device) -> list[dict | None]:
    """A decode-shaped matmul (B tokens x an 8192x8192 weight): bf16 at several B, and FP8 weights."""
    import torch

    n, dev = 8192, device.torch_device
    events = _events_method(device)
    w = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
    out, times = [], {}
    for batch in (1, 16, 64, 256):
        x = torch.randn(batch, n, device=dev, dtype=torch.bfloat16)
        times[batch] = measure(lambda x=x: torch.mm(x, w), device).median_ms
        what = f"({batch} x 8192) @ (8192 x 8192) bf16: a decode step's projection at batch {batch}"
        out.append(_fig(f"decode_gemm_bf16_b{batch}_us", times[batch] * 1e3, "µs", 1, events, what))
    weight_bytes = n * n * 2
    out.append(
        _fig(
            "decode_gemm_bf16_b1_tbps",
            weight_bytes / (times[1] * 1e-3) / 1e12,
            "TB/s",
            2,
            f"weight bytes ({weight_bytes}) / median; {events}",
            "batch-1 decode projection, weight read rate",
        )
    )
    try:
        x8 = torch.randn(16, n, device=dev, dtype=torch.bfloat16).to(torch.float8_e4m3fn)
        w8 = w.t().contiguous().to(torch.float8_e4m3fn).t()
        one = torch.ones((), device=dev, dtype=torch.float32)
        t8 = measure(
            lambda: torch._scaled_mm(x8, w8, scale_a=one, scale_b=one, out_dtype=torch.bfloat16), device
        ).median_ms
        what = "(16 x 8192) @ (8192 x 8192) with FP8 e4m3 weights and activations (torch._scaled_mm)"
        out += [
            _fig("decode_gemm_fp8_b16_us", t8 * 1e3, "µs", 1, events, what),
            _fig("decode_gemm_fp8_b16_speedup", times[16] / t8, "×", 1, f"bf16 / fp8 at batch 16, {events}", what),
        ]
    except Exception as exc:  # noqa: BLE001
        print(f"  fp8 decode matmul skipped: {type(exc).__name__}: {exc}", file=sys.stderr)
    return out


def tiny_fusion_probe(device: Device, rows: int = 64, cols: int = 8192) -> list[dict | None]:
    """The launch-bound SwiGLU, eager vs compiled vs hand-written, on both clocks, before any profiler runs.

    The labs count kernels with torch.profiler after timing, and later launches in the same process
    then carry the profiler's per-launch cost; at a launch-bound size that moves the figures. This
    probe runs first, so its host clock is clean.
    """
    import torch

    from labs.experiments import fused_vs_unfused as fused

    chain = fused.CHAIN_TABLE["swiglu"]
    a, b = fused.make_inputs("swiglu", rows, cols, torch.bfloat16, device.torch_device, seed=5)
    fns = {"eager": lambda: chain.eager(a, b)}
    compiled = torch.compile(chain.eager, dynamic=False)
    fns["compile"] = lambda: compiled(a, b)
    if device.is_cuda and fused.triton is not NO_TRITON:
        fns["triton"] = lambda: chain.triton(a, b)
    events = _events_method(device)
    what = f"SwiGLU silu(a) * b, {rows}x{cols} bf16 (launch-bound)"
    out, times = [], {}
    for variant, fn in fns.items():
        fn()
        sync(device)
        times[variant] = (measure(fn, device).median_ms * 1e3, wall_per_call_ms(fn, device) * 1e3)
        base = f"probe_swiglu_{rows}x{cols}_{variant}"
        out += [
            _fig(f"{base}_events_us", times[variant][0], "µs", 1, events, f"{what}, {variant}"),
            _fig(f"{base}_wall_us", times[variant][1], "µs", 1, WALL_METHOD, f"{what}, {variant}"),
        ]
    for variant in ("compile", "triton"):
        if variant in times:
            for k, (clock, method) in enumerate((("events", events), ("wall", WALL_METHOD))):
                out.append(
                    _fig(
                        f"probe_swiglu_{rows}x{cols}_{variant}_over_eager_{clock}",
                        times[variant][k] / times["eager"][k],
                        "×",
                        1,
                        f"{variant} / eager, {method}",
                        what,
                    )
                )
    return out


def launch_probe(device: Device, length: int = 200, hidden: int = 1024) -> list[dict | None]:
    """The launch lab's chain on both clocks before any profiler has run, then its kernels' own GPU time."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    from labs.experiments.launch_overhead import capture_graph, make_chain

    chain, _, x = make_chain(length, hidden, torch.float32, device.torch_device)
    replay, _ = capture_graph(chain, x)
    events = _events_method(device)
    what = f"a chain of {length} tiny ops (hidden {hidden}, float32)"
    per_kernel = {}
    out = []
    for variant, fn in (("eager", lambda: chain(x)), ("graph", replay)):
        per_kernel[variant] = (
            measure(fn, device).median_ms * 1e3 / length,
            wall_per_call_ms(fn, device) * 1e3 / length,
        )
        base = f"probe_launch_{length}_{variant}"
        out += [
            _fig(f"{base}_events_us_per_kernel", per_kernel[variant][0], "µs", 2, events, f"{what}, {variant}"),
            _fig(f"{base}_wall_us_per_kernel", per_kernel[variant][1], "µs", 2, WALL_METHOD, f"{what}, {variant}"),
        ]
    for k, (clock, method) in enumerate((("events", events), ("wall", WALL_METHOD))):
        out += [
            _fig(
                f"probe_launch_{length}_graph_speedup_{clock}",
                per_kernel["eager"][k] / per_kernel["graph"][k],
                "×",
                1,
                f"eager / graph, {method}",
                what,
            ),
            _fig(
                f"probe_launch_{length}_graph_saved_{clock}_us",
                (per_kernel["eager"][k] - per_kernel["graph"][k]) * length,
                "µs",
                0,
                f"(eager - graph) per call, {method}",
                what,
            ),
        ]
    chain(x)
    sync(device)
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(5):
            chain(x)
        sync(device)
    kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    avg_kernel = sum(e.time_range.elapsed_us() for e in kernels) / max(1, len(kernels))
    out += [
        _fig(
            f"probe_launch_{length}_eager_avg_kernel_us",
            avg_kernel,
            "µs",
            1,
            "torch.profiler: mean device duration of the chain's kernels",
            f"{what}, eager",
        ),
        _fig(
            f"probe_launch_{length}_eager_gpu_busy_pct",
            100 * avg_kernel / per_kernel["eager"][1],
            "%",
            0,
            "mean kernel duration (profiler) / host wall-clock per kernel",
            f"{what}, eager: the share of the timeline a kernel is running",
        ),
        _fig(
            f"probe_launch_{length}_eager_after_profiler_wall_us_per_kernel",
            wall_per_call_ms(lambda: chain(x), device) * 1e3 / length,
            "µs",
            2,
            f"{WALL_METHOD}; after a torch.profiler session in the same process",
            f"{what}, eager",
        ),
    ]
    return out


# Order matters: the compile probe needs a process that has compiled nothing, and the launch-bound
# probes a process whose launches no profiler has touched yet.
PROBES = (compile_probe, tiny_fusion_probe, launch_probe, tensor_core_probe, decode_gemm_probe)


def figures_document(device: Device, versions: dict, rows: list[dict | None], *, command: str) -> dict:
    """The --json file: where and how it was measured, then one row per figure (each naming both again)."""
    import datetime

    clean = [r for r in rows if r is not None]
    names = [r["name"] for r in clean]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"duplicate figure names: {', '.join(dupes)}")
    return {
        "about": "Figures the course quotes by name ({{fig:NAME}}); quizzes/content/FORMAT.md says how.",
        "written_by": command,
        "measured_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "re_measured": True,
        "device": device.describe(),
        "versions": {k: v for k, v in versions.items() if v},
        "methods": {"events": timing_method(device), "wall": WALL_METHOD},
        "figures": [{**r, "device": device.describe(), "versions": versions_text(versions)} for r in clean],
    }


def write_figures(doc: dict, path: str) -> None:
    """JSON with one figure per line, so that a re-measurement reads as a diff of the rows that moved."""
    head = {k: v for k, v in doc.items() if k != "figures"}
    text = json.dumps(head, indent=1, ensure_ascii=False, allow_nan=False)[:-2]
    rows = ",\n".join("  " + json.dumps(r, ensure_ascii=False, allow_nan=False) for r in doc["figures"])
    with open(path, "w", encoding="utf-8") as f:
        f.write(f'{text},\n "figures": [\n{rows}\n ]\n}}\n')


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m labs.bench", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--device", default="auto")
    parser.add_argument("--only", action="append", choices=tuple(CATALOG), help="run only these labs")
    parser.add_argument("--tables", action="store_true", help="also print each lab's full table")
    parser.add_argument("--no-honesty", action="store_true", help="skip the timing-honesty re-timing")
    parser.add_argument("--json", metavar="PATH", help="write the course's figures here (one named row each)")
    parser.add_argument("--results", metavar="PATH", help="write every lab's full result here")
    parser.add_argument("--no-probes", action="store_true", help="with --json on a GPU: skip the probes")
    parser.add_argument("--cpu-threads", type=int, metavar="N", help="torch threads of CPU-form runs (default 1)")
    parser.add_argument(
        "--cache-dir", metavar="PATH", help="roofline calibration cache (default ~/.cache/tilewise-labs)"
    )
    args = parser.parse_args(argv)
    if args.cpu_threads is not None and args.cpu_threads < 1:
        parser.error("--cpu-threads must be at least 1")
    with config.configured(cpu_threads=args.cpu_threads, cache_dir=args.cache_dir):
        return _bench(args)


def _bench(args: argparse.Namespace) -> int:
    device = get_device(args.device)
    if not device.is_cuda:  # the labs pin their thread count on a CPU; describe what they run with
        device = dataclasses.replace(device, torch_threads=config.current().cpu_threads)
    print(f"device: {device.describe()}")
    print(f"versions: {versions_text(library_versions())}")
    print(f"method: {timing_method(device)}", flush=True)
    figures: list[dict | None] = []
    if args.json and device.is_cuda and not args.no_probes:
        # The compile probe first: it needs a process that has compiled nothing yet.
        figures += _run_probes(device)
    results, ok = {}, True
    for exp_id in args.only or CATALOG:
        t0 = time.perf_counter()
        try:
            results[exp_id] = result = run_experiment(
                exp_id,
                {},
                device=device,
                progress=lambda p, phase, e=exp_id: print(f"  [{e} {p:3d}%] {phase}", file=sys.stderr, flush=True),
            )
        except Exception as exc:  # noqa: BLE001 - one broken lab must not lose the others' figures
            ok = False
            print(f"\n== {exp_id} FAILED: {type(exc).__name__}: {exc}", flush=True)
            continue
        checks = result["checks"]
        ok &= checks["passed"]
        print(
            f"\n== {CATALOG[exp_id].title} ({exp_id}, section {CATALOG[exp_id].section}), "
            f"{time.perf_counter() - t0:.1f} s, checks {'passed' if checks['passed'] else 'FAILED'}"
            + (f", max abs error {checks['max_abs_error']:.1e}" if checks["max_abs_error"] is not None else "")
        )
        print(TABLES[exp_id](result))
        for note in result["notes"]:
            print(f"note: {note}")
        if args.tables:
            print("\n" + format_result(result, get_experiment(exp_id).columns))
        sys.stdout.flush()
        if exp_id in FIGURES:
            figures += FIGURES[exp_id](result, device)
    if not args.no_honesty:
        print("\n== timing honesty")
        print(timing_honesty(device))
    if args.results:
        with open(args.results, "w") as f:
            json.dump(results, f, indent=1, allow_nan=False)
        print(f"wrote {args.results}")
    if args.json:
        doc = figures_document(
            device, library_versions(), figures, command="python -m labs.bench " + " ".join(sys.argv[1:])
        )
        write_figures(doc, args.json)
        print(f"wrote {len(doc['figures'])} figures to {args.json}")
    return 0 if ok else 1


def _run_probes(device: Device) -> list[dict | None]:
    rows: list[dict | None] = []
    for probe in PROBES:
        t0 = time.perf_counter()
        try:
            found = probe(device)
        except Exception as exc:  # noqa: BLE001 - a probe that cannot run here costs only its rows
            print(f"== probe {probe.__name__} FAILED: {type(exc).__name__}: {exc}", flush=True)
            continue
        print(f"== probe {probe.__name__}, {time.perf_counter() - t0:.1f} s", flush=True)
        for r in found:
            if r is not None:
                print(f"  {r['name']} = {r['value']:.4g} {r['unit']}", flush=True)
        rows += found
    return rows


if __name__ == "__main__":
    sys.exit(main())
