"""The course's Triton FlashAttention forward: interpreter on the CPU, exactness and speed on a GPU."""

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from labs.experiments import attention as att
from labs.experiments import flash_attention as fa
from labs.experiments import flash_attention_gluon as fg
from labs.experiments.catalog import BUILTIN_ATTENTION_VARIANTS
from labs.experiments.correctness import compare
from labs.experiments.device import get_device
from labs.experiments.triton_shim import triton_or_none

REPO = Path(__file__).resolve().parents[2]
needs_triton = pytest.mark.skipif(triton_or_none() is None, reason="triton not installed")

# Tiny shapes for the interpreter: N=64/128 at d=64, causal and not; a ragged N=50 (not a multiple
# of the 32 x 16 interpreter tiles) with two batches; d=32 to show the tile size follows d.
CPU_SHAPES = [
    (1, 2, 64, 64, False),
    (1, 2, 64, 64, True),
    (1, 1, 128, 64, False),
    (1, 1, 128, 64, True),
    (2, 1, 50, 64, True),
    (1, 1, 50, 32, False),
]


@needs_triton
def test_kernel_matches_float32_under_the_interpreter():
    from labs.experiments.interpret import run_interpreter

    checks = run_interpreter(
        "flash_attention",
        {
            "dtype": ["float32", "bfloat16"],
            "shapes": CPU_SHAPES,
            "variants": ["pointers", "tma", "tma_pipe", "tma_lazy_poly"],
        },
    )
    failed = [c["name"] for c in checks if not c["passed"]]
    assert not failed, failed
    variants = {c["variant"] for c in checks}
    assert "pointers" in variants and len(checks) == 2 * len(CPU_SHAPES) * len(variants)
    f32 = [c for c in checks if c["name"].endswith(f"float32 {c['variant']}")]
    # NumPy float32 all the way: only the order of the sums differs; the cubic 2^x of the _poly
    # variant adds its own relative error (< 1e-4)
    assert max(c["max_abs_error"] for c in f32 if "poly" not in c["variant"]) < 1e-5
    assert max(c["max_abs_error"] for c in f32) < 2e-4


@needs_triton
def test_interpreter_catches_a_wrong_kernel(monkeypatch):
    # The check is not vacuous: the same inputs with the wrong scale fail it.
    q, k, v = (torch.randn(1, 1, 64, 64) for _ in range(3))
    ref = fa.reference(q, k, v, causal=True)
    assert compare(fa.reference(q, k, v, causal=True, sm_scale=0.2), ref, "float32")["passed"] is False
    assert compare(fa.reference(q, k, v, causal=False), ref, "float32")["passed"] is False


def test_benchmark_cli_is_its_own_module_and_shows_its_help_without_a_gpu():
    out = subprocess.run(
        [sys.executable, "-m", "labs.experiments.flash_attention_bench", "--help"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "--rounds" in out.stdout and "--sweep" in out.stdout and "tma,gluon" in out.stdout


def test_registered_as_an_attention_variant():
    assert "triton_flash" in att.VARIANTS and BUILTIN_ATTENTION_VARIANTS[-2:] == ("triton_flash", "gluon_flash")
    assert att.VARIANTS["triton_flash"].title == "Tilewise Triton FlashAttention"
    assert "triton_flash" in att.AttentionParams.defaults_for("cuda").variants


def test_unavailable_reasons(cpu):
    gpu = dataclasses.replace(cpu, kind="cuda", index=0)
    if triton_or_none() is None:
        assert "not installed" in fa.unavailable(gpu, "bfloat16")
        return
    assert "CUDA GPU" in fa.unavailable(cpu, "bfloat16") and "interpret" in fa.unavailable(cpu, "bfloat16")
    assert fa.unavailable(gpu, "bfloat16") is None and fa.unavailable(gpu, "float16") is None
    assert "bf16 and fp16" in fa.unavailable(gpu, "float32")


@needs_triton
@pytest.mark.parametrize(
    "bad, match",
    [
        (dict(shape=(1, 1, 16, 48)), "head dim"),
        (dict(dtype=torch.float64), "not supported"),
    ],
)
def test_wrapper_rejects_what_it_cannot_run(bad, match):
    shape, dtype = bad.get("shape", (1, 1, 16, 64)), bad.get("dtype", torch.bfloat16)
    q = torch.zeros(shape, dtype=dtype)
    with pytest.raises(ValueError, match=match):
        fa.flash_attention(q, q, q)
    with pytest.raises(ValueError, match="shape"):
        fa.flash_attention(q, q[..., :8, :], q)


@needs_triton
def test_cpu_lab_checks_it_in_the_interpreter_without_timing_it(cpu):
    params = att.AttentionParams.from_dict(
        {"seq_lens": "64", "heads": 2, "head_dim": 64, "variants": "naive,triton_flash", "causal": True}, "cpu"
    )
    result = att.run(params, device=cpu).to_dict()
    assert result["checks"]["passed"]
    rows = {r["variant"]: r for r in result["rows"]}
    assert "interpret" in rows["triton_flash"]["skipped"]
    checked = rows["triton_flash (interpreter)"]
    assert checked["passed"] and "median_ms" not in checked and "not timed" in checked["skipped"]
    assert any("(interpreter)" in c["name"] for c in result["checks"]["items"])
    assert any("says nothing about speed" in n for n in result["notes"])


# ---------------------------------------------------------------------------------------------
# On a GPU
# ---------------------------------------------------------------------------------------------

GPU_SHAPES = [
    (b, h, n, d, causal)
    for d in (64, 128)
    for causal in (False, True)
    for b, h, n in ((1, 4, 128), (2, 3, 1000), (1, 2, 4096), (1, 2, 333))
]


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_exact_to_tolerance_on_every_shape_autotuned(dtype):
    # As the lab calls it: autotuned, the best loading path this GPU has. N=1000 and 333 are not
    # multiples of any block size; the output starts as NaN so unwritten elements fail.
    checks = fa.check_shapes("cuda", dtype, GPU_SHAPES if dtype == "bfloat16" else GPU_SHAPES[:4])
    failed = [(c["name"], c["max_abs_error"]) for c in checks if not c["passed"]]
    assert not failed, failed
    assert max(c["rel_l2_error"] for c in checks) < 1e-2


@pytest.mark.gpu
@pytest.mark.parametrize("variant", list(fa.KERNEL_VARIANTS))
def test_every_variant_is_exact_where_this_gpu_has_it(variant):
    kwargs = fa.KERNEL_VARIANTS[variant]
    if kwargs["mode"] != "pointers" and not fa.tma_available()[kwargs["mode"]]:
        pytest.skip(f"{kwargs['mode']} not available on this GPU/Triton")
    shapes = [(2, 3, 1000, 128, False), (2, 3, 1000, 128, True), (1, 2, 333, 64, True)]
    try:
        checks = fa.check_shapes("cuda", "bfloat16", shapes, config=(128, 64, 8, 2), **kwargs)
    except Exception as exc:  # an experimental schedule this Triton cannot compile
        if kwargs.get("warp_specialize"):
            pytest.skip(f"warp specialization does not compile here: {str(exc).splitlines()[0][:200]}")
        raise
    failed = [(c["name"], c["max_abs_error"]) for c in checks if not c["passed"]]
    assert not failed, failed


@pytest.mark.gpu
def test_gpu_lab_times_it_next_to_sdpa():
    params = att.AttentionParams.from_dict(
        {"seq_lens": "256,1000", "heads": 4, "head_dim": 64, "causal": True, "variants": "sdpa_flash,triton_flash"},
        "cuda",
    )
    result = att.run(params, device=get_device("cuda")).to_dict()
    assert result["checks"]["passed"]
    timed = [r for r in result["rows"] if r["variant"] == "triton_flash"]
    assert len(timed) == 2 and all(r["tflops"] > 0 and r["peak_extra_bytes"] is not None for r in timed)


def _speed_line(causal: bool) -> str:
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    from labs.experiments.timing import measure

    q, k, v = (torch.randn(1, 32, 4096, 128, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    work = att.flops(1, 32, 4096, 128, causal)
    fns = {"triton_flash": lambda: fa.flash_attention(q, k, v, causal)}
    if fg.available() is None:
        fns["gluon_flash"] = fg.build(q, k, v, causal)
    for name, backend in (("sdpa_flash", SDPBackend.FLASH_ATTENTION), ("sdpa_cudnn", SDPBackend.CUDNN_ATTENTION)):

        def sdpa(backend=backend):
            with sdpa_kernel(backend):
                return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

        fns[name] = sdpa
    tflops = {name: work / (measure(fn, get_device("cuda")).median_ms * 1e-3) / 1e12 for name, fn in fns.items()}
    rows = att.check_rows(4096, 256)
    ours = [name for name in fns if not name.startswith("sdpa")]
    for name in ours:
        check = compare(fns[name]()[:, :, rows.cuda()], att.reference_rows(q, k, v, causal, rows), "bfloat16")
        assert check["passed"], (name, check)
    return (
        f"N=4096 d=128 H=32 bf16 {'causal' if causal else 'full  '}: "
        + ", ".join(f"{name} {t:.0f} TFLOP/s" for name, t in tflops.items())
        + "".join(
            f"; {name} / cuDNN {tflops[name] / tflops['sdpa_cudnn']:.2f}x, "
            f"/ SDPA flash {tflops[name] / tflops['sdpa_flash']:.2f}x"
            for name in ours
        )
    )


@pytest.mark.gpu
def test_prints_tflops_next_to_sdpa_flash_and_cudnn(capsys):
    # A report, not a timed assertion (labs/experiments/NOTES.md: benchmarks are scripts); it prints the
    # figures for the shape: 32 heads, d=128, bf16, N=4096, causal and not.
    lines = [_speed_line(causal) for causal in (False, True)]
    with capsys.disabled():
        print("\n" + "\n".join(lines))
