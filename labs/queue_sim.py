"""How long lab runs wait for a GPU at a given request rate and GPU count: a discrete-event simulation.

    python -m labs.queue_sim --gpus 64 --rate 120          # requests per minute
    python -m labs.queue_sim --gpus 64                     # a table over rates up to the fleet's capacity

The model is the deployment's: one FIFO queue per device kind (`gpu.<kind>`), one worker per GPU
taking one run at a time (concurrency 1, prefetch 1), requests arriving at random (Poisson) at
`rate` a minute, each a default run of an experiment drawn from MIX, whose run time is drawn
uniformly between the measured bounds in RUN_TIMES. FIFO with c servers is simulated exactly by
handing each request, in arrival order, to the GPU that frees first (the Kiefer-Wolfowitz recursion),
so a day of requests takes milliseconds. No Django: run it anywhere.
"""

from __future__ import annotations

import argparse
import bisect
import heapq
import math
import random
import statistics
import sys
from dataclasses import dataclass

# Seconds a default run takes on a warm GPU worker, request taken to result recorded, as measured:
# - fused_vs_unfused 10.6 s and attention 16 s: two H200 workers, 8 default runs, issue 14's report
#   (steady state, after each kind's first run in the process); fused 10-19 s on an H100
#   (labs/experiments/NOTES.md, "Lab run times"), so the bounds span both;
# - launch_overhead 3 s, attention 8 s on an H100 (NOTES.md, "Lab run times");
# - flash_tiling_trace 2 s and roofline 10 s: catalog.py's estimated_seconds (the roofline's calibration
#   is cached per device afterwards, so later runs are shorter; 10 s keeps the estimate pessimistic).
RUN_TIMES: dict[str, tuple[float, float]] = {
    "fused_vs_unfused": (10.0, 19.0),
    "launch_overhead": (2.5, 3.5),
    "attention": (8.0, 16.0),
    "flash_tiling_trace": (1.5, 2.5),
    "roofline": (5.0, 10.0),
}
# Which experiments learners ask for: the three the teacher offers most (fused, launch, attention),
# the trace and the calibration less. An assumption, not a measurement: change it with --mix.
MIX: dict[str, float] = {
    "fused_vs_unfused": 0.35,
    "launch_overhead": 0.2,
    "attention": 0.3,
    "flash_tiling_trace": 0.1,
    "roofline": 0.05,
}


@dataclass(frozen=True)
class SimResult:
    gpus: int
    rate_per_min: float
    requests: int
    mean_service_s: float
    utilisation: float  # offered load / GPUs
    mean_wait_s: float
    p50_wait_s: float
    p95_wait_s: float
    p99_wait_s: float
    mean_queue: float  # time-averaged runs waiting (Little: rate x mean wait)
    max_queue: int
    share_waiting: float  # share of requests that found every GPU busy


def mean_service_s(mix: dict[str, float] = MIX, run_times: dict[str, tuple[float, float]] = RUN_TIMES) -> float:
    total = sum(mix.values())
    return sum(w / total * (run_times[e][0] + run_times[e][1]) / 2 for e, w in mix.items())


def simulate(
    gpus: int,
    rate_per_min: float,
    *,
    hours: float = 8.0,
    seed: int = 0,
    service=None,
    mix: dict[str, float] = MIX,
    run_times: dict[str, tuple[float, float]] = RUN_TIMES,
    warmup_share: float = 0.05,
) -> SimResult:
    """FIFO queue, `gpus` servers, Poisson arrivals; `service(rng)` draws a run time (default: the mix).

    The first `warmup_share` of requests fill the system and are left out of the statistics.
    """
    if gpus < 1 or rate_per_min <= 0 or hours <= 0:
        raise ValueError("gpus, rate and hours must be positive")
    rng = random.Random(seed)
    names, weights = list(mix), list(mix.values())

    def draw_mix(r: random.Random) -> float:
        low, high = run_times[r.choices(names, weights)[0]]
        return r.uniform(low, high)

    draw = service or draw_mix
    rate_s = rate_per_min / 60.0
    horizon = hours * 3600.0
    free = [0.0] * gpus  # when each GPU is next free (a heap)
    arrivals, starts, services = [], [], []
    t = 0.0
    while True:
        t += rng.expovariate(rate_s)
        if t > horizon:
            break
        s = draw(rng)
        start = max(t, heapq.heappop(free))
        heapq.heappush(free, start + s)
        arrivals.append(t)
        starts.append(start)
        services.append(s)
    skip = int(len(arrivals) * warmup_share)
    waits = [st - a for a, st in zip(arrivals[skip:], starts[skip:], strict=True)]
    if not waits:
        raise ValueError("no request arrived: raise the rate or the hours")
    # Runs waiting just after each request arrives (the queue's deepest moments are arrivals): the
    # requests so far, itself included, less those started by then (starts are in order under FIFO).
    depths = [i + 1 - bisect.bisect_right(starts, a) for i, a in enumerate(arrivals)][skip:]
    ordered = sorted(waits)
    mean_wait = statistics.fmean(waits)
    mean_s = statistics.fmean(services)
    return SimResult(
        gpus=gpus,
        rate_per_min=rate_per_min,
        requests=len(waits),
        mean_service_s=mean_s,
        utilisation=rate_s * mean_s / gpus,
        mean_wait_s=mean_wait,
        p50_wait_s=_quantile(ordered, 0.5),
        p95_wait_s=_quantile(ordered, 0.95),
        p99_wait_s=_quantile(ordered, 0.99),
        mean_queue=rate_s * mean_wait,
        max_queue=max(depths),
        share_waiting=sum(1 for w in waits if w > 1e-9) / len(waits),
    )


def _quantile(ordered: list[float], q: float) -> float:
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def erlang_c_wait(gpus: int, rate_per_s: float, mean_service_s: float) -> tuple[float, float]:
    """M/M/c closed form: (probability that a request waits, mean wait in seconds)."""
    a = rate_per_s * mean_service_s  # offered load in Erlangs
    if a >= gpus:
        return 1.0, math.inf
    term = a**gpus / math.factorial(gpus) * gpus / (gpus - a)
    p_wait = term / (sum(a**k / math.factorial(k) for k in range(gpus)) + term)
    return p_wait, p_wait * mean_service_s / (gpus - a)


def format_table(results: list[SimResult]) -> str:
    lines = [
        f"{'GPUs':>5} {'req/min':>8} {'util':>6} {'waited':>7} {'mean wait':>10} {'p50':>7} {'p95':>7} "
        f"{'p99':>7} {'mean queue':>11} {'max queue':>10}"
    ]
    for r in results:
        lines.append(
            f"{r.gpus:5d} {r.rate_per_min:8.1f} {r.utilisation:6.0%} {r.share_waiting:7.0%} {r.mean_wait_s:9.1f}s "
            f"{r.p50_wait_s:6.1f}s {r.p95_wait_s:6.1f}s {r.p99_wait_s:6.1f}s {r.mean_queue:11.1f} {r.max_queue:10d}"
        )
    return "\n".join(lines)


def _parse_mix(text: str) -> dict[str, float]:
    mix = {}
    for part in text.split(","):
        name, _, weight = part.partition("=")
        if name.strip() not in RUN_TIMES:
            raise argparse.ArgumentTypeError(f"unknown experiment {name.strip()!r}; known: {', '.join(RUN_TIMES)}")
        mix[name.strip()] = float(weight)
    return mix


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m labs.queue_sim", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--gpus", type=int, default=64, help="GPUs, one worker each (default 64)")
    parser.add_argument("--rate", type=float, action="append", help="requests per minute (repeatable)")
    parser.add_argument("--hours", type=float, default=8.0, help="simulated hours at that rate (default 8)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--mix", type=_parse_mix, default=MIX, help="e.g. fused_vs_unfused=0.5,attention=0.5")
    args = parser.parse_args(argv)
    mean_s = mean_service_s(args.mix)
    capacity = args.gpus * 60 / mean_s
    rates = args.rate or [round(capacity * u, 1) for u in (0.1, 0.5, 0.7, 0.8, 0.9, 0.95, 0.98)]
    print(
        f"mean run {mean_s:.1f} s over the mix {', '.join(f'{k} {v:g}' for k, v in args.mix.items())}; "
        f"{args.gpus} GPUs serve at most {capacity:.0f} runs a minute; "
        f"{args.hours:g} h simulated per row, seed {args.seed}"
    )
    print(format_table([simulate(args.gpus, r, hours=args.hours, seed=args.seed, mix=args.mix) for r in rates]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
