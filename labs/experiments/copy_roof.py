"""The copy roof: the fastest any memory-bound kernel can go on this device, measured.

Datasheet bandwidth is a lead, not a roof: the copy kernel on this device is what a perfect
element-wise kernel can hope to match, so the labs put achieved bandwidth against it.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .device import Device
from .params import MiB, human_bytes
from .timing import Timing, measure


@dataclass(frozen=True)
class CopyRoof:
    bytes_moved: int
    timing: Timing
    method: str

    @property
    def gbps(self) -> float:
        return self.bytes_moved / (self.timing.median_ms * 1e-3) / 1e9

    def to_dict(self) -> dict:
        return {
            "bytes_moved": self.bytes_moved,
            "gbps": self.gbps,
            "timing": self.timing.to_dict(),
            "method": self.method,
        }


_ROOFS: dict[str, CopyRoof] = {}


def copy_roof(device: Device, *, fresh: bool = False) -> CopyRoof:
    """Measured device copy bandwidth (bytes read + written per second), once per process and device.

    fresh=True measures again (a recalibration) instead of returning this process's earlier figure.
    """
    key = device.torch_device
    if fresh:
        _ROOFS.pop(key, None)
    if key not in _ROOFS:
        if device.is_cuda:
            # 512 MiB of bf16, ten times the H100's L2, so the copy streams from HBM. clone() is the
            # copy behind NOTES.md's percentages; the caching allocator keeps it from paying for cudaMalloc.
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
