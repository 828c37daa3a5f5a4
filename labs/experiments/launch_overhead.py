"""
Launch overhead and CUDA Graphs
===============================

Decoding one token at a time runs hundreds of kernels that each touch a few kilobytes. Each
finishes in a microsecond or two, but the CPU needs several microseconds to launch it (Python,
the dispatcher, the CUDA driver), so the GPU spends most of its time waiting for the next launch.
A CUDA graph records the whole chain once and replays it with one launch: the per-kernel cost
falls to what the GPU itself needs to start each kernel.

This lab runs a decode-like chain of tiny element-wise ops eagerly and as one captured graph,
for several chain lengths, and reports microseconds per kernel. On a CPU there are no graphs: the
CPU form reports eager time per op, the cost of getting one op through PyTorch.
"""

import time

import torch

from .catalog import LaunchParams  # torch-free: parameters, bounds
from .correctness import compare
from .device import DTYPES, Device, get_device, pinned_cpu_threads
from .kernel_count import count_kernels
from .result import Progress, ProgressFn, Result, new_result
from .timing import measure, sync, timing_method

# %%
# The chain: scale, shift, squash, over and over, like the small ops between a decode step's
# matmuls. tanh keeps values bounded however long the chain. The per-op vectors are separate
# tensors made up front, so the timed loop does nothing but launch kernels.


def make_chain(length: int, hidden: int, dtype: torch.dtype, device: str, seed: int = 0):
    g = torch.Generator(device=device).manual_seed(seed)
    scales = [(0.75 + 0.5 * torch.rand(hidden, generator=g, device=device)).to(dtype) for _ in range(length)]
    shifts = [(0.1 * torch.randn(hidden, generator=g, device=device)).to(dtype) for _ in range(length)]

    def chain(x: torch.Tensor) -> torch.Tensor:
        for i in range(length):
            step = i % 3
            if step == 0:
                x = x * scales[i]
            elif step == 1:
                x = x + shifts[i]
            else:
                x = torch.tanh(x)
        return x

    def reference(x: torch.Tensor) -> torch.Tensor:  # the same chain in float64
        for i in range(length):
            step = i % 3
            x = x * scales[i].double() if step == 0 else x + shifts[i].double() if step == 1 else torch.tanh(x)
        return x

    x = torch.randn(1, hidden, generator=g, device=device).to(dtype)
    return chain, reference, x


def capture_graph(chain, x: torch.Tensor):
    """Record `chain(x)` as one CUDA graph; returns (replay, static output).

    Warm up on a side stream first, as torch.cuda.graph requires: the first calls may allocate
    or pick kernels, and none of that may happen during capture.
    """
    static_x = x.clone()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            chain(static_x)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_out = chain(static_x)
    return graph.replay, static_out


# %%
# Measurement


@pinned_cpu_threads
def run(params: LaunchParams, progress: ProgressFn | None = None, device: Device | None = None) -> Result:
    """Eager vs graph replay per chain length: time per call and per kernel, and the ratio."""
    device = device or get_device()
    t_start = time.perf_counter()
    prog = Progress(progress)
    dtype = DTYPES[params.dtype]
    result = new_result(
        "launch_overhead",
        params,
        device,
        timing_method(device) + ". Per-kernel time = median time per call / ops in the chain (each op is one kernel).",
    )
    if not device.is_cuda:
        result.note("CUDA Graphs need a GPU: the CPU form times eager PyTorch only, per op")
    series = {"eager": [], "graph": []}
    for li, length in enumerate(params.lengths):
        prog(5 + 90 * li / len(params.lengths), f"chain of {length} ops")
        chain, reference, x = make_chain(length, params.hidden, dtype, device.torch_device, seed=li)
        eager_out = chain(x)
        result.add_check(
            f"eager {length} ops vs float64", compare(eager_out, reference(x.double()), params.dtype, scale=4)
        )
        fns = {"eager": lambda chain=chain, x=x: chain(x)}
        if device.is_cuda:
            replay, static_out = capture_graph(chain, x)
            replay()
            sync(device)
            # Same kernels, same inputs: the replay must agree with eager bit for bit.
            exact = compare(static_out, eager_out, "float32", scale=0)
            result.add_check(f"graph {length} ops == eager", exact)
            fns["graph"] = replay
        eager_ms = None
        for variant, fn in fns.items():
            timing = measure(fn, device)
            per_kernel_us = 1e3 * timing.median_ms / length
            eager_ms = timing.median_ms if variant == "eager" else eager_ms
            row = {
                "length": length,
                "variant": variant,
                "kernels": count_kernels(fn, device),
                "median_ms": timing.median_ms,
                "q25_ms": timing.q25_ms,
                "q75_ms": timing.q75_ms,
                "spread_pct": timing.spread_pct,
                "reps": timing.reps,
                "us_per_kernel": per_kernel_us,
                "speedup_vs_eager": eager_ms / timing.median_ms,
            }
            result.rows.append(row)
            series[variant].append((length, per_kernel_us))
    result.artifacts["plot"] = {
        "title": "Time per kernel vs chain length",
        "x_label": "ops in the chain",
        "y_label": "µs per kernel",
        "series": [{"name": k, "x": [p[0] for p in v], "y": [p[1] for p in v]} for k, v in series.items() if v],
    }
    result.elapsed_s = time.perf_counter() - t_start
    prog(100, "done")
    return result


COLUMNS = ("length", "variant", "kernels", "median_ms", "spread_pct", "us_per_kernel", "speedup_vs_eager")
