"""Choosing the fused kernels' launch configurations on a device, and the table they are kept in.

    python -m labs.experiments.fused_tuning --show [--device-name "NVIDIA H200"]   # what a device uses
    python -m labs.experiments.fused_tuning --sweep                 # every candidate, % of the copy roof
    python -m labs.experiments.fused_tuning --sweep --write         # and keep the best in fused_configs.json

The sweep times each chain's Triton kernel (bias+GELU, SwiGLU, residual+LayerNorm) at the lab's
large size, 16384 x 8192 bf16, under every candidate configuration, as the lab times it (timing.py:
CUDA events, cache flushed between calls, median), and divides its modelled bytes per second by the
copy bandwidth measured in the same process (copy_roof.py). It prints one table per chain, best
first, marks the configuration the device uses now, and writes the best of each chain as JSON (to
stdout, or --json PATH); --write stores them as this device's entry in fused_configs.json.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from .fused_configs import CHAINS, TABLE_PATH, launch_table, table_key, with_entry

CANDIDATES: dict[str, list[dict]] = {
    "bias_gelu": [
        {"tile": tile, "block_n": bn, "warps": w}
        for bn in (256, 512, 1024, 2048)
        for tile in (2048, 4096, 8192, 16384)
        for w in (4, 8, 16)
        if tile >= bn
    ],
    "swiglu": [{"block": b, "warps": w} for b in (1024, 2048, 4096, 8192, 16384) for w in (4, 8, 16)],
    "residual_layernorm": [{"tile": tile, "warps": w} for tile in (8192, 16384, 32768) for w in (None, 4, 8, 16, 32)],
}


def table_entry_key(device_name: str) -> str:
    """The entry a sweep on this device writes: its model ("NVIDIA H200" -> "H200"), else the whole name."""
    match = re.search(r"\b([A-Z]{1,3}\d{2,4}[A-Za-z]?)\b", device_name.replace("NVIDIA", ""))
    return match.group(1) if match else device_name


def sweep(chains=CHAINS, size: tuple[int, int] = (16384, 8192), dtype: str = "bfloat16") -> dict:
    """Time every candidate of each chain on this process's GPU; returns rows, the best of each and the device."""
    from . import fused_vs_unfused as fused
    from .copy_roof import copy_roof
    from .device import DTYPES, get_device, library_versions
    from .params import ITEMSIZE
    from .timing import measure

    device = get_device("cuda")
    roof = copy_roof(device)
    rows, cols = size
    launchers = {
        "bias_gelu": lambda cfg: fused.bias_gelu_config(rows, cols, cfg=cfg),
        "swiglu": lambda cfg: fused.swiglu_config(rows * cols, cfg=cfg),
        "residual_layernorm": lambda cfg: fused.layernorm_config(rows, cols, cfg=cfg),
    }
    current = launch_table(device.name)
    results: list[dict] = []
    best: dict[str, dict] = {}
    for chain_name in chains:
        chain = fused.CHAIN_TABLE[chain_name]
        inputs = fused.make_inputs(chain_name, rows, cols, DTYPES[dtype], device.torch_device, seed=7)
        nbytes = chain.min_bytes(rows, cols, ITEMSIZE[dtype])
        candidates = list(CANDIDATES[chain_name])
        if current[chain_name] not in candidates:
            candidates.append(current[chain_name])
        for cfg in candidates:
            launch = launchers[chain_name](cfg)
            try:
                t = measure(lambda launch=launch, c=chain, i=inputs: c.triton(*i, config=launch), device, rep_ms=100)
            except Exception as exc:  # noqa: BLE001 - e.g. out of registers or shared memory: say so, go on
                print(f"{chain_name} {cfg}: skipped, {type(exc).__name__}: {str(exc)[:120]}", file=sys.stderr)
                continue
            gbps = nbytes / (t.median_ms * 1e-3) / 1e9
            row = {
                "chain": chain_name,
                "config": cfg,
                "launch": list(launch),
                "median_ms": t.median_ms,
                "gbps": gbps,
                "pct_of_copy": 100 * gbps / roof.gbps,
                "current": cfg == current[chain_name],
            }
            results.append(row)
            if chain_name not in best or row["pct_of_copy"] > best[chain_name]["pct_of_copy"]:
                best[chain_name] = row
        del inputs
    return {
        "device": device.to_dict(),
        "versions": library_versions(),
        "size": f"{rows}x{cols}",
        "dtype": dtype,
        "copy_roof_gbps": roof.gbps,
        "table_key_now": table_key(device.name, _table()),
        "entry_key": table_entry_key(device.name),
        "rows": results,
        "best": {
            c: {k: r[k] for k in ("config", "launch", "median_ms", "gbps", "pct_of_copy")} for c, r in best.items()
        },
        "entry": {c: r["config"] for c, r in best.items()},
    }


def _table() -> dict:
    from .fused_configs import load_table

    return load_table()


def format_sweep(report: dict) -> str:
    lines = [
        f"device: {report['device']['description']}",
        "versions: " + ", ".join(f"{k} {v}" for k, v in report["versions"].items() if v),
        f"{report['size']} {report['dtype']}; copy roof {report['copy_roof_gbps']:.0f} GB/s (measured in this run); "
        f"table entry in use: {report['table_key_now']}",
    ]
    for chain in dict.fromkeys(r["chain"] for r in report["rows"]):
        lines.append(f"\n{chain}: {'config':45} {'launch':>18} {'ms':>8} {'GB/s':>7} {'% copy':>7}")
        for r in sorted((r for r in report["rows"] if r["chain"] == chain), key=lambda r: -r["pct_of_copy"]):
            mark = "  <- in use" if r["current"] else ""
            launch = "x".join(str(v) for v in r["launch"])
            lines.append(
                f"  {json.dumps(r['config']):51} {launch:>18} {r['median_ms']:8.4f} {r['gbps']:7.0f} "
                f"{r['pct_of_copy']:6.1f}%{mark}"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m labs.experiments.fused_tuning",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--show", action="store_true", help="the configurations a device uses (no GPU needed)")
    mode.add_argument("--sweep", action="store_true", help="time every candidate on this GPU")
    parser.add_argument("--device-name", help="--show: the device's name (default: this GPU's, else 'default')")
    parser.add_argument("--size", default="16384x8192", help="rows x cols to tune at (default 16384x8192)")
    parser.add_argument("--dtype", default="bfloat16", choices=("bfloat16", "float16", "float32"))
    parser.add_argument("--chains", default=",".join(CHAINS), help="comma-separated chains")
    parser.add_argument("--json", metavar="PATH", help="write the sweep (rows, best, entry) here, not to stdout")
    parser.add_argument("--write", action="store_true", help="store the best configurations in fused_configs.json")
    parser.add_argument("--key", help="--write: the entry's key (default: the GPU's model, e.g. H200)")
    args = parser.parse_args(argv)

    if args.show:
        name = args.device_name
        print(
            json.dumps(
                {"device": name or "default", "entry": table_key(name, _table()), **launch_table(name)}, indent=1
            )
        )
        return 0
    chains = [c.strip() for c in args.chains.split(",") if c.strip()]
    if any(c not in CHAINS for c in chains):
        parser.error(f"--chains: choose from {', '.join(CHAINS)}")
    try:
        rows, cols = (int(v) for v in args.size.lower().split("x"))
    except ValueError:
        parser.error("--size: rows x cols, e.g. 16384x8192")
    import torch

    if not torch.cuda.is_available():
        print(
            "fused_tuning --sweep needs a CUDA GPU (the interpreter's timings say nothing about speed)", file=sys.stderr
        )
        return 2
    report = sweep(chains, (rows, cols), args.dtype)
    print(format_sweep(report), file=sys.stderr if not args.json else sys.stdout)
    body = json.dumps({k: v for k, v in report.items() if k != "rows"} | {"rows": report["rows"]}, indent=1)
    if args.json:
        Path(args.json).write_text(body)
    else:
        print(body)
    if args.write:
        key = args.key or report["entry_key"]
        TABLE_PATH.write_text(json.dumps(with_entry(TABLE_PATH, key, report["entry"]), indent=2) + "\n")
        print(f"wrote the {key} entry of {TABLE_PATH}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
