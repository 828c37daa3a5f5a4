import json
import math
import time

import numpy as np
import pytest

from labs.experiments import flash_tiling_trace as ft
from labs.experiments.catalog import TilingTraceParams, validate_params
from labs.experiments.params import ParamError
from labs.experiments.runner import run_experiment


def trace(n, d, block_m, block_n, itemsize=2, causal=False, seed=0, **kw):
    q, k, v = ft.make_qkv(n, d, "float64", seed)
    return ft.tiled_attention_trace(
        q, k, v, block_m=block_m, block_n=block_n, itemsize=itemsize, causal=causal, **kw
    ), (q, k, v)


def test_byte_counts_by_hand_n8_d4_block4_bf16():
    # One row of Q, K, V or O is d * s = 4 * 2 = 8 bytes; a 4-row block is 32 bytes.
    # Q block 0 x K/V block 0: read Q0 + K0 + V0 = 96.               read  96, written  0
    # Q block 0 x K/V block 1: read K1 + V1 = 64; last: write O0 32. read 160, written 32
    # Q block 1 x K/V block 0: read Q1 + K0 + V0 = 96.               read 256, written 32
    # Q block 1 x K/V block 1: read K1 + V1 = 64; write O1 32.       read 320, written 64
    tr, _ = trace(8, 4, 4, 4)
    assert [(s["q_block"], s["kv_block"]) for s in tr["steps"]] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert [(s["hbm_read_bytes"], s["hbm_written_bytes"]) for s in tr["steps"]] == [
        (96, 0),
        (160, 32),
        (256, 32),
        (320, 64),
    ]
    assert [s["loads"] for s in tr["steps"]] == [["Q", "K", "V"], ["K", "V"], ["Q", "K", "V"], ["K", "V"]]
    assert [s["stores"] for s in tr["steps"]] == [[], ["O"], [], ["O"]]
    assert (tr["read_bytes"], tr["written_bytes"]) == (320, 64)
    assert ft.tiled_bytes(8, 4, 4, 4, 2) == {"read_bytes": 320, "written_bytes": 64, "total_bytes": 384, "tiles": 4}
    # Naive: read Q, K (2 * 8*4*2 = 128); write S (8*8*2 = 128); read S (128); write P (128);
    # read P (128) and V (64); write O (64). Read 128 + 128 + 192 = 448, written 128 + 128 + 64 = 320.
    assert ft.naive_bytes(8, 4, 2) == {"read_bytes": 448, "written_bytes": 320, "total_bytes": 768}
    phases = ft.naive_phases(8, 4, 2)
    assert [(p["read_bytes"], p["written_bytes"]) for p in phases] == [(128, 128), (128, 128), (192, 64)]
    assert (phases[-1]["hbm_read_bytes"], phases[-1]["hbm_written_bytes"]) == (448, 320)
    assert ft.compulsory_bytes(8, 4, 2)["total_bytes"] == 4 * 8 * 4 * 2


def test_causal_byte_counts_by_hand_skip_the_tile_above_the_diagonal():
    # Q block 0 (rows 0-3) needs only K/V block 0 (keys 0-3): read Q0, K0, V0 = 96, write O0 = 32.
    # Q block 1 (rows 4-7) needs K/V blocks 0 and 1: read Q1, K0, V0, K1, V1 = 160, write O1 = 32.
    tr, _ = trace(8, 4, 4, 4, causal=True)
    assert [(s["q_block"], s["kv_block"], s["mask"]) for s in tr["steps"]] == [
        (0, 0, "partial"),
        (1, 0, "none"),
        (1, 1, "partial"),
    ]
    assert [(s["hbm_read_bytes"], s["hbm_written_bytes"]) for s in tr["steps"]] == [(96, 32), (192, 32), (256, 64)]
    assert ft.tiled_bytes(8, 4, 4, 4, 2, causal=True) == {
        "read_bytes": 256,
        "written_bytes": 64,
        "total_bytes": 320,
        "tiles": 3,
    }


@pytest.mark.parametrize(
    "n,d,bm,bn,causal", [(10, 3, 4, 4, False), (37, 8, 16, 8, True), (64, 16, 8, 32, True), (50, 5, 64, 7, False)]
)
def test_trace_ends_on_the_closed_form_totals_for_ragged_shapes(n, d, bm, bn, causal):
    tr, _ = trace(n, d, bm, bn, itemsize=4, causal=causal)
    model = ft.tiled_bytes(n, d, bm, bn, 4, causal)
    assert (tr["read_bytes"], tr["written_bytes"]) == (model["read_bytes"], model["written_bytes"])
    assert tr["steps_total"] == model["tiles"] == len(tr["steps"])
    assert tr["steps"][-1]["hbm_bytes"] == model["total_bytes"]


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("compute,tol", [("float64", 1e-12), ("float32", 2e-5)])
def test_tiled_output_equals_naive_attention(causal, compute, tol):
    q, k, v = ft.make_qkv(45, 12, compute, seed=3)
    tr = ft.tiled_attention_trace(q, k, v, block_m=8, block_n=16, itemsize=2, causal=causal)
    ref = ft.naive_attention(q, k, v, causal)
    assert tr["out"].dtype == np.dtype(compute)
    np.testing.assert_allclose(tr["out"], ref, atol=tol, rtol=tol)
    assert ft.check_outputs(tr["out"], ref, compute)["passed"]


def test_running_max_and_sum_on_a_tiny_example():
    # One query row, two keys, one key per tile; d = 1 so the scale is 1: scores are 1 and 3.
    q, k, v = np.array([[1.0]]), np.array([[1.0], [3.0]]), np.array([[10.0], [20.0]])
    tr = ft.tiled_attention_trace(q, k, v, block_m=1, block_n=1, itemsize=4)
    s0, s1 = tr["steps"]
    # Step 0: nothing seen yet (m = -inf, l = 0); the block max 1 becomes the running max, the
    # rescale exp(-inf - 1) = 0 drops the empty accumulator, l = exp(1 - 1) = 1.
    assert (s0["block_max"], s0["m_before"], s0["m_after"]) == ([1.0], [-math.inf], [1.0])
    assert (s0["l_before"], s0["l_after"], s0["rescale"]) == ([0.0], [1.0], [0.0])
    # Step 1: score 3 raises the max to 3; what was summed is rescaled by exp(1 - 3),
    # l = exp(-2) * 1 + exp(3 - 3) = 1 + e^-2.
    assert (s1["block_max"], s1["m_before"], s1["m_after"]) == ([3.0], [1.0], [3.0])
    assert s1["l_before"] == [1.0]
    assert s1["l_after"][0] == pytest.approx(1 + math.exp(-2), rel=1e-5)  # stored to 6 digits
    assert s1["rescale"][0] == pytest.approx(math.exp(-2), rel=1e-5)
    # Output: (e^1 * 10 + e^3 * 20) / (e^1 + e^3).
    assert tr["out"][0, 0] == pytest.approx((math.e * 10 + math.e**3 * 20) / (math.e + math.e**3))


def test_last_step_of_each_q_block_holds_the_rows_max_and_softmax_denominator():
    (tr, (q, k, _)) = trace(24, 4, 8, 8)
    s = ft.scores(q, k, False)
    for step in (st for st in tr["steps"] if st["last_kv"]):
        lo, hi = step["q_rows"]
        assert step["m_after"] == pytest.approx(s[lo:hi].max(axis=1), rel=1e-5)
        denom = np.exp(s[lo:hi] - s[lo:hi].max(axis=1, keepdims=True)).sum(axis=1)
        assert step["l_after"] == pytest.approx(denom, rel=1e-5)
    for step in tr["steps"]:
        m_before, m_after = np.array(step["m_before"]), np.array(step["m_after"])
        assert (m_after >= m_before).all()
        assert step["rescale"] == pytest.approx(np.exp(m_before - m_after), rel=1e-5)


def test_stored_steps_are_capped_but_the_computation_runs_to_the_end():
    tr, _ = trace(64, 8, 8, 8, max_steps=5)
    assert (len(tr["steps"]), tr["steps_total"], tr["truncated_by"]) == (5, 64, "max_steps")
    tr, _ = trace(64, 8, 8, 8, max_numbers=6 * 8 * 3)
    assert (len(tr["steps"]), tr["truncated_by"]) == (3, "max_numbers")
    assert tr["read_bytes"] == ft.tiled_bytes(64, 8, 8, 8, 2)["read_bytes"]


def test_run_at_defaults_is_fast_json_and_carries_what_the_step_through_needs(cpu):
    t0 = time.perf_counter()
    result = ft.run(TilingTraceParams(), device=cpu).to_dict()
    assert time.perf_counter() - t0 < 2.0
    text = json.dumps(result, allow_nan=False)
    assert len(text) < 1_000_000
    assert result["checks"]["passed"] and result["checks"]["max_abs_error"] < 1e-12
    tr = result["artifacts"]["trace"]
    assert (tr["q_blocks"], tr["kv_blocks"], tr["steps_total"], tr["steps_stored"]) == (4, 4, 16, 16)
    assert tr["steps"][0]["m_before"][0] is None  # -inf, before any score
    assert len(tr["scores"]) == 128 and len(tr["scores"][0]) == 128
    assert tr["steps"][-1]["hbm_bytes"] == result["artifacts"]["tiled"]["total_bytes"] == 40960
    assert result["artifacts"]["naive"]["total_bytes"] == 4 * 128 * 128 * 2 + 4 * 128 * 16 * 2
    sweep = result["artifacts"]["hbm_vs_n"]
    assert sweep["seq_lens"] == sorted(sweep["seq_lens"]) and 65536 in sweep["seq_lens"]
    for key in ("naive", "tiled", "compulsory"):
        assert all(a < b for a, b in zip(sweep[key], sweep[key][1:], strict=False))
    plot = result["artifacts"]["plot"]
    assert plot["x_log"] and plot["y_log"] and len(plot["series"]) == 3
    assert all(len(s["x"]) == len(s["y"]) == len(sweep["seq_lens"]) for s in plot["series"])
    assert [r["seq_len"] for r in result["rows"] if r["this_run"]] == [128]
    assert set(result["artifacts"]["bytes_model"]) == {"tiled", "naive", "compulsory"}


def test_truncation_and_causal_runs_say_so(cpu):
    result = run_experiment(
        "flash_tiling_trace",
        {"seq_len": 256, "block_m": 16, "block_n": 16, "max_steps": 10, "causal": True},
        device="cpu",
    )
    tr = result["artifacts"]["trace"]
    assert (tr["steps_stored"], tr["truncated"]) == (10, True) and "scores" not in tr
    assert tr["tiles_visited"] == 16 * 17 // 2 == tr["steps_total"]
    assert any("first 10 of 136 steps" in n for n in result["notes"])
    assert any("above the diagonal" in n for n in result["notes"]) and result["checks"]["passed"]


@pytest.mark.parametrize(
    "values,field",
    [
        ({"seq_len": 1024}, "seq_len"),
        ({"seq_len": 4}, "seq_len"),
        ({"block_m": 256}, "block_m"),
        ({"block_n": 2}, "block_n"),
        ({"head_dim": 256}, "head_dim"),
        ({"max_steps": 5000}, "max_steps"),
        ({"dtype": "int8"}, "dtype"),
        ({"compute": "float16"}, "compute"),
        ({"seq_len": 512, "block_m": 4, "block_n": 4}, "block_n"),  # 16384 tiles
    ],
)
def test_bounds_are_enforced_naming_the_field(values, field):
    with pytest.raises(ParamError) as e:
        validate_params("flash_tiling_trace", values, device_kind="cpu")
    assert e.value.field == field
