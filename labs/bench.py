"""Every lab at its default parameters: labs/experiments/NOTES.md's figures as ratios measured side by side.

    python -m labs.bench [--device auto|cuda|cpu] [--only attention] [--tables] [--json out.json]
                         [--cpu-threads N] [--cache-dir PATH]

Timings on shared machines are noisy, so each comparison here is a ratio of two numbers taken in
the same run, printed next to the absolute figures, the device, the library versions and the
timing method. A timing-honesty section re-times one kernel with an independent timer and
repeats the lab's own timer five times (NOTES.md, "How the labs measure": within 5%, spread <= 3%).
--cpu-threads (default 1) and --cache-dir (default ~/.cache/tilewise-labs) are what a worker takes
from LABS_CPU_THREADS and LABS_CACHE_DIR.
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
from labs.experiments.timing import measure, timing_method
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m labs.bench", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--device", default="auto")
    parser.add_argument("--only", action="append", choices=tuple(CATALOG), help="run only these labs")
    parser.add_argument("--tables", action="store_true", help="also print each lab's full table")
    parser.add_argument("--no-honesty", action="store_true", help="skip the timing-honesty re-timing")
    parser.add_argument("--json", metavar="PATH", help="write every result here")
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
    results, ok = {}, True
    for exp_id in args.only or CATALOG:
        t0 = time.perf_counter()
        results[exp_id] = result = run_experiment(
            exp_id,
            {},
            device=device,
            progress=lambda p, phase, e=exp_id: print(f"  [{e} {p:3d}%] {phase}", file=sys.stderr, flush=True),
        )
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
    if not args.no_honesty:
        print("\n== timing honesty")
        print(timing_honesty(device))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1, allow_nan=False)
        print(f"wrote {args.json}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
