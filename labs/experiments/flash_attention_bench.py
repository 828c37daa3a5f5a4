"""
Benchmark and tuning sweep for the FlashAttention kernels (on a GPU)
====================================================================

    python -m labs.experiments.flash_attention_bench [--sweep] [--variants tma,gluon] [--rounds 5]

Times the Triton kernel's variants (flash_attention.KERNEL_VARIANTS) and the Gluon kernel
(flash_attention_gluon.py, "gluon") next to PyTorch's SDPA flash and cuDNN backends, in one process
with the labs' timer (do_bench, L2 flushed before every call, median), each checked against a
float32 reference. By default each variant runs autotuned, as the attention lab calls it; --sweep
also times every configuration of SWEEP_CONFIGS, --configs a list of your own.

Then (--rounds) each variant and cuDNN are timed in alternation, round after round: a GPU's clock
drifts with its temperature over a long run, so only neighbours in time compare fairly. Compiling
dozens of configurations one after another takes minutes, so --jobs compiles them first in
parallel processes, which fill Triton's on-disk cache; the timing process then only loads them.
What these runs found is in NOTES.md.
"""

import argparse
import functools
import json
import multiprocessing
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from . import flash_attention_gluon as gluon_kernel
from .attention import check_rows, reference_rows
from .correctness import compare
from .device import get_device, library_versions
from .flash_attention import (
    KERNEL_VARIANTS,
    SMALL_CONFIGS,
    TUNED_CONFIGS,
    flash_attention,
    prepare,
    tma_available,
    usable_config,
)
from .timing import measure, timing_method

GLUON = "gluon"  # the Hopper kernel of flash_attention_gluon.py, benchmarked next to these variants

SWEEP_CONFIGS = {
    # (BLOCK_M, BLOCK_N, num_warps, num_stages[, maxnreg])
    128: [
        (128, 64, 8, 2),
        (128, 64, 8, 3),
        (128, 128, 8, 2),
        (128, 64, 4, 2),
        (128, 32, 4, 3),
        (64, 64, 4, 3),
        (64, 128, 4, 2),
        (128, 64, 8, 2, 128),
    ],
    64: [(128, 64, 4, 3), (128, 64, 8, 3), (128, 128, 8, 3), (64, 64, 4, 3), (128, 128, 4, 2), (128, 64, 4, 2)],
}


def _raise(exc):
    raise exc


def _compile_one(job):
    """Worker: compile one (variant, config, d, causal) by running it once on a small input whose
    sizes and strides share the large ones' divisibility (Triton specializes on that)."""
    variant, cfg, d, causal, heads = job
    try:
        q = torch.randn(1, heads, 256, d, device="cuda", dtype=torch.bfloat16)
        if variant == GLUON:
            gluon_kernel.flash_attention(q, q, q, causal, config=cfg)
        else:
            flash_attention(q, q, q, causal, config=cfg, **KERNEL_VARIANTS[variant])
        torch.cuda.synchronize()
        return None
    except Exception as exc:  # reported again, with the timing, by the parent
        return f"{variant} {cfg}: {str(exc).splitlines()[0][:200]}"


def precompile(jobs, workers: int) -> list[str]:
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        return [e for e in pool.map(_compile_one, jobs, chunksize=1) if e]


def bench(shapes, variants, configs_for=SWEEP_CONFIGS, rep_ms=100.0, autotuned=True, out=sys.stdout) -> list[dict]:
    """shapes: [(b, h, n, d, causal)]; variants: KERNEL_VARIANTS names. One row per timing: each
    variant at each of configs_for[d], and (autotuned=True) autotuned as the lab calls it."""
    device = get_device("cuda")
    rows = []

    def record(shape, name, fn, cfg, work, checked, ref):
        try:
            o = fn()
            check = compare(o[:, :, checked], ref, "bfloat16")
            t = measure(fn, device, rep_ms=rep_ms)
        except Exception as exc:  # a config that does not compile or fit: say so, go on
            rows.append({"shape": shape, "variant": name, "config": cfg, "error": str(exc).splitlines()[0][:200]})
            print(f"{shape:22s} {name:12s} {cfg!s:18s} FAILED {rows[-1]['error']}", file=out, flush=True)
            return
        tf = work / (t.median_ms * 1e-3) / 1e12
        rows.append(
            {
                "shape": shape,
                "variant": name,
                "config": cfg,
                "median_ms": t.median_ms,
                "spread_pct": t.spread_pct,
                "tflops": tf,
                "max_abs_error": check["max_abs_error"],
                "passed": check["passed"],
            }
        )
        print(
            f"{shape:22s} {name:12s} {cfg!s:18s} {t.median_ms:8.3f} ms {tf:6.1f} TFLOP/s "
            f"err {check['max_abs_error']:.1e} {'ok' if check['passed'] else 'FAIL'}",
            file=out,
            flush=True,
        )

    for b, h, n, d, causal in shapes:
        g = torch.Generator(device="cuda").manual_seed(n)
        q, k, v = (torch.randn(b, h, n, d, generator=g, device="cuda", dtype=torch.bfloat16) for _ in range(3))
        checked = check_rows(n, 256)  # spread over the sequence, the last row included
        ref = reference_rows(q, k, v, causal, checked)
        checked = checked.to(q.device)
        shape = f"N={n} d={d} {'causal' if causal else 'full'}"
        work = 4.0 * b * h * n * n * d / (2 if causal else 1)
        for backend, name in ((SDPBackend.FLASH_ATTENTION, "sdpa_flash"), (SDPBackend.CUDNN_ATTENTION, "sdpa_cudnn")):

            def sdpa(backend=backend, q=q, k=k, v=v, causal=causal):
                with sdpa_kernel(backend):
                    return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

            record(shape, name, sdpa, None, work, checked, ref)
        for name in variants:
            if name == GLUON:  # its own configurations; "default" is what the lab runs
                for cfg in gluon_kernel.SWEEP_CONFIGS if configs_for.get(d) else []:
                    record(
                        shape,
                        name,
                        functools.partial(gluon_kernel.flash_attention, q, k, v, causal, config=cfg),
                        cfg,
                        work,
                        checked,
                        ref,
                    )
                if autotuned:
                    record(shape, name, gluon_kernel.build(q, k, v, causal), "default", work, checked, ref)
                continue
            for cfg in configs_for.get(d, SMALL_CONFIGS):
                if usable_config(cfg, d, causal):
                    fn = functools.partial(flash_attention, q, k, v, causal, config=cfg, **KERNEL_VARIANTS[name])
                    record(shape, name, fn, cfg, work, checked, ref)
            if autotuned:  # as the lab calls it: autotuned over TUNED_CONFIGS
                try:
                    fn = prepare(q, k, v, causal, **KERNEL_VARIANTS[name])
                except Exception as exc:  # a config of the tuned list that does not fit this variant
                    fn = functools.partial(_raise, exc)
                record(shape, name, fn, "autotuned", work, checked, ref)
        del q, k, v
        torch.cuda.empty_cache()
    return rows


def paired(shapes, variants, rounds: int = 5, rep_ms: float = 100.0, out=sys.stdout) -> list[dict]:
    """Each variant (as the lab calls it) against SDPA cuDNN, timed in alternation: cuDNN, then each
    variant, repeated `rounds` times. A GPU's clock drifts with its temperature over a long run, so
    a kernel timed a minute after another can look a few percent slower for no reason of its own;
    the ratio taken within each round compares neighbours in time. Returns one row per variant
    and shape with the median of the per-round ratios and their range."""
    device = get_device("cuda")
    rows = []
    for b, h, n, d, causal in shapes:
        q, k, v = (torch.randn(b, h, n, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
        work = 4.0 * b * h * n * n * d / (2 if causal else 1)

        def cudnn(q=q, k=k, v=v, causal=causal):
            with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

        fns = {"sdpa_cudnn": cudnn}
        for name in variants:
            fns[name] = (
                gluon_kernel.build(q, k, v, causal)
                if name == GLUON
                else prepare(q, k, v, causal, **KERNEL_VARIANTS[name])
            )
        tflops = {name: [] for name in fns}
        for _ in range(rounds):
            for name, fn in fns.items():
                tflops[name].append(work / (measure(fn, device, rep_ms=rep_ms).median_ms * 1e-3) / 1e12)
        shape = f"N={n} d={d} {'causal' if causal else 'full'}"
        for name in variants:
            ratios = [a / c for a, c in zip(tflops[name], tflops["sdpa_cudnn"], strict=True)]
            row = {
                "shape": shape,
                "variant": name,
                "rounds": rounds,
                "tflops": statistics.median(tflops[name]),
                "cudnn_tflops": statistics.median(tflops["sdpa_cudnn"]),
                "ratio": statistics.median(ratios),
                "ratio_min": min(ratios),
                "ratio_max": max(ratios),
            }
            rows.append(row)
            print(
                f"{shape:22s} {name:8s} {row['tflops']:6.1f} TFLOP/s vs cuDNN {row['cudnn_tflops']:6.1f}: "
                f"{row['ratio']:.3f}x (rounds {row['ratio_min']:.3f}-{row['ratio_max']:.3f}, n={rounds})",
                file=out,
                flush=True,
            )
        del q, k, v, fns
        torch.cuda.empty_cache()
    return rows


def summary(rows) -> str:
    lines = ["best per shape and variant: TFLOP/s, and the ratio to SDPA cuDNN and SDPA flash from the same run"]
    for shape in dict.fromkeys(r["shape"] for r in rows):
        here = [r for r in rows if r["shape"] == shape and "tflops" in r and r["passed"]]
        base = {r["variant"]: r["tflops"] for r in here if r["variant"].startswith("sdpa")}
        best = {}
        for r in here:
            if r["variant"] not in best or r["tflops"] > best[r["variant"]]["tflops"]:
                best[r["variant"]] = r
        for name, r in best.items():
            ratios = "  ".join(f"{r['tflops'] / base[s]:.2f}x {s}" for s in ("sdpa_cudnn", "sdpa_flash") if s in base)
            lines.append(f"{shape:22s} {name:12s} {r['config']!s:18s} {r['tflops']:6.1f} TFLOP/s  {ratios}")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m labs.experiments.flash_attention_bench",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--sweep", action="store_true", help="every variant x SWEEP_CONFIGS, and autotuned (default: autotuned only)"
    )
    parser.add_argument("--seq-lens", default="4096,16384")
    parser.add_argument("--head-dims", default="128")
    parser.add_argument("--causal", default="false,true")
    parser.add_argument("--heads", type=int, default=32)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--variants", default="tma,gluon", help=", ".join([*KERNEL_VARIANTS, GLUON]))
    parser.add_argument("--configs", help="BMxBNxWARPSxSTAGES,... instead of the sweep's lists")
    parser.add_argument("--jobs", type=int, default=min(12, os.cpu_count() or 1), help="parallel compiles first")
    parser.add_argument("--rep-ms", type=float, default=100.0)
    parser.add_argument(
        "--rounds",
        type=int,
        default=5,
        help="then each variant against cuDNN in this many alternating rounds (0: skip)",
    )
    parser.add_argument("--json", help="write all rows here")
    args = parser.parse_args(argv)

    device = get_device("cuda")
    have = tma_available()
    print(f"# {device.describe()}\n# {library_versions()}\n# descriptors: {have}\n# {timing_method(device)}")
    variants = []
    for name in args.variants.split(","):
        if name == GLUON:
            why = gluon_kernel.available()
            if why:
                print(f"# {name}: not available here: {why}")
            else:
                variants.append(name)
            continue
        mode = KERNEL_VARIANTS[name]["mode"]
        if mode != "pointers" and not have.get(mode):
            print(f"# {name}: not available here")
        else:
            variants.append(name)
    head_dims = [int(x) for x in args.head_dims.split(",")]
    causals = [c.strip().lower() in ("1", "true", "yes") for c in args.causal.split(",")]
    shapes = [
        (args.batch, args.heads, n, d, c)
        for d in head_dims
        for n in map(int, args.seq_lens.split(","))
        for c in causals
    ]
    if args.configs:
        cfgs = [tuple(int(x) for x in c.split("x")) for c in args.configs.split(",")]
        configs_for = {d: cfgs for d in head_dims}
    elif args.sweep:
        configs_for = SWEEP_CONFIGS
    else:  # autotuned only, as the lab calls it
        configs_for = {d: [] for d in head_dims}
    autotuned = args.sweep or not args.configs
    if args.jobs > 1:
        triton_variants = [name for name in variants if name != GLUON]
        jobs = [
            (name, cfg, d, c, args.heads)
            for name in triton_variants
            for d in head_dims
            for c in causals
            for cfg in configs_for.get(d, SMALL_CONFIGS)
            if usable_config(cfg, d, c)
        ]
        if autotuned:
            jobs += [
                (name, cfg, d, c, args.heads)
                for name in triton_variants
                for d in head_dims
                for c in causals
                for cfg in TUNED_CONFIGS.get(d, SMALL_CONFIGS)
                if usable_config(cfg, d, c)
            ]
        if GLUON in variants:
            gluon_cfgs = (gluon_kernel.SWEEP_CONFIGS if configs_for.get(head_dims[0]) else []) + [None]
            jobs += [
                (GLUON, cfg, d, c, args.heads)
                for d in head_dims
                if d in gluon_kernel.HEAD_DIMS
                for c in causals
                for cfg in gluon_cfgs
            ]
        jobs = list(dict.fromkeys(jobs))
        t0 = time.perf_counter()
        errors = precompile(jobs, args.jobs)
        print(
            f"# compiled {len(jobs)} kernels on {args.jobs} processes in {time.perf_counter() - t0:.0f} s"
            f"{'; failed: ' + '; '.join(errors) if errors else ''}",
            flush=True,
        )
    rows = bench(shapes, variants, configs_for, rep_ms=args.rep_ms, autotuned=autotuned)
    print("\n" + summary(rows))
    pairs = []
    if args.rounds > 0:
        print(f"\npaired with cuDNN, {args.rounds} alternating rounds (median of the per-round ratios; range)")
        pairs = paired(shapes, variants, args.rounds, args.rep_ms)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {"device": device.describe(), "versions": library_versions(), "rows": rows, "paired": pairs},
                f,
                indent=1,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
