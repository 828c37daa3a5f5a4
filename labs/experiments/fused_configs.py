"""The fused kernels' launch configurations per device, read from fused_configs.json (torch-free).

    launch_table("NVIDIA H200")["bias_gelu"]  # {"tile": ..., "block_n": ..., "warps": ...}

A device takes the first entry whose key its name contains (case-insensitive), each chain's fields
over the "default" entry's, so an entry may set only what differs. `fused_tuning --sweep --write`
adds or replaces the entry of the device it runs on.
"""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path

TABLE_PATH = Path(__file__).with_name("fused_configs.json")
CHAINS = ("bias_gelu", "swiglu", "residual_layernorm")


@functools.cache
def load_table(path: Path = TABLE_PATH) -> dict[str, dict]:
    data = json.loads(path.read_text())
    return {k: v for k, v in data.items() if not k.startswith("_")}


def table_key(device_name: str | None, table: dict[str, dict]) -> str:
    """Which entry a device uses: the first key (in file order) its name contains, else "default"."""
    name = (device_name or "").lower()
    for key in table:
        if key != "default" and key.lower() in name:
            return key
    return "default"


def launch_table(device_name: str | None, table: dict[str, dict] | None = None) -> dict[str, dict]:
    """Each chain's configuration for this device: its entry's fields over the default's."""
    table = load_table() if table is None else table
    merged = copy.deepcopy(table["default"])
    for chain, fields in table.get(table_key(device_name, table), {}).items():
        merged.setdefault(chain, {}).update(fields)
    return merged


def with_entry(table_path: Path, key: str, entry: dict[str, dict]) -> dict:
    """The file's contents with `key`'s entry replaced (the "_about" note and other devices kept)."""
    data = json.loads(table_path.read_text())
    data[key] = entry
    return data
