import json

import pytest
import torch

from labs.experiments import fused_vs_unfused as fused
from labs.experiments.correctness import compare
from labs.experiments.device import get_device
from labs.experiments.interpret import run_interpreter
from labs.experiments.kernel_count import count_aten_ops
from labs.experiments.timing import measure


def test_bytes_model_matches_hand_computed_values():
    bias_gelu, swiglu, ln = (fused.CHAIN_TABLE[c] for c in fused.CHAINS)
    # 64x8192 bf16: x and y are 1 MiB each, the bias 16 KiB.
    assert bias_gelu.min_bytes(64, 8192, 2) == 2 * 1048576 + 16384
    assert bias_gelu.eager_bytes(64, 8192, 2) == 4 * 1048576 + 16384
    assert swiglu.min_bytes(64, 8192, 2) == 3 * 1048576
    assert swiglu.eager_bytes(64, 8192, 2) == 5 * 1048576
    assert ln.min_bytes(64, 8192, 2) == 3 * 1048576 + 2 * 16384
    assert ln.eager_bytes(16384, 8192, 2) == 5 * 268435456 + 2 * 16384


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("chain", fused.CHAINS)
def test_eager_chains_match_the_float32_reference(chain, dtype):
    inputs = fused.make_inputs(chain, 33, 257, fused.DTYPES[dtype], "cpu", seed=3)
    out = fused.CHAIN_TABLE[chain].eager(*inputs)
    assert compare(out, fused.reference(chain, inputs), dtype)["passed"]


def test_eager_chains_dispatch_one_aten_op_per_pytorch_op():
    for chain in fused.CHAINS:
        inputs = fused.make_inputs(chain, 4, 64, torch.float32, "cpu", seed=0)
        assert count_aten_ops(lambda c=chain, i=inputs: fused.CHAIN_TABLE[c].eager(*i)) == 2


def test_triton_kernels_match_the_reference_under_the_interpreter():
    checks = run_interpreter("fused_vs_unfused", {"dtype": ["float32", "bfloat16"]})
    assert len(checks) == 2 * len(fused.CHAINS) * len(fused.CHECK_SHAPES)
    assert all(c["passed"] for c in checks), [c for c in checks if not c["passed"]]


def test_cpu_run_compares_eager_and_compile_and_checks_triton_for_correctness_only(cpu):
    params = fused.FusedParams.from_dict({"sizes": "8x64"}, "cpu")
    result = fused.run(params, device=cpu).to_dict()
    json.dumps(result, allow_nan=False)
    assert result["checks"]["passed"]
    timed = [r for r in result["rows"] if r.get("median_ms") is not None]
    assert {(r["chain"], r["variant"]) for r in timed} == {(c, v) for c in fused.CHAINS for v in ("eager", "compile")}
    assert all(r["aten_ops"] == 2 for r in timed if r["variant"] == "eager")
    assert all(r["wall_ms"] > 0 for r in timed)  # host-inclusive time per call, back to back
    interpreted = [r for r in result["rows"] if r["variant"] == "triton (interpreter)"]
    assert interpreted and all(r["median_ms"] is None and r["passed"] for r in interpreted)
    assert any("TRITON_INTERPRET=1" in n and "correctness only" in n for n in result["notes"])
    assert result["artifacts"]["copy_roof"]["gbps"] > 0 and "fused:" in result["artifacts"]["bytes_model"]["swiglu"]


# --- GPU -----------------------------------------------------------------------------------------


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_triton_kernels_match_the_reference_on_the_gpu(dtype):
    shapes = fused.CHECK_SHAPES + ((4096, 8192), (2, 16384), (1000, 1000))
    checks = fused.check_triton_kernels("cuda", dtype, shapes=shapes)
    assert all(c["passed"] for c in checks), [c for c in checks if not c["passed"]]


@pytest.mark.gpu
@pytest.mark.parametrize("chain_name", fused.CHAINS)
def test_kernel_counts_eager_two_compiled_and_triton_one(cuda, chain_name):
    from labs.experiments.kernel_count import count_kernels

    chain = fused.CHAIN_TABLE[chain_name]
    inputs = fused.make_inputs(chain_name, 256, 1024, torch.bfloat16, "cuda", seed=0)
    compiled = torch.compile(chain.eager, dynamic=False)
    assert count_kernels(lambda: chain.eager(*inputs), cuda) == chain.eager_kernels
    assert count_kernels(lambda: compiled(*inputs), cuda) == 1
    assert count_kernels(lambda: chain.triton(*inputs), cuda) == 1


@pytest.mark.gpu
def test_lab_median_agrees_with_an_independent_do_bench(cuda):
    import triton.testing

    inputs = fused.make_inputs("swiglu", 16384, 8192, torch.bfloat16, "cuda", seed=0)
    fn = lambda: fused.swiglu_triton(*inputs)  # noqa: E731
    medians = [measure(fn, cuda).median_ms for _ in range(5)]
    independent = triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median")
    median = sorted(medians)[2]
    assert abs(median - independent) / independent <= 0.05
    assert (max(medians) - min(medians)) / median <= 0.03


@pytest.mark.gpu
def test_fused_triton_kernels_reach_90_percent_of_copy_bandwidth(cuda):
    params = fused.FusedParams.from_dict({"sizes": "16384x8192", "variants": "triton"})
    result = fused.run(params, device=get_device("cuda")).to_dict()
    assert result["checks"]["passed"]
    for row in result["rows"]:
        assert row["pct_of_copy"] >= 90, row
