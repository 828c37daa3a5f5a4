import json

import pytest
import torch.nn.functional as F

from labs.experiments import attention as att
from labs.experiments.params import ParamError


def small(**overrides):
    values = {"seq_lens": "64,100", "heads": 2, "head_dim": 32, **overrides}
    return att.AttentionParams.from_dict(values, "cpu")


@pytest.mark.parametrize("causal", [False, True])
def test_cpu_run_checks_naive_and_available_backends_against_float32(cpu, causal):
    result = att.run(small(causal=causal), device=cpu).to_dict()
    json.dumps(result, allow_nan=False)
    assert result["checks"]["passed"]
    ran = {r["variant"] for r in result["rows"] if "median_ms" in r}
    assert {"naive", "sdpa_flash", "sdpa_math"} <= ran
    skipped = {r["variant"]: r["skipped"] for r in result["rows"] if "skipped" in r}
    assert "CUDA GPU" in skipped["sdpa_cudnn"] and "CUDA GPU" in skipped["sdpa_efficient"]
    assert all(r["tflops"] > 0 for r in result["rows"] if "tflops" in r)


def test_missing_flash_attn_says_who_stood_in(cpu):
    result = att.run(small(seq_lens="32", variants="sdpa_flash,flash_attn"), device=cpu).to_dict()
    assert any("stood in" in n for n in result["notes"])


def test_flops_count_two_matmuls_and_halve_for_causal():
    assert att.flops(1, 32, 4096, 128, False) == 4 * 32 * 4096**2 * 128
    assert att.flops(2, 1, 16, 8, True) == 4 * 2 * 16**2 * 8 / 2


def test_naive_runs_that_would_not_fit_are_skipped_with_the_reason():
    params = att.AttentionParams()  # 32 heads, d=128, bf16
    naive = att.VARIANTS["naive"]
    assert att.skip_reason(naive, params, 4096, free=80 * 10**9) is None
    reason = att.skip_reason(naive, params, 16384, free=80 * 10**9)
    assert reason and "needs about" in reason and "free" in reason
    assert att.skip_reason(att.VARIANTS["sdpa_flash"], params, 65536, free=10**9) is None


def test_a_registered_variant_joins_the_comparison(cpu):
    att.register_variant(
        att.AttentionVariant(
            "sdpa_default",
            "SDPA, backend left to PyTorch",
            lambda q, k, v, causal: lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal),
        )
    )
    try:
        assert "sdpa_default" in att.AttentionParams.defaults_for("cpu").variants
        result = att.run(small(seq_lens="32", variants="naive,sdpa_default"), device=cpu).to_dict()
        assert [r["variant"] for r in result["rows"]] == ["naive", "sdpa_default"] and result["checks"]["passed"]
    finally:
        del att.VARIANTS["sdpa_default"]


@pytest.mark.parametrize(
    "values, field",
    [
        ({"variants": "naive,mystery"}, "variants"),
        ({"seq_lens": "8"}, "seq_lens"),
        ({"head_dim": 36}, "head_dim"),
        ({"seq_lens": "4096", "heads": 32, "head_dim": 128}, "seq_lens"),  # far too much work for a CPU
    ],
)
def test_bad_requests_are_rejected_naming_the_field(values, field):
    with pytest.raises(ParamError) as e:
        att.AttentionParams.from_dict(values, "cpu").validate(device_kind="cpu")
    assert e.value.field == field


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("causal", [False, True])
def test_every_available_backend_matches_the_reference_on_the_gpu(cuda, dtype, causal):
    params = att.AttentionParams.from_dict(
        {"seq_lens": "256,1000", "heads": 4, "head_dim": 64, "dtype": dtype, "causal": causal}
    )
    result = att.run(params, device=cuda).to_dict()
    assert result["checks"]["passed"], [c for c in result["checks"]["items"] if not c["passed"]]
    ran = {r["variant"] for r in result["rows"] if "median_ms" in r}
    assert {"naive", "sdpa_flash", "sdpa_efficient", "sdpa_math"} <= ran


@pytest.mark.gpu
def test_naive_peak_memory_grows_with_the_scores_and_flash_does_not(cuda):
    params = att.AttentionParams.from_dict({"seq_lens": "4096", "variants": "naive,sdpa_flash"})
    rows = {r["variant"]: r for r in att.run(params, device=cuda).to_dict()["rows"]}
    scores = 32 * 4096 * 4096 * 2
    assert rows["naive"]["peak_extra_bytes"] > 2 * scores
    assert rows["sdpa_flash"]["peak_extra_bytes"] < scores / 4
