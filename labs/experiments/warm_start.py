"""How long each default experiment takes on a fresh node, with and without warm compile caches.

    python -m labs.experiments.warm_start [--experiments fused_vs_unfused,attention] [--json out.json]

Torch only (no Django, broker or database), so it runs on any GPU machine. For each experiment,
three timings of one default run (the run itself: what a worker spends between taking a request
and recording it; queueing and the database are not in it):

- cold: a fresh process, empty Inductor, Triton and roofline caches: a brand-new node;
- cache: a fresh process on the caches the cold run left (TORCHINDUCTOR_CACHE_DIR, TRITON_CACHE_DIR):
  a restarted worker on a node whose cache volume persists;
- warmed: in a process that first ran every experiment once at its defaults, as a worker's
  warm-up does at start (labs.tasks.warm_up), on those caches: a worker that has been up a minute.

The process start (interpreter, torch import, CUDA context) is reported apart. The target is the
issue's: request to done within 20 s for every default experiment on a warmed worker.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .catalog import CATALOG

TARGET_S = 20.0


def _child(experiments: list[str], warm_first: bool) -> dict:
    """In the child process: (warm-up,) then one timed default run of each experiment."""
    started = time.perf_counter()
    import torch

    from .device import get_device, library_versions
    from .runner import run_experiment

    device = get_device()
    if device.is_cuda:
        torch.zeros(1, device=device.torch_device).add_(1)
        torch.cuda.synchronize()
    ready = time.perf_counter() - started
    cache = os.environ["TILEWISE_WARM_START_LAB_CACHE"]
    warm_up = {}
    if warm_first:
        for exp in experiments:
            t0 = time.perf_counter()
            run_experiment(exp, {}, cache_dir=cache)
            warm_up[exp] = time.perf_counter() - t0
    runs = {}
    for exp in experiments:
        t0 = time.perf_counter()
        run_experiment(exp, {}, cache_dir=cache)
        runs[exp] = time.perf_counter() - t0
    return {
        "process_ready_s": ready,
        "warm_up_s": warm_up,
        "run_s": runs,
        "device": device.to_dict(),
        "versions": library_versions(),
    }


def _spawn(experiments: list[str], cache: Path, *, warm_first: bool) -> dict:
    for sub in ("inductor", "triton", "labs"):
        (cache / sub).mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "TORCHINDUCTOR_CACHE_DIR": str(cache / "inductor"),
        "TRITON_CACHE_DIR": str(cache / "triton"),
        "TILEWISE_WARM_START_LAB_CACHE": str(cache / "labs"),
    }
    args = [sys.executable, "-m", "labs.experiments.warm_start", "--child", ",".join(experiments)]
    out = subprocess.run(
        args + (["--warm-first"] if warm_first else []), env=env, capture_output=True, text=True, check=False
    )
    if out.returncode != 0:
        raise RuntimeError(f"the child process failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure_warm_start(experiments: list[str], cache: Path) -> dict:
    """Cold, cache and warmed timings of each experiment (see the module's docstring)."""
    cold = {exp: _spawn([exp], cache / exp, warm_first=False) for exp in experiments}
    cached = {exp: _spawn([exp], cache / exp, warm_first=False) for exp in experiments}
    shared = cache / "shared"  # every experiment's kernels in one folder, as on a worker's cache volume
    for exp in experiments:
        shutil.copytree(cache / exp, shared, dirs_exist_ok=True)
    warmed = _spawn(experiments, shared, warm_first=True)
    first = next(iter(cold.values()))
    return {
        "device": first["device"],
        "versions": first["versions"],
        "rows": [
            {
                "experiment": exp,
                "cold_s": cold[exp]["run_s"][exp],
                "cold_process_ready_s": cold[exp]["process_ready_s"],
                "cache_s": cached[exp]["run_s"][exp],
                "warm_up_s": warmed["warm_up_s"][exp],
                "warmed_s": warmed["run_s"][exp],
            }
            for exp in experiments
        ],
    }


def format_report(report: dict) -> str:
    lines = [
        f"device: {report['device']['description']}",
        "versions: " + ", ".join(f"{k} {v}" for k, v in report["versions"].items() if v),
        "seconds per default run (the run alone; a fresh process first spends 'start' on python, torch and CUDA):",
        f"{'experiment':20} {'start':>6} {'cold':>7} {'cache':>7} {'warm-up':>8} {'warmed':>7}"
        f"  <= {TARGET_S:.0f} s warmed",
    ]
    for r in report["rows"]:
        ok = "yes" if r["warmed_s"] <= TARGET_S else "NO"
        lines.append(
            f"{r['experiment']:20} {r['cold_process_ready_s']:6.1f} {r['cold_s']:7.1f} {r['cache_s']:7.1f} "
            f"{r['warm_up_s']:8.1f} {r['warmed_s']:7.1f}  {ok}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m labs.experiments.warm_start",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--experiments", default=",".join(CATALOG), help="comma-separated ids (default: all)")
    parser.add_argument("--cache-root", help="where the cache folders go (default: a new temporary folder)")
    parser.add_argument("--json", metavar="PATH", help="also write the report here")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--warm-first", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    experiments = [e.strip() for e in (args.child or args.experiments).split(",") if e.strip()]
    unknown = [e for e in experiments if e not in CATALOG]
    if unknown:
        parser.error(f"unknown experiments: {', '.join(unknown)}")
    if args.child:
        print(json.dumps(_child(experiments, args.warm_first)))
        return 0
    root = Path(args.cache_root) if args.cache_root else Path(tempfile.mkdtemp(prefix="tilewise-warm-start-"))
    report = measure_warm_start(experiments, root)
    print(format_report(report))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
