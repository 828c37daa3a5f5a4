"""
FlashAttention, tile by tile: a step-through trace
==================================================

Naive attention writes the whole N x N score matrix S = Q K^T / sqrt(d) to memory, reads it back
for the softmax, writes the probabilities P and reads them again for P V. FlashAttention never
materializes either: it keeps one block of query rows on chip, streams the key/value blocks past
it, and keeps for each query row a running max m and a running sum l of exponentials (the online
softmax). When a new block raises a row's max, everything accumulated so far is rescaled by
exp(m_old - m_new); at the end the accumulated output is divided by l. The result is exact
attention, not an approximation.

This lab runs that algorithm in NumPy (the same loop nest as the Triton kernel: outer loop over Q
blocks, inner loop over K/V blocks) on a small random head and records every step: which blocks
are on chip, the block's row maxima, the running max and sum before and after, the rescale factor
and the HBM bytes read and written so far under a simple traffic model, next to the same count for
naive attention. It ends by checking the output against naive attention, and sweeps N through the
byte model to show how each one's traffic grows.

It is a trace for reading, not a benchmark: it runs on the CPU whatever the device.
"""

import math
import time

import numpy as np

from .catalog import TilingTraceParams  # torch-free: parameters, bounds
from .device import Device, get_device
from .params import ITEMSIZE
from .result import Progress, ProgressFn, Result, new_result

SCORES_MAX_N = 128  # the score matrix's values go into the trace up to this N (128^2 = 16384 numbers)
TRACE_MAX_NUMBERS = 100_000  # numbers kept in the stored steps' per-row arrays (about 1 MB of JSON)
SWEEP_SEQ_LENS = (128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536)
TOLERANCE = {"float64": 1e-12, "float32": 2e-5}  # atol and rtol of tiled vs naive in the same precision

# %%
# The traffic models. Everything is per head; `s` is the element size in bytes.

TILED_MODEL = (
    "tiled (FlashAttention forward): for each Q block, read the Q block once, read one K block and "
    "one V block per inner step, write the O block once at the end of its inner loop; scores, "
    "probabilities and the running m, l stay on chip. With a causal mask, K/V blocks wholly above "
    "the diagonal are skipped. Non-causal total: 2*N*d*s (Q and O) + ceil(N/B_r) * 2*N*d*s (K and V "
    "once per Q block)"
)
NAIVE_MODEL = (
    "naive: read Q, K (2*N*d*s); write S (N*N*s); read S; write P (N*N*s); read P and V (N*N*s + "
    "N*d*s); write O (N*d*s). Total 4*N*N*s + 4*N*d*s; S and P counted in the same element type (a "
    "float32 softmax, as PyTorch's naive code runs it, moves more)"
)
COMPULSORY_MODEL = (
    "compulsory: Q, K, V read once and O written once, 4*N*d*s: what reaches HBM when the K/V "
    "re-reads of the tiled model hit a cache (on an H100 a head's K and V fit in the 50 MB L2 "
    "up to long sequences)"
)

# Nsight Compute (dram__bytes_read.sum + dram__bytes_write.sum) on an H100 80GB HBM3, torch 2.11, for
# B=1, H=32, N=4096, d=128, bf16: SDPA's flash kernel moved 140.7 MB against 134.2 MB compulsory (and
# 2.21 GB under the per-Q-block model with 128x64 tiles: the K/V re-reads came from L2); naive
# attention (attention.naive_attention, 6 kernels) moved 17.22 GB against 17.31 GB in roofline.py's model.
NCU_H100 = (
    "Measured with Nsight Compute on an H100 (B=1, H=32, N=4096, d=128, bf16): SDPA's flash kernel moved "
    "140.7 MB of DRAM traffic, the compulsory model says 134.2 MB and the per-Q-block model 2.21 GB (its "
    "K/V re-reads hit L2); naive attention moved 17.2 GB, its model 17.3 GB."
)


def naive_phases(n: int, d: int, itemsize: int) -> list[dict]:
    """Naive attention as the kernels a framework runs, each with the bytes it reads and writes."""
    nd, nn = n * d * itemsize, n * n * itemsize
    phases = [
        {"op": "S = Q K^T / sqrt(d)", "reads": ["Q", "K"], "writes": ["S"], "read_bytes": 2 * nd, "written_bytes": nn},
        {"op": "P = softmax(S)", "reads": ["S"], "writes": ["P"], "read_bytes": nn, "written_bytes": nn},
        {"op": "O = P V", "reads": ["P", "V"], "writes": ["O"], "read_bytes": nn + nd, "written_bytes": nd},
    ]
    read = written = 0
    for p in phases:
        read += p["read_bytes"]
        written += p["written_bytes"]
        p.update(hbm_read_bytes=read, hbm_written_bytes=written)
    return phases


def naive_bytes(n: int, d: int, itemsize: int) -> dict:
    phases = naive_phases(n, d, itemsize)
    read, written = phases[-1]["hbm_read_bytes"], phases[-1]["hbm_written_bytes"]
    return {"read_bytes": read, "written_bytes": written, "total_bytes": read + written}


def kv_blocks(q_start: int, q_end: int, n: int, block_n: int, causal: bool) -> list[tuple[int, int, int]]:
    """(block index, first row, end row) of the K/V blocks a Q block visits, in order."""
    return [(j, ks, min(ks + block_n, n)) for j, ks in enumerate(range(0, n, block_n)) if not causal or ks <= q_end - 1]


def tiled_bytes(n: int, d: int, block_m: int, block_n: int, itemsize: int, causal: bool = False) -> dict:
    """The tiled model's totals, Q block by Q block (the trace must end on exactly these)."""
    row = d * itemsize
    read = written = tiles = 0
    n_kv = -(-n // block_n)
    for qs in range(0, n, block_m):
        qe = min(qs + block_m, n)
        # K/V blocks visited: all of them, or (causal) those starting at or before the block's last row.
        visited = (qe - 1) // block_n + 1 if causal else n_kv
        kv_rows = min(n, visited * block_n)
        read += (qe - qs) * row + 2 * kv_rows * row  # the Q block; a K and a V block per visit
        written += (qe - qs) * row  # the O block
        tiles += visited
    return {"read_bytes": read, "written_bytes": written, "total_bytes": read + written, "tiles": tiles}


def compulsory_bytes(n: int, d: int, itemsize: int) -> dict:
    return {"read_bytes": 3 * n * d * itemsize, "written_bytes": n * d * itemsize, "total_bytes": 4 * n * d * itemsize}


def hbm_sweep(d: int, block_m: int, block_n: int, itemsize: int, causal: bool = False, seq_lens=SWEEP_SEQ_LENS) -> dict:
    """HBM bytes vs N for naive, tiled and compulsory traffic, from the models above."""
    seq_lens = sorted(set(seq_lens))
    out = {
        "seq_lens": seq_lens,
        "head_dim": d,
        "block_m": block_m,
        "block_n": block_n,
        "itemsize": itemsize,
        "causal": causal,
        "naive": [],
        "tiled": [],
        "compulsory": [],
    }
    for n in seq_lens:
        out["naive"].append(naive_bytes(n, d, itemsize)["total_bytes"])
        out["tiled"].append(tiled_bytes(n, d, block_m, block_n, itemsize, causal)["total_bytes"])
        out["compulsory"].append(compulsory_bytes(n, d, itemsize)["total_bytes"])
    return out


# %%
# The two attentions. Naive: the whole score matrix at once. Tiled: the FlashAttention forward
# loop nest, recording each step.


def scores(q: np.ndarray, k: np.ndarray, causal: bool) -> np.ndarray:
    s = (q @ k.T) * (1.0 / math.sqrt(q.shape[1]))
    if causal:
        s[np.triu_indices(len(q), 1, len(k))] = -np.inf
    return s


def naive_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool = False) -> np.ndarray:
    s = scores(q, k, causal)
    p = np.exp(s - s.max(axis=1, keepdims=True))
    return (p / p.sum(axis=1, keepdims=True)) @ v


def _num(x: float) -> float:
    """Six significant digits keep the trace's JSON small; -inf stays -inf (JSON null)."""
    return float(f"{x:.6g}") if math.isfinite(x) else float(x)


def _nums(a: np.ndarray) -> list[float]:
    return [_num(float(x)) for x in a]


def tiled_attention_trace(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    *,
    block_m: int,
    block_n: int,
    itemsize: int,
    causal: bool = False,
    max_steps: int | None = None,
    max_numbers: int = TRACE_MAX_NUMBERS,
) -> dict:
    """FlashAttention's forward pass, step by step; returns the output, the steps and the byte totals.

    Step k is one (Q block, K/V block) tile. Per-row arrays (block_max, m_*, l_*, rescale) run over
    the Q block's rows. m_before of a row that has seen no score yet is -inf (null in JSON), so its
    first rescale factor is exp(-inf) = 0: the empty accumulator is dropped. Byte counters are
    cumulative after the step: the Q block is read at its first step, the O block written at its last.
    Only the first `max_steps` steps (and at most `max_numbers` per-row numbers) are stored; the
    computation always runs to the end and `steps_total` counts every step.
    """
    n, d = q.shape
    n_kv = k.shape[0]  # keys and values may be fewer or more than queries
    scale = 1.0 / math.sqrt(d)
    out = np.zeros_like(q)
    row_bytes = d * itemsize
    read = written = 0
    steps: list[dict] = []
    stored_numbers = 0
    step = 0
    truncated_by = None
    for qi, qs in enumerate(range(0, n, block_m)):
        qe = min(qs + block_m, n)
        rows = qe - qs
        q_blk = q[qs:qe]  # on chip for the whole inner loop
        read += rows * row_bytes
        m = np.full(rows, -np.inf, dtype=q.dtype)
        lsum = np.zeros(rows, dtype=q.dtype)  # the running sum l
        acc = np.zeros((rows, d), dtype=q.dtype)
        visits = kv_blocks(qs, qe, n_kv, block_n, causal)
        for idx, (kj, ks, ke) in enumerate(visits):
            read += 2 * (ke - ks) * row_bytes  # the K block and the V block come on chip
            s = (q_blk @ k[ks:ke].T) * scale  # this tile of scores, never written anywhere
            mask = "none"
            if causal and ke - 1 > qs:  # some key in this tile comes after some query row
                keep = np.arange(ks, ke)[None, :] <= np.arange(qs, qe)[:, None]
                s = np.where(keep, s, -np.inf)
                mask = "partial"
            block_max = s.max(axis=1)
            m_new = np.maximum(m, block_max)
            m_safe = np.where(np.isneginf(m_new), 0.0, m_new)  # a row with no score yet: keep it all zeros
            rescale = np.exp(m - m_safe)  # exp(m_old - m_new): 0 on a row's first scores, 1 if the max held
            p = np.exp(s - m_safe[:, None])
            l_new = rescale * lsum + p.sum(axis=1)
            acc = rescale[:, None] * acc + p @ v[ks:ke]
            last = idx == len(visits) - 1
            if last:
                out[qs:qe] = acc / l_new[:, None]
                written += rows * row_bytes
            numbers = 6 * rows
            if truncated_by is None and max_steps is not None and len(steps) >= max_steps:
                truncated_by = "max_steps"
            if truncated_by is None and stored_numbers + numbers > max_numbers:
                truncated_by = "max_numbers"
            if truncated_by is None:
                stored_numbers += numbers
                steps.append(
                    {
                        "step": step,
                        "q_block": qi,
                        "q_rows": [qs, qe],
                        "kv_block": kj,
                        "kv_rows": [ks, ke],
                        "first_kv": idx == 0,
                        "last_kv": last,
                        "loads": (["Q"] if idx == 0 else []) + ["K", "V"],
                        "stores": ["O"] if last else [],
                        "mask": mask,
                        "tile_max": _num(float(block_max.max())),
                        "block_max": _nums(block_max),
                        "m_before": _nums(m),
                        "m_after": _nums(m_new),
                        "l_before": _nums(lsum),
                        "l_after": _nums(l_new),
                        "rescale": _nums(rescale),
                        "hbm_read_bytes": read,
                        "hbm_written_bytes": written,
                        "hbm_bytes": read + written,
                    }
                )
            m, lsum = m_new, l_new
            step += 1
    return {
        "out": out,
        "steps": steps,
        "steps_total": step,
        "truncated_by": truncated_by,
        "read_bytes": read,
        "written_bytes": written,
        "total_bytes": read + written,
    }


def check_outputs(out: np.ndarray, ref: np.ndarray, compute: str) -> dict:
    tol = TOLERANCE[compute]
    diff = np.abs(out - ref)
    finite = bool(np.isfinite(out).all())
    max_abs = float(diff.max()) if finite else math.inf
    rel = float(np.linalg.norm(out - ref) / max(np.linalg.norm(ref), 1e-300)) if finite else math.inf
    passed = finite and bool((diff <= tol + tol * np.abs(ref)).all())
    return {"max_abs_error": max_abs, "rel_l2_error": rel, "atol": tol, "rtol": tol, "passed": passed}


def make_qkv(n: int, d: int, compute: str, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((n, d)).astype(compute) for _ in range(3))


# %%
# The run


def run(params: TilingTraceParams, progress: ProgressFn | None = None, device: Device | None = None) -> Result:
    """The trace at the parameters' N and tiles, the naive count, the check and the HBM-vs-N sweep."""
    device = device or get_device("cpu")
    t_start = time.perf_counter()
    prog = Progress(progress)
    n, d, bm, bn = params.seq_len, params.head_dim, params.block_m, params.block_n
    s = ITEMSIZE[params.dtype]
    result = new_result(
        "flash_tiling_trace",
        params,
        device,
        f"NumPy on the CPU in {params.compute} (whatever the device: this lab reads an algorithm, "
        f"it does not time one). HBM bytes come from the traffic models in artifacts.bytes_model "
        f"with {s}-byte ({params.dtype}) elements; nothing here is measured. The tiled output is "
        f"checked against naive attention computed in the same precision.",
    )
    prog(5, "Q, K, V")
    q, k, v = make_qkv(n, d, params.compute, params.seed)

    prog(15, f"tiled attention, {bm}x{bn} tiles")
    trace = tiled_attention_trace(
        q, k, v, block_m=bm, block_n=bn, itemsize=s, causal=params.causal, max_steps=params.max_steps
    )
    prog(70, "naive attention and the check")
    ref = naive_attention(q, k, v, params.causal)
    check = check_outputs(trace["out"], ref, params.compute)
    result.add_check(f"tiled == naive ({params.compute}, N={n}, d={d})", check)

    naive = naive_bytes(n, d, s)
    tiled = tiled_bytes(n, d, bm, bn, s, params.causal)
    assert (tiled["read_bytes"], tiled["written_bytes"]) == (trace["read_bytes"], trace["written_bytes"])
    n_q, n_kv = -(-n // bm), -(-n // bn)
    trace_art = {
        "seq_len": n,
        "head_dim": d,
        "block_m": bm,
        "block_n": bn,
        "causal": params.causal,
        "dtype": params.dtype,
        "itemsize": s,
        "compute": params.compute,
        "scale": 1.0 / math.sqrt(d),
        "q_blocks": n_q,
        "kv_blocks": n_kv,
        "tiles_total": n_q * n_kv,
        "tiles_visited": tiled["tiles"],
        "steps_total": trace["steps_total"],
        "steps_stored": len(trace["steps"]),
        "truncated": trace["truncated_by"] is not None,
        "steps": trace["steps"],
    }
    if n <= SCORES_MAX_N:
        sc = scores(q, k, params.causal)
        trace_art["scores"] = [[float(f"{x:.4g}") if math.isfinite(x) else None for x in r] for r in sc.tolist()]
    result.artifacts["trace"] = trace_art
    result.artifacts["naive"] = {**naive, "phases": naive_phases(n, d, s)}
    result.artifacts["tiled"] = {k_: trace[k_] for k_ in ("read_bytes", "written_bytes", "total_bytes")}
    result.artifacts["bytes_model"] = {"tiled": TILED_MODEL, "naive": NAIVE_MODEL, "compulsory": COMPULSORY_MODEL}

    prog(85, "HBM bytes vs N")
    sweep = hbm_sweep(d, bm, bn, s, params.causal, seq_lens=(*SWEEP_SEQ_LENS, n))
    result.artifacts["hbm_vs_n"] = sweep
    for i, sn in enumerate(sweep["seq_lens"]):
        result.rows.append(
            {
                "seq_len": sn,
                "naive_bytes": sweep["naive"][i],
                "tiled_bytes": sweep["tiled"][i],
                "compulsory_bytes": sweep["compulsory"][i],
                "naive_over_tiled": sweep["naive"][i] / sweep["tiled"][i],
                "this_run": "this run" if sn == n else "",
            }
        )
    names = {
        "naive": "naive (S and P through HBM)",
        "tiled": f"tiled, {bm}x{bn} tiles (K, V read once per Q block)",
        "compulsory": "compulsory (Q, K, V, O once)",
    }
    result.artifacts["plot"] = {
        "title": f"HBM bytes per head vs N (d={d}, {params.dtype}{', causal' if params.causal else ''})",
        "x_label": "sequence length N",
        "y_label": "bytes read + written (model)",
        "x_log": True,
        "y_log": True,
        "series": [{"name": names[key], "x": sweep["seq_lens"], "y": sweep[key]} for key in names],
    }

    big = sweep["seq_lens"][-1]
    result.note(
        f"At N={n}: naive moves {naive['total_bytes']:,} bytes, the tiled loop {tiled['total_bytes']:,} "
        f"({naive['total_bytes'] / tiled['total_bytes']:.1f}x less), of which the compulsory Q, K, V, O "
        f"traffic is {4 * n * d * s:,}."
    )
    result.note(
        f"Naive traffic grows as N^2 (4*N^2*s for S and P). The tiled count re-reads K and V once per Q "
        f"block, so it grows as 2*N^2*d*s/B_r: also quadratic, but smaller by about 2*B_r/d at large N "
        f"({sweep['naive'][-1] / sweep['tiled'][-1]:.1f}x at N={big} with B_r={bm}, d={d}; tiles with "
        f"B_r < d/2 move more than naive). Real kernels use the largest B_r the on-chip "
        f"memory allows, and on a GPU most K/V re-reads hit L2, leaving the compulsory traffic, linear in N."
    )
    result.note(NCU_H100)
    if trace["truncated_by"]:
        cap = (
            f"max_steps={params.max_steps}"
            if trace["truncated_by"] == "max_steps"
            else f"{TRACE_MAX_NUMBERS:,} per-row numbers"
        )
        result.note(
            f"The trace stores the first {len(trace['steps'])} of {trace['steps_total']} steps (capped at "
            f"{cap} to keep the result small); the computation, the byte totals and the check cover all "
            f"steps."
        )
    if n > SCORES_MAX_N:
        result.note(
            f"Score values are included up to N={SCORES_MAX_N}; at N={n} the trace has the tile "
            f"coordinates and statistics only."
        )
    if params.causal:
        result.note(
            f"Causal: {n_q * n_kv - tiled['tiles']} of {n_q * n_kv} tiles lie wholly above the diagonal "
            f"and are skipped (no K/V read); naive attention still materializes all N x N scores."
        )
    result.elapsed_s = time.perf_counter() - t_start
    prog(100, "done")
    return result


COLUMNS = ("seq_len", "naive_bytes", "tiled_bytes", "compulsory_bytes", "naive_over_tiled", "this_run")
