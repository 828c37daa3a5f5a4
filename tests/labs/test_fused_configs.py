"""The fused kernels' launch configurations per device (fused_configs.json) and the sweep that chooses them."""

import json
import subprocess
import sys

import pytest

from labs.experiments import fused_vs_unfused as fused
from labs.experiments.fused_configs import CHAINS, TABLE_PATH, launch_table, load_table, table_key, with_entry
from labs.experiments.fused_tuning import CANDIDATES, table_entry_key
from tests.conftest import REPO

TABLE = {
    "default": {
        "bias_gelu": {"tile": 4096, "block_n": 512, "warps": 4},
        "swiglu": {"block": 2048, "warps": 8},
        "residual_layernorm": {"tile": 4096, "warps": None},
    },
    "H100": {"swiglu": {"block": 2048, "warps": 8}},
    "H200": {"bias_gelu": {"tile": 16384, "warps": 8}},
}


def test_a_device_takes_its_entry_by_name_and_the_default_for_the_rest():
    assert table_key("NVIDIA H200", TABLE) == "H200"
    assert table_key("NVIDIA H100 80GB HBM3", TABLE) == "H100"
    assert table_key("NVIDIA A100-SXM4-80GB", TABLE) == "default" and table_key(None, TABLE) == "default"
    h200 = launch_table("NVIDIA H200", TABLE)
    assert h200["bias_gelu"] == {"tile": 16384, "block_n": 512, "warps": 8}  # its fields over the default's
    assert h200["swiglu"] == TABLE["default"]["swiglu"]
    assert TABLE["default"]["bias_gelu"]["tile"] == 4096  # the table itself is not changed by merging


def test_the_shipped_table_keeps_the_h100_launches_the_lab_was_tuned_with():
    assert set(load_table()["default"]) == set(CHAINS)
    name = "NVIDIA H100 80GB HBM3"
    assert fused.bias_gelu_config(16384, 8192, name) == (8, 512, 4)
    assert fused.swiglu_config(16384 * 8192, name) == (2048, 8)
    assert fused.layernorm_config(16384, 8192, name) == (1, 8192, 16)
    assert fused.bias_gelu_config(3, 1000, None) == (4, 512, 4)  # small shapes: blocks shrink to fit


@pytest.mark.parametrize("chain", CHAINS)
def test_every_sweep_candidate_gives_a_launch_triton_accepts(chain):
    launch = {
        "bias_gelu": lambda cfg, r, c: fused.bias_gelu_config(r, c, cfg=cfg),
        "swiglu": lambda cfg, r, c: fused.swiglu_config(r * c, cfg=cfg),
        "residual_layernorm": lambda cfg, r, c: fused.layernorm_config(r, c, cfg=cfg),
    }[chain]
    for cfg in CANDIDATES[chain]:
        for rows, cols in ((16384, 8192), (3, 1000), (130, 768)):
            *blocks, warps = launch(cfg, rows, cols)
            assert all(b >= 1 and b & (b - 1) == 0 for b in blocks), (cfg, blocks)
            assert warps in (1, 2, 4, 8, 16, 32), (cfg, warps)


def test_a_sweep_writes_its_device_entry_and_keeps_the_others(tmp_path):
    path = tmp_path / "table.json"
    path.write_text(TABLE_PATH.read_text())
    entry = {"bias_gelu": {"tile": 8192, "block_n": 1024, "warps": 8}}
    data = with_entry(path, table_entry_key("NVIDIA H200"), entry)
    assert data["H200"] == entry and data["default"] == json.loads(TABLE_PATH.read_text())["default"]
    assert "_about" in data
    assert table_entry_key("NVIDIA H100 80GB HBM3") == "H100"


def run_cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "labs.experiments.fused_tuning", *args], cwd=REPO, capture_output=True, text=True
    )


def test_show_prints_what_a_device_uses_without_a_gpu():
    out = run_cli("--show", "--device-name", "NVIDIA H100 80GB HBM3")
    assert out.returncode == 0, out.stderr
    shown = json.loads(out.stdout)
    assert shown["entry"] == "H100" and shown["bias_gelu"]["block_n"] == 512


def test_the_sweep_says_it_needs_a_gpu_on_a_cpu_machine():
    pytest.importorskip("torch")
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is here: the sweep would run")
    out = run_cli("--sweep")
    assert out.returncode == 2 and "needs a CUDA GPU" in out.stderr
