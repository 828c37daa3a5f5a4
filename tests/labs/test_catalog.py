import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from labs.experiments.__main__ import main as cli
from labs.experiments.catalog import CATALOG, catalog, validate_params
from labs.experiments.config import DEFAULT_CPU_THREADS as CPU_THREADS
from labs.experiments.params import ParamError
from labs.experiments.runner import run_experiment

REPO = Path(__file__).resolve().parents[2]


def test_catalog_names_each_experiment_with_its_section():
    assert {e.id: e.section for e in CATALOG.values()} == {
        "fused_vs_unfused": "fusion",
        "launch_overhead": "cuda-graphs",
        "attention": "flashattention",
        "flash_tiling_trace": "flashattention",
        "roofline": "roofline",
    }
    for entry in catalog("cpu"):
        assert entry["estimated_seconds"] > 0 and entry["params"] and entry["title"]
        json.dumps(entry, allow_nan=False)


def test_unknown_experiment_is_rejected_naming_the_experiment():
    with pytest.raises(ParamError) as e:
        validate_params("warp_speed", {})
    assert e.value.field == "experiment"


def test_validation_uses_the_target_devices_memory_and_defaults():
    params = validate_params(
        "fused_vs_unfused", {"sizes": "16384x8192"}, device_kind="cuda", device_memory_bytes=80 * 2**30
    )
    assert params.dtype == "bfloat16"
    with pytest.raises(ParamError) as e:
        validate_params(
            "attention",
            {"seq_lens": "65536", "heads": 64, "batch": 8},
            device_kind="cuda",
            device_memory_bytes=16 * 2**30,
        )
    assert e.value.field == "seq_lens"


def test_run_experiment_returns_a_json_serializable_result_and_reports_progress():
    seen = []
    threads_before = torch.get_num_threads()
    result = run_experiment(
        "launch_overhead",
        {"lengths": [2, 4], "hidden": 32},
        progress=lambda p, phase: seen.append((p, phase)),
        device="cpu",
    )
    # CPU labs run with a fixed thread count, say so, and leave the process as they found it.
    assert result["device"]["torch_threads"] == CPU_THREADS and f"{CPU_THREADS} torch thread" in result["method"]
    assert torch.get_num_threads() == threads_before
    assert json.loads(json.dumps(result, allow_nan=False))["experiment"] == "launch_overhead"
    assert seen[-1] == (100, "done") and [p for p, _ in seen] == sorted(p for p, _ in seen)
    assert result["device"]["kind"] == "cpu" and result["versions"]["torch"] and "perf_counter" in result["method"]


def test_cli_rejects_a_bad_parameter_naming_it(capsys):
    assert cli(["run", "fused_vs_unfused", "--device", "cpu", "--param", "sizes=64x3"]) == 2
    assert "sizes:" in capsys.readouterr().err


def test_cli_lists_the_catalog_and_runs_an_experiment_to_json(tmp_path):
    listing = subprocess.run(
        [sys.executable, "-m", "labs.experiments", "list"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout
    assert "fused_vs_unfused" in listing and "sizes=64x8192" in listing
    out = tmp_path / "out.json"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "labs.experiments",
            "run",
            "launch_overhead",
            "--device",
            "cpu",
            "--param",
            "lengths=5",
            "--param",
            "hidden=32",
            "--json",
            str(out),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "us_per_kernel" in run and "method:" in run
    assert json.loads(out.read_text())["rows"][0]["length"] == 5
