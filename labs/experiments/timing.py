"""Timing a callable: median and spread of many calls, and the method in words for every result.

On a GPU, `triton.testing.do_bench` (CUDA events around each call, the L2 cache flushed before
every call) or, without Triton, the same loop by hand; on a CPU, time.perf_counter with a fixed
thread count. NOTES.md ("How the labs measure") says why.
"""

from __future__ import annotations

import dataclasses
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from .device import Device
from .params import MiB
from .triton_shim import triton_or_none

WARMUP_MS = 25.0
REP_MS = 200.0
MIN_REPS = 10


@dataclass(frozen=True)
class Timing:
    """Median and spread of many timed calls, in milliseconds."""

    median_ms: float
    q25_ms: float
    q75_ms: float
    min_ms: float
    reps: int | None

    @property
    def spread_pct(self) -> float:
        """Interquartile range as a percentage of the median."""
        return 100.0 * (self.q75_ms - self.q25_ms) / self.median_ms if self.median_ms else 0.0

    @classmethod
    def from_samples(cls, samples_ms: list[float]) -> Timing:
        s = sorted(float(x) for x in samples_ms)
        if len(s) == 1:
            return cls(s[0], s[0], s[0], s[0], 1)
        q25, q50, q75 = statistics.quantiles(s, n=4, method="inclusive")
        return cls(median_ms=q50, q25_ms=q25, q75_ms=q75, min_ms=s[0], reps=len(s))

    def to_dict(self) -> dict:
        return {**dataclasses.asdict(self), "spread_pct": self.spread_pct}


def timing_method(device: Device) -> str:
    """How `measure` times on this device, in words; every result carries it."""
    reps = f"{WARMUP_MS:g} ms warmup, then at least {MIN_REPS} repetitions over at least {REP_MS:g} ms"
    if device.is_cuda:
        if triton_or_none() is not None:
            return (
                f"triton.testing.do_bench: CUDA events around each call, {reps}, the L2 cache flushed before "
                f"every call (a 256 MB buffer zeroed); median and interquartile range of the per-call times"
            )
        return (
            f"CUDA events around each call (triton not installed, so not do_bench), {reps}, the L2 cache "
            f"flushed before every call (a 256 MB buffer zeroed); median and interquartile range"
        )
    return (
        f"time.perf_counter around each call on the CPU ({device.torch_threads} torch thread"
        f"{'s' if device.torch_threads != 1 else ''}, fixed for the run so that other processes on a shared "
        f"machine cannot stall parallel regions), {reps}; caches not flushed; median and interquartile range"
    )


def measure(
    fn: Callable[[], Any],
    device: Device,
    *,
    warmup_ms: float = WARMUP_MS,
    rep_ms: float = REP_MS,
    min_reps: int = MIN_REPS,
) -> Timing:
    """Time `fn` (already compiled/warm or not: the warmup absorbs that) as `timing_method` says."""
    if device.is_cuda:
        return _measure_cuda(fn, warmup_ms, rep_ms, min_reps)
    return _measure_cpu(fn, warmup_ms, rep_ms, min_reps)


def _measure_cuda(fn, warmup_ms, rep_ms, min_reps) -> Timing:
    # One timed call first: a slow callable (naive attention at large N) would otherwise get only a
    # rep or two out of rep_ms, and a median of two is no median.
    fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    once_ms = (time.perf_counter() - t0) * 1e3
    rep_ms = max(rep_ms, 1.5 * min_reps * once_ms)
    triton = triton_or_none()
    if triton is None:
        return Timing.from_samples(_cuda_event_times(fn, warmup_ms, rep_ms))
    import triton.testing

    try:
        samples = triton.testing.do_bench(fn, warmup=warmup_ms, rep=rep_ms, return_mode="all")
    except (AssertionError, TypeError):  # a triton without return_mode="all": quantiles only
        q25, q50, q75, q0 = triton.testing.do_bench(fn, warmup=warmup_ms, rep=rep_ms, quantiles=[0.25, 0.5, 0.75, 0.0])
        return Timing(q50, q25, q75, q0, None)
    return Timing.from_samples(samples)


def _cuda_event_times(fn, warmup_ms, rep_ms) -> list[float]:
    """do_bench's loop, for machines without triton: events per call, L2 flushed before each."""
    flush = torch.empty(256 * MiB // 4, dtype=torch.int32, device="cuda")
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(5):
        flush.zero_()
        fn()
    end.record()
    torch.cuda.synchronize()
    estimate = max(start.elapsed_time(end) / 5, 1e-3)
    for _ in range(max(1, int(warmup_ms / estimate))):
        fn()
    n = max(1, int(rep_ms / estimate))
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    for s, e in zip(starts, ends, strict=True):
        flush.zero_()
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    return [s.elapsed_time(e) for s, e in zip(starts, ends, strict=True)]


def _measure_cpu(fn, warmup_ms, rep_ms, min_reps, max_reps: int = 100_000) -> Timing:
    fn()
    deadline = time.perf_counter() + warmup_ms / 1e3
    while time.perf_counter() < deadline:
        fn()
    samples: list[float] = []
    deadline = time.perf_counter() + rep_ms / 1e3
    while len(samples) < min_reps or (time.perf_counter() < deadline and len(samples) < max_reps):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1e3)
    return Timing.from_samples(samples)


def wall_per_call_ms(fn: Callable[[], Any], device: Device, budget_ms: float = 50.0) -> float:
    """Host-clock time per call over back-to-back calls, synchronized once at the end.

    do_bench's per-call events start after the cache flush it queues before each call (a 256 MB
    memset, ~0.1 ms on an H100), so a call whose host-side work (Python, Dynamo's guards, the
    launches) is shorter than that flush shows only its GPU time. Back to back, nothing hides
    the host: this is what a launch-bound caller actually pays per call.
    """
    fn()
    sync(device)
    t0 = time.perf_counter()
    fn()
    sync(device)
    once = time.perf_counter() - t0
    n = max(10, min(2000, int(budget_ms / 1e3 / max(once, 1e-7))))
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    sync(device)
    return (time.perf_counter() - t0) * 1e3 / n


def sync(device: Device) -> None:
    """Wait for the device's queued work (nothing to wait for on a CPU)."""
    if device.is_cuda:
        torch.cuda.synchronize(device.index)
