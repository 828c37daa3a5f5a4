"""What compute device a worker offers, found without importing torch.

The check runs in the worker's parent process before it forks; initialising CUDA there would
break CUDA in the children, so it asks `nvidia-smi` instead.

A device also has a *kind*, the short name learners ask for (`h100`, `h200`, ...) and the suffix
of the queue its workers take runs from (`gpu.h100`). `TILEWISE_DEVICE_KIND` overrides the kind a
worker announces (tests fake two kinds on CPU workers this way).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess

# Device kinds by what the GPU's name contains, first match wins (H200 before H100: no name has
# both). A GPU none of these match gets a kind from its model number ("NVIDIA A100-SXM4-80GB" ->
# "a100"), so a new kind needs no code: its workers announce it and learners can ask for it.
KNOWN_KINDS: tuple[tuple[str, str], ...] = (("h200", "H200"), ("h100", "H100"))
MODEL_PATTERN = re.compile(r"\b([A-Z]{1,3})?[\s-]?(\d{1,4}[A-Za-z]?)\b")  # "A100", "L4", "RTX 4090"
KIND_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")
ANY = "any"


def device_kind(name: str, kind: str = "cuda") -> str:
    """The kind a device of this name is asked for by: "h100", "h200", "a100", ... or "cpu"."""
    override = os.environ.get("TILEWISE_DEVICE_KIND", "").strip().lower()
    if override:
        return override
    if kind != "cuda":
        return "cpu"
    for slug, needle in KNOWN_KINDS:
        if needle.lower() in name.lower():
            return slug
    model = MODEL_PATTERN.search(re.sub(r"\b(NVIDIA|GeForce|Tesla|Quadro)\b", " ", name))
    return "".join(model.groups(default="")).lower() if model else "gpu"


def describe_device() -> dict[str, object]:
    """{"kind": "cuda" | "cpu", "device_kind", "name", "count", "memory_bytes", "gpus": [{uuid, pci_bus_id}]}.

    Honours CUDA_VISIBLE_DEVICES (indices or GPU UUIDs): a worker pinned to physical GPU 3 sees it
    as its GPU 0, so only the UUID and the PCI bus id say which physical GPU it is.
    """
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None and visible.strip() in {"", "-1"}:
        return _cpu()
    smi = shutil.which("nvidia-smi")
    if not smi:
        return _cpu()
    try:
        out = subprocess.run(
            [smi, "--query-gpu=name,memory.total,uuid,pci.bus_id", "--format=csv,noheader,nounits"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout
    except (subprocess.SubprocessError, OSError):
        return _cpu()
    gpus = parse_nvidia_smi(out)
    if visible:
        gpus = select_visible(gpus, visible)
    if not gpus:
        return _cpu()
    first = gpus[0]
    return {
        "kind": "cuda",
        "device_kind": device_kind(str(first["name"])),
        "name": first["name"],
        "count": len(gpus),
        "memory_bytes": first["memory_bytes"],
        "uuid": first["uuid"],
        "pci_bus_id": first["pci_bus_id"],
        "gpus": [{"uuid": g["uuid"], "pci_bus_id": g["pci_bus_id"]} for g in gpus],
    }


def parse_nvidia_smi(out: str) -> list[dict[str, object]]:
    """Rows of `nvidia-smi --query-gpu=name,memory.total,uuid,pci.bus_id --format=csv,noheader,nounits`."""
    gpus = []
    for line in out.splitlines():
        # A name may hold a comma; the last three fields never do.
        parts = line.rsplit(",", 3)
        if len(parts) != 4 or not parts[0].strip():
            continue
        name, mib, uuid, bus = (p.strip() for p in parts)
        gpus.append(
            {
                "name": name,
                "memory_bytes": int(mib) * 2**20 if mib.isdigit() else None,
                "uuid": uuid or None,
                "pci_bus_id": bus or None,
            }
        )
    return gpus


def select_visible(gpus: list[dict[str, object]], visible: str) -> list[dict[str, object]]:
    """The GPUs CUDA_VISIBLE_DEVICES shows, in its order: indices, or (prefixes of) GPU UUIDs."""
    chosen = []
    for item in (v.strip() for v in visible.split(",")):
        if item.isdigit():
            if int(item) < len(gpus):
                chosen.append(gpus[int(item)])
            else:
                break  # CUDA stops at the first invalid entry
        elif item:
            match = [g for g in gpus if str(g["uuid"] or "").startswith(item) or str(g["uuid"] or "") == f"GPU-{item}"]
            if not match:
                break
            chosen.append(match[0])
    return chosen


def _cpu() -> dict[str, object]:
    return {
        "kind": "cpu",
        "device_kind": device_kind("CPU", "cpu"),
        "name": "CPU",
        "count": os.cpu_count() or 1,
        "memory_bytes": None,
        "uuid": None,
        "pci_bus_id": None,
        "gpus": [],
    }
