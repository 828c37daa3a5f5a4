import json

import pytest

from labs import bench
from labs.experiments.device import get_device
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


def test_json_writes_one_named_row_per_figure_with_its_device_versions_and_method(tmp_path, capsys):
    out, results = tmp_path / "figures.json", tmp_path / "results.json"
    assert (
        bench.main(
            [
                "--device",
                "cpu",
                "--only",
                "launch_overhead",
                "--no-honesty",
                "--json",
                str(out),
                "--results",
                str(results),
            ]
        )
        == 0
    )
    doc = json.loads(out.read_text())
    assert doc["device"].startswith("CPU") and doc["versions"]["torch"] and doc["methods"]["events"]
    names = [r["name"] for r in doc["figures"]]
    assert "launch_200_eager_us_per_kernel" in names and len(names) == len(set(names))
    for row in doc["figures"]:
        assert {"value", "unit", "decimals", "method", "device", "versions"} <= set(row), row["name"]
    assert json.loads(results.read_text())["launch_overhead"]["rows"]
    assert len(out.read_text().splitlines()) > len(doc["figures"])  # one row per line, for readable diffs


def test_fusion_figures_name_rows_by_what_was_measured_and_keep_both_clocks_at_launch_bound_sizes():
    result = run_experiment(
        "fused_vs_unfused", {"sizes": "8x64", "chains": "swiglu", "variants": "eager"}, device="cpu"
    )
    result["rows"].append({**result["rows"][0], "variant": "compile", "median_ms": result["rows"][0]["median_ms"] / 2})
    rows = {r["name"]: r for r in bench.fusion_figures(result, get_device("cpu")) if r}
    assert rows["swiglu_8x64_eager_us"]["unit"] == "µs"
    assert "wall-clock" in rows["swiglu_8x64_eager_wall_us"]["method"]
    assert rows["swiglu_8x64_compile_speedup"]["value"] == pytest.approx(2.0)
    assert rows["copy_roof_tbps"]["unit"] == "TB/s"


def test_figures_document_refuses_duplicate_names():
    row = {"name": "a_ms", "value": 1.0, "unit": "ms", "decimals": 1, "method": "m", "what": "w"}
    with pytest.raises(ValueError, match="duplicate figure names: a_ms"):
        bench.figures_document(get_device("cpu"), {"torch": "x"}, [row, dict(row)], command="test")


def test_the_course_loader_reads_what_the_bench_writes(tmp_path):
    from quizzes.figures import read_figures

    out = tmp_path / "figures.json"
    assert bench.main(["--device", "cpu", "--only", "launch_overhead", "--no-honesty", "--json", str(out)]) == 0
    figures = read_figures(out)
    assert figures["launch_10_eager_us_per_kernel"].text.endswith(" µs")
