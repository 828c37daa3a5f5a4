"""Counting what one call launches: device kernels (torch.profiler) or, on a CPU, ATen operators.

Fusion is about fewer kernels as much as fewer bytes; the labs report both.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import torch

from .device import Device


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
    kernels = [
        e
        for e in events
        if e.device_type == torch.autograd.DeviceType.CUDA and not e.name.startswith(("Memcpy", "Memset", "[memory]"))
    ]
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
