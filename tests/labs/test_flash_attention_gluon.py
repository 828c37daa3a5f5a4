"""The Hopper FlashAttention in Gluon: compiled for sm_90 on the CPU, exact and timed on an H100."""

import dataclasses

import pytest
import torch

from labs.experiments import attention as att
from labs.experiments import flash_attention as fa
from labs.experiments import flash_attention_gluon as fg
from labs.experiments.correctness import compare
from labs.experiments.device import get_device

needs_gluon = pytest.mark.skipif(fg.GLUON_ERROR is not None, reason=fg.GLUON_ERROR or "")


def hopper() -> bool:
    return torch.cuda.is_available() and torch.cuda.get_device_capability()[0] == 9


# ---------------------------------------------------------------------------------------------
# On the CPU: Triton compiles for sm_90 ahead of time, no GPU needed
# ---------------------------------------------------------------------------------------------


@needs_gluon
@pytest.mark.parametrize("head_dim, causal, dtype", [(128, False, "bf16"), (64, True, "fp16")])
def test_compiles_for_hopper_with_async_tensor_cores_and_no_spills(head_dim, causal, dtype):
    info = fg.compile_for_hopper(head_dim, causal, dtype)
    assert info["spilled_bytes"] == 0, info
    assert info["shared_bytes"] <= 227 * 1024, info  # what one H100 SM offers a CTA
    assert info["warps"] == 12 and info["setmaxnreg"] > 0, info  # 2 compute warpgroups + the load warp's
    # Two key blocks per loop body (full and masked loops), S and P V each, per compute warpgroup:
    # head_dim / 16 + BLOCK_N / 16 wgmma instructions per block. If ptxas had serialized wgmma
    # (its C7511/C7514 fallback), every one would be followed by a wait.
    assert info["hgmma"] >= 4 * (head_dim // 16 + 128 // 16), info
    assert info["wgmma_waits"] <= info["hgmma"] // 4, info


@needs_gluon
def test_a_register_starved_schedule_is_caught():
    # The check above is not vacuous: squeezing the compute warpgroups to 152 registers spills.
    info = fg.compile_for_hopper(128, False, "bf16", config=(64, 128, 2, "overlap", 152, 24))
    assert info["spilled_bytes"] > 0 or info["wgmma_waits"] > info["hgmma"] // 4, info


def test_on_a_cpu_it_says_why_not(cpu):
    reason = fg.unavailable(cpu, "bfloat16")
    assert "Hopper" in reason and "interpreter" in reason
    with pytest.raises(RuntimeError):
        fg.build(torch.zeros(1, 1, 64, 64), torch.zeros(1, 1, 64, 64), torch.zeros(1, 1, 64, 64), False)()
    assert "gluon_flash" in att.VARIANTS and att.VARIANTS["gluon_flash"].unavailable(cpu, "bfloat16") == reason


def test_cpu_lab_run_notes_it_and_still_passes(cpu):
    params = att.AttentionParams.from_dict(
        {"seq_lens": "64", "heads": 2, "head_dim": 64, "variants": "naive,gluon_flash"}, "cpu"
    )
    result = att.run(params, device=cpu).to_dict()
    assert result["checks"]["passed"]
    assert any(n.startswith("gluon_flash: needs a Hopper GPU") for n in result["notes"])


def test_a_non_hopper_gpu_is_told_so(cpu, monkeypatch):
    gpu = dataclasses.replace(cpu, kind="cuda", index=0)
    monkeypatch.setattr(fg.torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(fg.torch.cuda, "get_device_capability", lambda device=None: (8, 0))
    expected = fg.GLUON_ERROR or "written for Hopper"
    assert expected in fg.unavailable(gpu, "bfloat16")


# ---------------------------------------------------------------------------------------------
# On a Hopper GPU
# ---------------------------------------------------------------------------------------------

# N = 64 and 128 fit in one key block; 1000 and 333 are ragged; 200 causal ends mid-block; 4 x 32
# heads at N = 1000 make 1024 tiles, more than an H100 has SMs, so each persistent CTA runs several
# (the double-buffered Q and the block count carried across tiles).
SHAPES = [
    (b, h, n, d, causal)
    for d in (64, 128)
    for causal in (False, True)
    for b, h, n in ((1, 2, 64), (1, 4, 128), (2, 3, 1000), (1, 2, 4096), (1, 2, 333), (4, 32, 1000))
] + [(1, 2, 200, 128, True)]


def _check(shapes, dtype, config=None):
    failed = []
    for i, (b, h, n, d, causal) in enumerate(shapes):
        g = torch.Generator(device="cuda").manual_seed(i)
        q, k, v = (torch.randn(b, h, n, d, generator=g, device="cuda", dtype=getattr(torch, dtype)) for _ in range(3))
        out = torch.full_like(q, float("nan"))  # an element the kernel never writes fails
        fg.flash_attention(q, k, v, causal, config=config, out=out)
        check = compare(out, fa.reference(q, k, v, causal), dtype)
        if not check["passed"]:
            failed.append(((b, h, n, d, causal), check["max_abs_error"]))
    return failed


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_exact_to_tolerance_on_every_shape(dtype):
    if not hopper():
        pytest.skip("needs a Hopper GPU")
    assert not _check(SHAPES, dtype)


@pytest.mark.gpu
@pytest.mark.parametrize("config", fg.SWEEP_CONFIGS)
def test_every_swept_schedule_is_exact(config):
    if not hopper():
        pytest.skip("needs a Hopper GPU")
    assert not _check([s for s in SHAPES if s[3] == 128 and s[2] in (333, 1000)], "bfloat16", config)


@pytest.mark.gpu
def test_gpu_lab_times_it_next_to_cudnn():
    if not hopper():
        pytest.skip("needs a Hopper GPU")
    params = att.AttentionParams.from_dict(
        {"seq_lens": "256,1000", "heads": 4, "head_dim": 128, "causal": True, "variants": "sdpa_cudnn,gluon_flash"},
        "cuda",
    )
    result = att.run(params, device=get_device("cuda")).to_dict()
    assert result["checks"]["passed"]
    timed = [r for r in result["rows"] if r["variant"] == "gluon_flash"]
    assert len(timed) == 2 and all(r["tflops"] > 0 and r["passed"] for r in timed)
