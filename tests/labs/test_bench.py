from labs import bench
from labs.experiments.runner import run_experiment


def test_bench_prints_device_versions_method_and_the_figures(capsys):
    assert bench.main(["--device", "cpu", "--only", "launch_overhead", "--no-honesty"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("device: CPU") and "versions:" in out and "method:" in out
    assert "eager_us_per_kernel" in out and "CUDA Graphs need a GPU" in out


def test_fusion_table_puts_variants_side_by_side_with_ratios():
    result = run_experiment(
        "fused_vs_unfused", {"sizes": "8x64,16x64", "chains": "swiglu", "variants": "eager"}, device="cpu"
    )
    result["rows"].append({**result["rows"][0], "variant": "compile", "median_ms": result["rows"][0]["median_ms"] / 2})
    table = bench.fusion_table(result)
    assert "speedup_compile" in table and "2.00x" in table and "copy roof" in table and "eager_wall_ms" in table


def test_attention_table_shows_skips_and_ratios():
    result = run_experiment("attention", {"seq_lens": "32", "heads": 1, "head_dim": 16}, device="cpu")
    table = bench.attention_table(result)
    assert "speedup_vs_flash" in table and "needs a CUDA GPU" in table
