"""The machine a lab runs on: the device, its torch threads on a CPU, and the library versions.

A lab result must say which device and which library versions produced each number; these are
what `result.new_result` records.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import importlib.metadata
import os
import platform
from collections.abc import Callable
from dataclasses import dataclass

import torch

from . import config
from .params import DTYPE_NAMES, ParamError, human_bytes
from .triton_shim import triton_or_none

# Element type names (params.DTYPE_NAMES) to torch dtypes: the worker side of the mapping.
DTYPES: dict[str, torch.dtype] = {name: getattr(torch, name) for name in DTYPE_NAMES}


def torch_dtype(name: str) -> torch.dtype:
    """The torch dtype for a parsed dtype name ("bfloat16" -> torch.bfloat16)."""
    return DTYPES[name]


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
    # Which physical GPU: a process pinned with CUDA_VISIBLE_DEVICES sees any GPU as index 0.
    uuid: str | None = None
    pci_bus_id: str | None = None

    @property
    def torch_device(self) -> str:
        return f"cuda:{self.index}" if self.kind == "cuda" else "cpu"

    @property
    def is_cuda(self) -> bool:
        return self.kind == "cuda"

    def describe(self) -> str:
        if self.is_cuda:
            where = f", {self.uuid}" if self.uuid else ""
            where += f" at {self.pci_bus_id}" if self.pci_bus_id else ""
            return (
                f"{self.name} (sm_{self.capability}, {self.sm_count} SMs, {human_bytes(self.memory_bytes)}, "
                f"L2 {human_bytes(self.l2_bytes or 0)}{where})"
            )
        return (
            f"CPU: {self.name} ({self.cpu_cores} cores, {human_bytes(self.memory_bytes)} RAM, "
            f"{self.torch_threads} torch threads)"
        )

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
    return Device(
        kind="cuda",
        index=index,
        name=p.name,
        memory_bytes=p.total_memory,
        sm_count=p.multi_processor_count,
        capability=f"{p.major}{p.minor}",
        l2_bytes=getattr(p, "L2_cache_size", None),
        **gpu_identity(p, index),
    )


def gpu_identity(props, index: int) -> dict[str, str | None]:
    """{"uuid": "GPU-...", "pci_bus_id": "00000000:18:00.0"} of the GPU torch calls `index`.

    From torch's device properties where this torch has them (uuid since 2.0, the PCI ids since
    2.5), else from nvidia-smi, whose rows are in CUDA_VISIBLE_DEVICES order only after selection.
    """
    uuid = getattr(props, "uuid", None)
    uuid = f"GPU-{uuid}" if uuid is not None and not str(uuid).startswith("GPU-") else (str(uuid) if uuid else None)
    bus = None
    if all(hasattr(props, a) for a in ("pci_domain_id", "pci_bus_id", "pci_device_id")):
        bus = f"{props.pci_domain_id:08X}:{props.pci_bus_id:02X}:{props.pci_device_id:02X}.0"
    if uuid and bus:
        return {"uuid": uuid, "pci_bus_id": bus}
    smi = _nvidia_smi_identity(index)
    return {"uuid": uuid or smi.get("uuid"), "pci_bus_id": bus or smi.get("pci_bus_id")}


def _nvidia_smi_identity(index: int) -> dict[str, str]:
    import shutil
    import subprocess

    smi = shutil.which("nvidia-smi")
    if not smi:
        return {}
    try:
        out = subprocess.run(
            [smi, "--query-gpu=uuid,pci.bus_id", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout
    except (subprocess.SubprocessError, OSError):
        return {}
    rows = [[f.strip() for f in line.split(",")] for line in out.splitlines() if line.count(",") == 1]
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible:
        order = []
        for item in (v.strip() for v in visible.split(",")):
            match = [r for i, r in enumerate(rows) if item == str(i) or r[0] == item or r[0] == f"GPU-{item}"]
            if not match:
                break
            order.append(match[0])
        rows = order
    if index >= len(rows):
        return {}
    return {"uuid": rows[index][0], "pci_bus_id": rows[index][1]}


def _cpu_device() -> Device:
    return Device(
        kind="cpu",
        name=_cpu_model(),
        memory_bytes=_ram_bytes(),
        cpu_cores=os.cpu_count(),
        torch_threads=torch.get_num_threads(),
    )


# CPU-form labs run with a fixed thread count (config.py says why), set for the whole run.


@contextlib.contextmanager
def cpu_threads(n: int | None = None):
    """Run the block with `n` torch threads (default: the configured count), then restore the previous count."""
    n = config.current().cpu_threads if n is None else n
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def pinned_cpu_threads(run: Callable) -> Callable:
    """Decorator for an experiment's run(params, progress, device): on a CPU, run with the configured threads."""

    @functools.wraps(run)
    def wrapper(params, progress=None, device=None):
        device = device or get_device()
        if device.is_cuda:
            return run(params, progress, device)
        n = config.current().cpu_threads
        with cpu_threads(n):
            return run(params, progress, dataclasses.replace(device, torch_threads=n))

    return wrapper


def _dist_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


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
