import json
import subprocess
import sys
from pathlib import Path

import pytest

from labs.experiments import roofline as rl
from labs.experiments.catalog import validate_params
from labs.experiments.config import configured
from labs.experiments.params import ParamError
from labs.experiments.runner import run_experiment

REPO = Path(__file__).resolve().parents[2]

# 1 TB/s and 100 TFLOP/s: the ridge point is at 100 FLOP/byte.
ROOFS = {"device": "test GPU", "bandwidth_bytes_per_s": 1e12, "compute_flops_per_s": 1e14, "compute_dtype": "bf16"}


@pytest.fixture(autouse=True)
def cache_in_tmp(tmp_path):
    with configured(cache_dir=tmp_path / "cache"):
        yield


def test_place_memory_bound_point():
    # AI = 1e9 / 1e9 = 1 FLOP/byte < 100: memory-bound. Attainable = min(1e14, 1 * 1e12) = 1e12 FLOP/s.
    # In 2 ms: 5e11 FLOP/s and 5e11 B/s, 50% of the bandwidth roof.
    (p,) = rl.place([("elementwise", 1e9, 1e9, 2e-3)], ROOFS)
    assert p["arithmetic_intensity"] == 1.0 and p["bound"] == "memory"
    assert p["attainable_flops_per_s"] == 1e12
    assert p["achieved_flops_per_s"] == pytest.approx(5e11) and p["achieved_gbps"] == pytest.approx(500)
    assert p["pct_of_roof"] == pytest.approx(50) and p["ridge_flop_per_byte"] == 100
    assert p["verdict"].startswith("elementwise is memory-bound") and "50%" in p["verdict"]
    assert p["verdict"].endswith(".") and p["verdict"].count(". ") == 0  # one sentence


def test_place_compute_bound_point_and_the_ridge_itself():
    # AI = 1e12 / 1e9 = 1000 > 100: compute-bound, attainable = the 1e14 peak. In 20 ms: 5e13, 50%.
    (p, ridge) = rl.place(
        [
            {"name": "matmul", "flops": 1e12, "bytes": 1e9, "seconds": 0.02, "extra": 7},
            ("at the ridge", 1e11, 1e9, 1e-3),
        ],
        ROOFS,
    )
    assert p["bound"] == "compute" and p["attainable_flops_per_s"] == 1e14
    assert p["pct_of_roof"] == pytest.approx(50) and p["achieved_tflops"] == pytest.approx(50)
    assert p["extra"] == 7 and "compute-bound" in p["verdict"]
    # AI exactly 100 is not below the ridge: compute-bound; 1e11 FLOP in 1 ms = 1e14, 100%.
    assert ridge["bound"] == "compute" and ridge["pct_of_roof"] == pytest.approx(100)
    assert ridge["attainable_flops_per_s"] == pytest.approx(1e14)


def test_place_flags_kernels_far_below_or_above_their_roof():
    tiny, over = rl.place([("tiny op", 4096, 12288, 5e-6), ("cached", 1e6, 1e9, 1e-4)], ROOFS)
    # 12288 B in 5 us = 2.5 GB/s, 0.25% of 1 TB/s: launch-bound, not roof-bound.
    assert tiny["pct_of_roof"] == pytest.approx(0.24576) and "launch overhead" in tiny["verdict"]
    assert over["pct_of_roof"] == pytest.approx(1000) and "above the roof" in over["verdict"]
    with pytest.raises(ValueError):
        rl.place([("no time", 1, 1, 0)], ROOFS)


def test_roofline_plot_draws_both_roofs_meeting_at_the_ridge():
    placed = rl.place([("a", 1e9, 1e9, 2e-3), ("b", 1e12, 1e9, 0.02)], ROOFS)
    plot = rl.roofline_plot(ROOFS, placed)
    bw, compute, a, b = plot["series"]
    assert plot["x_log"] and plot["y_log"] and plot["y_label"] == "TFLOP/s"
    assert bw["x"][1] == compute["x"][0] == 100 and bw["y"][1] == compute["y"][0] == compute["y"][1] == 100
    assert bw["y"][0] == pytest.approx(bw["x"][0] * 1e12 / 1e12)
    assert (a["x"], a["y"]) == ([1.0], [pytest.approx(0.5)]) and (b["x"], b["y"]) == ([1000.0], [pytest.approx(50)])
    assert bw["x"][0] <= 1.0 and compute["x"][1] >= 1000


def test_calibration_is_measured_once_then_loaded_from_the_cache(cpu, tmp_path):
    first = run_experiment("roofline", {"matmul_size": 256}, device="cpu")
    roofs = first["artifacts"]["roofs"]
    assert first["artifacts"]["cache"]["hit"] is False
    assert roofs["bandwidth_bytes_per_s"] > 0 and roofs["compute_flops_per_s"] > 0
    assert roofs["ridge_flop_per_byte"] == pytest.approx(roofs["compute_flops_per_s"] / roofs["bandwidth_bytes_per_s"])
    assert Path(first["artifacts"]["cache"]["path"]).parent == tmp_path / "cache"
    second = run_experiment("roofline", {"matmul_size": 256}, device="cpu")
    assert second["artifacts"]["cache"]["hit"] is True and second["artifacts"]["roofs"] == roofs
    assert any("loaded from" in n for n in second["notes"])
    assert [r["roof"] for r in second["rows"]] == ["bandwidth (copy)", "compute (float32 matmul 256^3)", "ridge point"]
    assert second["rows"][2]["value"] == pytest.approx(roofs["ridge_flop_per_byte"])
    assert len(second["artifacts"]["plot"]["series"]) == 2
    json.dumps(second, allow_nan=False)
    # Another matmul size is another calibration; recalibrate measures again.
    assert run_experiment("roofline", {"matmul_size": 512}, device="cpu")["artifacts"]["cache"]["hit"] is False
    again = run_experiment("roofline", {"matmul_size": 256, "recalibrate": True}, device="cpu")
    assert again["artifacts"]["cache"]["hit"] is False
    assert [r["matmul_size"] for r in rl.cached_roofs(roofs["device"], "cpu")] in ([256, 512], [512, 256])
    assert rl.cached_roofs("no such device") == []


@pytest.fixture(scope="module")
def small_results():
    return {
        "fused_vs_unfused": run_experiment(
            "fused_vs_unfused", {"sizes": "8x64,16x128", "variants": "eager"}, device="cpu"
        ),
        "launch_overhead": run_experiment("launch_overhead", {"lengths": "3,7", "hidden": 32}, device="cpu"),
        "attention": run_experiment(
            "attention",
            {"seq_lens": "32", "heads": 1, "head_dim": 16, "variants": "naive,sdpa_flash,sdpa_math"},
            device="cpu",
        ),
    }


@pytest.mark.parametrize("experiment", ["fused_vs_unfused", "launch_overhead", "attention"])
def test_points_from_a_real_cpu_result_of_each_experiment(small_results, experiment):
    result = small_results[experiment]
    timed = [r for r in result["rows"] if r.get("median_ms") is not None]
    points = rl.points_from_result(result)
    assert len(points) == len(timed) > 0
    for p in points:
        assert p["flops"] > 0 and p["bytes"] > 0 and p["seconds"] > 0 and p["bytes_model"] and p["flops_model"]
        assert p["seconds"] == pytest.approx(result["rows"][p["row"]]["median_ms"] * 1e-3)
    view = rl.roofline_view(result, ROOFS)
    assert len(view["points"]) == len(points) and all(p["verdict"] for p in view["points"])
    assert len(view["plot"]["series"]) == 2 + len(points)
    json.dumps(view, allow_nan=False)


def test_point_models_by_hand(small_results):
    fused = {p["name"]: p for p in rl.points_from_result(small_results["fused_vs_unfused"])}
    # swiglu eager 8x64 float32: silu reads a, writes t; mul reads t, b, writes y: 5 * 512 * 4 bytes; 3 FLOP each.
    assert fused["swiglu eager 8x64"]["bytes"] == 5 * 8 * 64 * 4 and fused["swiglu eager 8x64"]["flops"] == 3 * 512
    launch = {p["name"]: p for p in rl.points_from_result(small_results["launch_overhead"])}
    # 7 ops over 32 float32 elements: mul, add, tanh, mul, add, tanh, mul = 5 * 3*128 + 2 * 2*128 bytes.
    assert launch["chain of 7 ops, eager"]["bytes"] == 5 * 3 * 128 + 2 * 2 * 128
    assert launch["chain of 7 ops, eager"]["flops"] == 7 * 32
    attention = {p["name"]: p for p in rl.points_from_result(small_results["attention"])}
    # B=1, H=1, N=32, d=16, float32: fused moves Q, K, V, O once = 4 * 32*16*4 bytes.
    assert attention["attention sdpa_flash N=32"]["bytes"] == 4 * 32 * 16 * 4
    # naive in float32: Q K^T (2*2048 + 4096), scale (8192), softmax (8192), P V (4096 + 2*2048).
    assert attention["attention naive N=32"]["bytes"] == 2 * 2048 + 4096 + 8192 + 8192 + 4096 + 2 * 2048
    assert attention["attention naive N=32"]["flops"] == 4 * 32 * 32 * 16


def test_experiments_without_timings_give_no_points():
    assert rl.points_from_result({"experiment": "flash_tiling_trace", "rows": [{"seq_len": 8}]}) == []
    assert (
        rl.points_from_result(
            {
                "experiment": "attention",
                "params": {"batch": 1, "heads": 1, "head_dim": 16, "dtype": "float32", "causal": False},
                "rows": [{"seq_len": 32, "variant": "naive", "flops": 1, "skipped": "oom"}],
            }
        )
        == []
    )


def test_place_and_points_need_no_torch():
    code = (
        "import sys, json; from labs.experiments import roofline as rl; "
        "r = {'experiment': 'launch_overhead', 'params': {'hidden': 32, 'dtype': 'float32'}, "
        "'rows': [{'length': 3, 'variant': 'eager', 'median_ms': 0.01}]}; "
        "v = rl.roofline_view(r, {'bandwidth_bytes_per_s': 1e12, 'compute_flops_per_s': 1e14}); "
        "print(json.dumps([len(v['points']), sorted(m for m in sys.modules if m.split('.')[0] in "
        "('torch', 'triton', 'numpy'))]))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == [1, []]


@pytest.mark.parametrize(
    "values,kind,field",
    [
        ({"matmul_size": 100}, "cuda", "matmul_size"),
        ({"matmul_size": 4096}, "cpu", "matmul_size"),
        ({"dtype": "fp8"}, "cuda", "dtype"),
    ],
)
def test_bounds_are_enforced_naming_the_field(values, kind, field):
    with pytest.raises(ParamError) as e:
        validate_params("roofline", values, device_kind=kind)
    assert e.value.field == field


def test_defaults_depend_on_the_device():
    assert (
        validate_params("roofline", {}, device_kind="cuda").matmul_size,
        validate_params("roofline", {}, device_kind="cuda").dtype,
    ) == (8192, "bfloat16")
    assert validate_params("roofline", {}, device_kind="cpu").dtype == "float32"


@pytest.mark.gpu
def test_gpu_roofs_are_plausible_and_attention_lands_on_the_right_side(cuda):
    result = run_experiment("roofline", {"recalibrate": True}, device="cuda")
    roofs = result["artifacts"]["roofs"]
    print(json.dumps(result["rows"]))
    assert roofs["bandwidth_gbps"] > 500 and roofs["compute_tflops"] > 50
    assert 20 < roofs["ridge_flop_per_byte"] < 2000
    attention = run_experiment(
        "attention", {"seq_lens": "256,4096", "heads": 8, "variants": "naive,sdpa_flash"}, device="cuda"
    )
    placed = {p["name"]: p for p in rl.place(rl.points_from_result(attention), roofs)}
    for p in placed.values():
        print(p["verdict"])
    assert placed["attention sdpa_flash N=4096"]["bound"] == "compute"
    assert placed["attention naive N=256"]["bound"] == "memory"
