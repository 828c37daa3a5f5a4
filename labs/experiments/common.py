"""What every lab's run shares: the device, library versions, timing, the copy roof and the result.

Nothing here knows about Django. A lab result must say which device, which library versions and
which timing method produced each number, so those live next to the timer that makes them.
Parameters (bounds, parsing, errors) are torch-free and live in params.py; they are re-exported here.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import importlib.metadata
import math
import os
import platform
import statistics
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import torch

# The parameter machinery is torch-free so that the web process can validate requests; re-exported
# for code that imports it from here.
from .params import (  # noqa: F401
    DTYPE_ALIASES,
    DTYPE_NAMES,
    ITEMSIZE,
    GiB,
    MiB,
    ParamError,
    Params,
    check_dtype,
    human_bytes,
    param,
    parse_bool,
    parse_dtype,
    parse_int,
    parse_ints,
    parse_sizes,
    parse_strs,
)
from .params import json_safe as plain_json_safe

# (percent 0-100, phase line) -> None. A callback may raise to cancel a run; the exception propagates.
ProgressFn = Callable[[int, str], None]

# Element type names (params.DTYPE_NAMES) to torch dtypes: the worker side of the mapping.
DTYPES: dict[str, torch.dtype] = {name: getattr(torch, name) for name in DTYPE_NAMES}


def torch_dtype(name: str) -> torch.dtype:
    """The torch dtype for a parsed dtype name ("bfloat16" -> torch.bfloat16)."""
    return DTYPES[name]


# ---------------------------------------------------------------------------------------------
# Device and versions
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Device:
    """The machine a lab runs on, as a result reports it."""

    kind: str  # "cuda" or "cpu"
    name: str
    memory_bytes: int
    index: int | None = None
    sm_count: int | None = None
    capability: str | None = None
    l2_bytes: int | None = None
    cpu_cores: int | None = None
    torch_threads: int | None = None

    @property
    def torch_device(self) -> str:
        return f"cuda:{self.index}" if self.kind == "cuda" else "cpu"

    @property
    def is_cuda(self) -> bool:
        return self.kind == "cuda"

    def describe(self) -> str:
        if self.is_cuda:
            return (f"{self.name} (sm_{self.capability}, {self.sm_count} SMs, {human_bytes(self.memory_bytes)}, "
                    f"L2 {human_bytes(self.l2_bytes or 0)})")
        return (f"CPU: {self.name} ({self.cpu_cores} cores, {human_bytes(self.memory_bytes)} RAM, "
                f"{self.torch_threads} torch threads)")

    def to_dict(self) -> dict:
        return {**dataclasses.asdict(self), "description": self.describe()}


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _ram_bytes() -> int:
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    try:  # a container's memory limit is what a lab can actually use
        with open("/sys/fs/cgroup/memory.max") as f:
            limit = f.read().strip()
        if limit.isdigit():
            total = min(total, int(limit))
    except OSError:
        pass
    return total


def get_device(spec: str = "auto") -> Device:
    """'auto' (CUDA if present, else CPU), 'cuda', 'cuda:N' or 'cpu'."""
    spec = (spec or "auto").strip().lower()
    if spec == "auto":
        spec = "cuda" if torch.cuda.is_available() else "cpu"
    if spec.startswith("cuda"):
        if not torch.cuda.is_available():
            raise ParamError("device", "CUDA was asked for but torch sees no CUDA GPU")
        index = int(spec.split(":", 1)[1]) if ":" in spec else torch.cuda.current_device()
        return _cuda_device(index)
    if spec == "cpu":
        return _cpu_device()
    raise ParamError("device", f"unknown device {spec!r}; use auto, cuda, cuda:N or cpu")


@functools.cache
def _cuda_device(index: int) -> Device:
    p = torch.cuda.get_device_properties(index)
    return Device(kind="cuda", index=index, name=p.name, memory_bytes=p.total_memory,
                  sm_count=p.multi_processor_count, capability=f"{p.major}{p.minor}",
                  l2_bytes=getattr(p, "L2_cache_size", None))


def _cpu_device() -> Device:
    return Device(kind="cpu", name=_cpu_model(), memory_bytes=_ram_bytes(), cpu_cores=os.cpu_count(),
                  torch_threads=torch.get_num_threads())


# A shared CPU worker's other processes take cores away mid-measurement. With several threads,
# every parallel region then waits a whole scheduler slice for its slowest thread: on the 2-core
# development machine under load, a 90 µs op measured 16-28 ms with 2 threads and 0.093 ms with 1.
# So CPU-form labs run with a fixed thread count, set for the whole run (Inductor's generated C++
# takes its thread count at compile time), and the method says how many.
CPU_THREADS = int(os.environ.get("LABS_CPU_THREADS", "1"))


@contextlib.contextmanager
def cpu_threads(n: int = CPU_THREADS):
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def pinned_cpu_threads(run: Callable) -> Callable:
    """Decorator for an experiment's run(params, progress, device): on a CPU, run with CPU_THREADS threads."""

    @functools.wraps(run)
    def wrapper(params, progress=None, device=None):
        device = device or get_device()
        if device.is_cuda:
            return run(params, progress, device)
        with cpu_threads(CPU_THREADS):
            return run(params, progress, dataclasses.replace(device, torch_threads=CPU_THREADS))

    return wrapper


def _dist_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def triton_or_none():
    """The triton module, or None where it is not installed (CPU-only torch wheels don't bring it)."""
    try:
        import triton
    except ImportError:
        return None
    return triton


@functools.cache
def library_versions() -> dict[str, str | None]:
    triton = triton_or_none()
    cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": str(cudnn) if cudnn else None,
        "triton": getattr(triton, "__version__", None),
        # Read from the package metadata: importing flash_attn just to learn its version loads CUDA code.
        "flash_attn": _dist_version("flash-attn") or _dist_version("flash_attn"),
    }


def versions_text(versions: Mapping[str, str | None]) -> str:
    return ", ".join(f"{k} {v}" for k, v in versions.items() if v) + \
        ("" if versions.get("flash_attn") else ", flash-attn not installed")


# ---------------------------------------------------------------------------------------------
# Timing
# ---------------------------------------------------------------------------------------------

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
            return (f"triton.testing.do_bench: CUDA events around each call, {reps}, the L2 cache flushed before "
                    f"every call (a 256 MB buffer zeroed); median and interquartile range of the per-call times")
        return (f"CUDA events around each call (triton not installed, so not do_bench), {reps}, the L2 cache "
                f"flushed before every call (a 256 MB buffer zeroed); median and interquartile range")
    return (f"time.perf_counter around each call on the CPU ({device.torch_threads} torch thread"
            f"{'s' if device.torch_threads != 1 else ''}, fixed for the run so that other processes on a shared "
            f"machine cannot stall parallel regions), {reps}; caches not flushed; median and interquartile range")


def measure(fn: Callable[[], Any], device: Device, *, warmup_ms: float = WARMUP_MS, rep_ms: float = REP_MS,
            min_reps: int = MIN_REPS) -> Timing:
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
        q25, q50, q75, q0 = triton.testing.do_bench(fn, warmup=warmup_ms, rep=rep_ms,
                                                    quantiles=[0.25, 0.5, 0.75, 0.0])
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
    if device.is_cuda:
        torch.cuda.synchronize(device.index)


# ---------------------------------------------------------------------------------------------
# The copy roof: the fastest any memory-bound kernel can go on this device
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CopyRoof:
    bytes_moved: int
    timing: Timing
    method: str

    @property
    def gbps(self) -> float:
        return self.bytes_moved / (self.timing.median_ms * 1e-3) / 1e9

    def to_dict(self) -> dict:
        return {"bytes_moved": self.bytes_moved, "gbps": self.gbps, "timing": self.timing.to_dict(),
                "method": self.method}


_ROOFS: dict[str, CopyRoof] = {}


def copy_roof(device: Device) -> CopyRoof:
    """Measured device copy bandwidth (bytes read + written per second), once per process and device.

    Datasheet bandwidth is a lead, not a roof: the copy kernel on this device is what a perfect
    element-wise kernel can hope to match.
    """
    key = device.torch_device
    if key not in _ROOFS:
        if device.is_cuda:
            # 512 MiB of bf16, ten times the H100's L2, so the copy streams from HBM. clone() is what
            # BENCHMARKS.md measured; the caching allocator keeps it from paying for cudaMalloc.
            n = min(512 * MiB, device.memory_bytes // 16) // 2
            src = torch.randn(n, dtype=torch.bfloat16, device=key)
            fn = lambda: src.clone()  # noqa: E731
            what = f"clone() of a {human_bytes(2 * n)} bf16 tensor"
        else:
            # On a CPU a fresh 64 MiB clone() pays for page faults on first touch; copy_ into a
            # preallocated buffer measures the memory system instead.
            n = 64 * MiB // 4
            src = torch.randn(n, dtype=torch.float32)
            dst = torch.empty_like(src)
            fn = lambda: dst.copy_(src)  # noqa: E731
            what = f"copy_ of a {human_bytes(4 * n)} float32 tensor into a preallocated one"
        timing = measure(fn, device)
        bytes_moved = 2 * src.numel() * src.element_size()
        _ROOFS[key] = CopyRoof(bytes_moved, timing, f"{what}; bytes read + written over the median time")
        del src
    return _ROOFS[key]


# ---------------------------------------------------------------------------------------------
# Correctness
# ---------------------------------------------------------------------------------------------

# (atol, rtol) against a float32 reference: float32 math lands far inside; half-precision outputs
# are off by their own rounding (bf16 keeps 8 bits of mantissa: 2**-8 = 0.4%).
TOLERANCES = {"float32": (1e-4, 1e-4), "bfloat16": (2e-2, 1.6e-2), "float16": (5e-3, 5e-3)}


def compare(out: torch.Tensor, ref: torch.Tensor, dtype: str, *, scale: float = 1.0) -> dict:
    """Max abs error, relative L2 error and a pass/fail against the dtype's tolerance. NaN never passes."""
    atol, rtol = (t * scale for t in TOLERANCES[dtype])
    out32, ref32 = out.float(), ref.float()
    diff = (out32 - ref32).abs()
    finite = bool(torch.isfinite(out32).all())
    max_abs = float(diff.max()) if finite else math.inf
    rel = float(torch.linalg.vector_norm(out32 - ref32) / torch.linalg.vector_norm(ref32).clamp_min(1e-30)) \
        if finite else math.inf
    passed = finite and bool((diff <= atol + rtol * ref32.abs()).all())
    return {"max_abs_error": max_abs, "rel_l2_error": rel, "atol": atol, "rtol": rtol, "passed": passed}


# ---------------------------------------------------------------------------------------------
# Results and progress
# ---------------------------------------------------------------------------------------------

def json_safe(value: Any) -> Any:
    """params.json_safe (strict JSON), also turning tensors into lists and torch dtypes into their names."""
    return plain_json_safe(value, _torch_value)


def _torch_value(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return json_safe(value.tolist())
    if isinstance(value, torch.dtype):
        return str(value).removeprefix("torch.")
    return str(value)


@dataclass
class Result:
    """What a lab returns: numbers with the device, versions and method that produced them."""

    experiment: str
    params: dict
    device: dict
    versions: dict
    method: str
    rows: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    check_items: list[dict] = field(default_factory=list)
    artifacts: dict = field(default_factory=dict)
    elapsed_s: float | None = None

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def add_check(self, name: str, outcome: dict) -> None:
        self.check_items.append({"name": name, **outcome})

    @property
    def checks(self) -> dict:
        errors = [c["max_abs_error"] for c in self.check_items if c.get("max_abs_error") is not None]
        return {"passed": all(c["passed"] for c in self.check_items),
                "max_abs_error": max(errors) if errors else None,
                "items": self.check_items}

    def to_dict(self) -> dict:
        return json_safe({
            "experiment": self.experiment, "params": self.params, "device": self.device,
            "versions": self.versions, "method": self.method, "rows": self.rows, "notes": self.notes,
            "checks": self.checks, "artifacts": self.artifacts, "elapsed_s": self.elapsed_s,
        })


def new_result(experiment: str, params: Params, device: Device, method: str) -> Result:
    return Result(experiment=experiment, params=params.to_dict(), device=device.to_dict(),
                  versions=dict(library_versions()), method=method)


class Progress:
    """Wraps an optional callback: clamps to 0-100 and never goes backwards."""

    def __init__(self, callback: ProgressFn | None):
        self.callback = callback
        self.percent = 0

    def __call__(self, percent: float, phase: str) -> None:
        self.percent = max(self.percent, min(100, int(percent)))
        if self.callback is not None:
            self.callback(self.percent, phase)


def fmt_ms(ms: float | None) -> str:
    if ms is None:
        return "n/a"
    return f"{ms * 1e3:.1f} µs" if ms < 1 else f"{ms:.3f} ms"


class _NoTriton:
    """Stands in for `triton` and `triton.language` where Triton is not installed, so a module that
    defines kernels still imports and its eager and torch.compile variants still run."""

    constexpr = None

    @staticmethod
    def jit(fn=None, **kwargs):
        def missing(*args, **kw):
            raise RuntimeError("triton is not installed")
        return missing if fn is not None else (lambda f: missing)

    @staticmethod
    def cdiv(a: int, b: int) -> int:
        return -(-a // b)

    @staticmethod
    def next_power_of_2(n: int) -> int:
        return 1 << max(0, (n - 1).bit_length())


NO_TRITON = _NoTriton()


def next_power_of_2(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


def count_kernels(fn: Callable[[], Any], device: Device, calls: int = 3) -> int | None:
    """Device kernels one call of `fn` launches, counted with torch.profiler (CUDA), or None on a CPU.

    On a CPU there are no kernels; `count_aten_ops` counts the ATen operators eager PyTorch runs.
    """
    if not device.is_cuda:
        return None
    from torch.profiler import ProfilerActivity, profile

    fn()
    torch.cuda.synchronize()
    with warnings.catch_warnings():  # "Profiler clears events at the end of each cycle": one cycle here
        warnings.simplefilter("ignore", UserWarning)
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(calls):
                fn()
            torch.cuda.synchronize()
        events = prof.events()
    kernels = [e for e in events if e.device_type == torch.autograd.DeviceType.CUDA
               and not e.name.startswith(("Memcpy", "Memset", "[memory]"))]
    return round(len(kernels) / calls)


def count_aten_ops(fn: Callable[[], Any]) -> int:
    """ATen operators one eager call dispatches (on a CPU, where there are no kernels to count).

    Counted with a TorchDispatchMode rather than the profiler: it sees exactly the operators that
    reach the dispatcher from Python (add, gelu, native_layer_norm...), not their internals.
    """
    from torch.utils._python_dispatch import TorchDispatchMode

    class _Count(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.n = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.n += 1
            return func(*args, **(kwargs or {}))

    fn()
    with _Count() as counter:
        fn()
    return counter.n
