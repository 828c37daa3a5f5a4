"""Command line for the labs.

    python -m labs.experiments list [--device-kind cpu]
    python -m labs.experiments run fused_vs_unfused --param sizes=64x8192,4096x8192 --json out.json

`list` imports no torch. `run` takes --cpu-threads (default 1) and --cache-dir (default
~/.cache/tilewise-labs), the settings a worker takes from LABS_CPU_THREADS and LABS_CACHE_DIR.
"""

from __future__ import annotations

import argparse
import json
import sys

from .catalog import CATALOG, catalog, get_experiment
from .params import ParamError
from .report import format_result


def _progress(percent: int, phase: str) -> None:
    print(f"[{percent:3d}%] {phase}", file=sys.stderr, flush=True)


def cli_value(value) -> str:
    """A default as one would type it after --param: 64x8192,4096x8192 or a,b or 1024."""
    if isinstance(value, list):
        return ",".join(cli_value(v) if not isinstance(v, list) else "x".join(map(str, v)) for v in value)
    return str(value).lower() if isinstance(value, bool) else str(value)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m labs.experiments", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    ls = sub.add_parser("list", help="the catalog: ids, sections, parameters and their bounds")
    ls.add_argument("--device-kind", default="cuda", choices=("cuda", "cpu"), help="whose defaults to show")
    run = sub.add_parser("run", help="run one experiment and print its table")
    run.add_argument("experiment", help=", ".join(CATALOG))
    run.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="e.g. sizes=64x8192,4096x8192 or dtype=float16 (repeatable)",
    )
    run.add_argument("--device", default="auto", help="auto, cuda, cuda:N or cpu")
    run.add_argument("--json", metavar="PATH", help="also write the full result here")
    run.add_argument("--cpu-threads", type=int, metavar="N", help="torch threads of a CPU-form run (default 1)")
    run.add_argument("--cache-dir", metavar="PATH", help="roofline calibration cache (default ~/.cache/tilewise-labs)")
    args = parser.parse_args(argv)

    if args.command == "list":
        for entry in catalog(args.device_kind):
            print(f"{entry['id']}  [{entry['section']}]  ~{entry['estimated_seconds']} s on {args.device_kind}")
            print(f"    {entry['title']}: {entry['summary']}")
            for p in entry["params"]:
                bounds = " ".join(f"{k}={cli_value(p[k])}" for k in ("min", "max", "choices", "max_items") if k in p)
                line = f"    --param {p['name']}={cli_value(p['default'])}  {p['help']}"
                print(line + (f"  ({bounds})" if bounds else ""))
        return 0

    params = {}
    for item in args.param:
        name, sep, value = item.partition("=")
        if not sep:
            parser.error(f"--param expects NAME=VALUE, got {item!r}")
        params[name.strip()] = value
    if args.cpu_threads is not None and args.cpu_threads < 1:
        parser.error("--cpu-threads must be at least 1")
    from .runner import run_experiment  # imports torch

    try:
        result = run_experiment(
            args.experiment,
            params,
            progress=_progress,
            device=args.device,
            cpu_threads=args.cpu_threads,
            cache_dir=args.cache_dir,
        )
    except ParamError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(format_result(result, get_experiment(args.experiment).columns))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1, allow_nan=False)
        print(f"wrote {args.json}")
    return 0 if result["checks"]["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
