"""
Our own FlashAttention forward, in Triton
=========================================

softmax(Q K^T / sqrt(d)) V for (batch, heads, N, d) tensors, the layout PyTorch's
scaled_dot_product_attention takes, computed without ever writing the N x N score matrix to memory.

The idea (Dao et al., FlashAttention, 2022; FlashAttention-2, 2023): one program owns BLOCK_M query
rows. It keeps them on chip and walks over the keys and values BLOCK_N at a time. For each key block
it computes the block of scores S = Q K^T on the tensor cores, turns it into probabilities and adds
P V into an output accumulator. The softmax needs each row's maximum and sum over *all* keys, which
are not known until the last block, so the program keeps running ones (the "online softmax"):

    m_new = max(m, rowmax(S))             running maximum
    alpha = exp(m - m_new)                how much the old terms shrink under the new maximum
    P     = exp(S - m_new)
    l     = l * alpha + rowsum(P)         running sum of exponentials
    acc   = acc * alpha + P V             partial output, rescaled to the new maximum

and divides acc by l once at the end. Every intermediate is exact up to rounding: the result is
the same attention, not an approximation, read once from memory (Q, K, V) and written once (O).

Reading guide, top to bottom:
  1. `_attn_fwd_inner`: the loop over one range of key blocks (the online softmax above).
  2. `_attn_fwd`: one program = one block of query rows of one (batch, head); for causal attention
     it splits the key range into blocks wholly below the diagonal (no mask needed) and the blocks
     on it (masked).
  3. `flash_attention(q, k, v, causal, sm_scale)`: the Python wrapper: checks, tensor descriptors,
     the grid, and autotuning over block sizes, warps and pipeline depth; `prepare(...)` binds all
     that once for repeated calls (the lab's timing).
  4. Checks against a float32 reference (on the GPU, or on the CPU under TRITON_INTERPRET=1), and a
     benchmark script (`python -m labs.experiments.flash_attention`) that times each variant next to
     PyTorch's SDPA flash and cuDNN backends.

How memory gets to the tensor cores, three ways, picked at run time by what this Triton and GPU
have (and selectable, for comparison):
  * "pointers": tiles of pointers and `tl.load`: the compiler issues asynchronous copies
    (cp.async) and pipelines them `num_stages` deep. Works on any GPU Triton supports.
  * "tma" (Hopper and newer): host-side tensor descriptors (`triton.tools.tensor_descriptor`). The
    descriptor tells the Tensor Memory Accelerator the tensor's shape and the tile's, and one thread
    asks it for a whole tile: no address arithmetic in registers, and the copy engine fills shared
    memory while the warps compute.
  * "tma_device": the same descriptors, built inside the kernel with `tl.make_tensor_descriptor`
    (needs a scratch allocator, set with `triton.set_allocator`).

Measured (H100 80GB HBM3, torch 2.11, Triton 3.6, cuDNN 9.19; bf16, batch 1, 32 heads, d = 128;
the labs' timer: do_bench median with the L2 flushed; TFLOP/s = 4 B H N^2 d, halved when causal;
every figure next to SDPA's backends from the same run, autotuned as the lab calls it):

    N      mask     this kernel   SDPA flash   SDPA cuDNN   vs cuDNN
    4096   none        512           352          634        0.81x
    4096   causal      440           270          522        0.84x
    16384  none        521           349          570        0.91x
    16384  causal      512           327          582        0.88x

Faster than PyTorch's FlashAttention-2 backend by 1.4-1.6x; short of cuDNN, which is what the
project's targets ask for (0.9x at N = 4096, 1.0x at N = 16384). Across runs the best fixed
configuration reached 541 (N = 4096) and 545 (N = 16384) TFLOP/s with cuDNN at 637 and 613.

What was tried (each exact to bf16 tolerance; best figure at N = 4096 / 16384, non-causal):
  * pointer tiles with cp.async pipelining: 492 / 511.
  * TMA, host descriptors: 541 / 545 (the default). Device-built descriptors: 512 / 520.
  * warp specialization (`tl.range(..., warp_specialize=True)`): 520 / 526. On Hopper this Triton
    leaves the loop as it was (the same SASS: no producer warps, no setmaxnreg).
  * Q K^T of the next block issued before this block's softmax (the `pipeline` flag): 475 / 493.
  * lazy rescaling (rescale the accumulator only when a row maximum grows by more than 2^8): 516 /
    501; the block-wide test costs a cross-warp reduction every block.
  * half the exponentials as a cubic on the FMA units (FlashAttention-4's trick): 461 / 452; it
    pushes the kernel to 255 registers and a spill.
The missing overlap of softmax and matrix work inside one warpgroup (FlashAttention-3's
ping-pong of two warpgroups, its intra-warpgroup pipelining) is what Triton 3.6 cannot express;
two independent 4-warp programs per SM are the closest it gets.

What closes the gap is saying it explicitly, in Gluon: `flash_attention_gluon.py`, a load warp and
two compute warpgroups sharing K/V tiles through mbarriers, asynchronous wgmma, persistent CTAs for
non-causal attention. Timed in alternation with cuDNN (`paired()`, four runs) it reached 0.95-0.99x
cuDNN at N = 4096 and 0.986-1.023x (1.005x over the runs) at N = 16384; this kernel, paired the
same way, 0.84x and 0.87x. It is the attention lab's `gluon_flash` variant, and `--variants
tma,gluon` (the default here) times both.
"""

import argparse
import functools
import os
import sys

import torch

from . import flash_attention_gluon as gluon_kernel
from .common import NO_TRITON, triton_or_none

triton = triton_or_none()
if triton is not None:
    import triton.language as tl
else:  # a CPU-only install without Triton: the module imports, the kernel says it cannot run
    triton = tl = NO_TRITON

try:  # host-side TMA descriptors: Triton >= 3.3
    from triton.tools.tensor_descriptor import TensorDescriptor
except ImportError:
    TensorDescriptor = None

# Fixed when the kernels below were decorated: interpreted kernels take CPU tensors, compiled ones don't.
INTERPRETED = os.environ.get("TRITON_INTERPRET", "0") == "1"

HEAD_DIMS = (16, 32, 64, 128)  # a power of two (tl.arange), at least 16 (the tensor cores' k step)
TMA_MODES = {"pointers": 0, "tma": 1, "tma_device": 2}
# The kernel's variants, as flash_attention() keyword arguments (compared by the benchmark below).
# Only the loading path differs among the first four; the last four are experiments that keep
# the tma path and change the loop (see "What was tried" above): all exact, none faster.
KERNEL_VARIANTS = {
    "pointers": {"mode": "pointers"},
    "pointers_ws": {"mode": "pointers", "warp_specialize": True},
    "tma": {"mode": "tma"},
    "tma_device": {"mode": "tma_device"},
    "tma_ws": {"mode": "tma", "warp_specialize": True},
    "tma_pipe": {"mode": "tma", "pipeline": True},
    "tma_lazy": {"mode": "tma", "lazy_rescale": True},
    "tma_poly": {"mode": "tma", "poly_exp": True},
    "tma_lazy_poly": {"mode": "tma", "lazy_rescale": True, "poly_exp": True},
}


# %%
# The inner loop: one range of key blocks [lo, hi) for the BLOCK_M query rows this program owns.
#
# Why exp2: the GPU's special-function unit computes 2^x in one instruction (MUFU.EX2); exp(x) is
# exp2(x * log2 e). Folding log2(e) into the softmax scale (qk_scale = sm_scale * log2 e) costs
# nothing per element, and the maximum m is kept in the same base-2 units, so
#     p = exp2(s * qk_scale - m)
# is one fused multiply-add and one MUFU per score.
#
# Why MASK is a compile-time flag: most key blocks need no mask at all (for causal attention every
# block strictly below the diagonal, for any attention every block inside N). Masking costs a
# compare and a select per score, and it keeps the compiler from treating the loop as plain
# matrix work; so those blocks run in a loop compiled without it, and only the diagonal block (and
# a ragged last block when N is not a multiple of BLOCK_N) runs the masked copy.


@triton.jit
def _dot(a, b, acc, UPCAST: tl.constexpr):
    if UPCAST:  # interpreter only: its NumPy matmul would multiply bf16's raw bits (see interpreter_check)
        return tl.dot(a.to(tl.float32), b.to(tl.float32), acc)
    return tl.dot(a, b, acc)


@triton.jit
def _exp2_fma(x):
    """2^x for x <= 0 on the FMA units instead of the special-function unit (FlashAttention-4's trick).

    The MUFU computes 16 exponentials per clock per SM against 128 FMAs, and in this kernel it is
    the softmax's bottleneck: doing part of the exponentials this way spreads the work over both.
    x = j + f with j = floor(x), f in [0, 1); 2^f from a cubic (relative error < 1e-4, far under
    bf16's 4e-3 rounding of P), then 2^j added straight into the float's exponent bits.
    """
    x = tl.maximum(x, -127.0)  # -inf (masked scores) -> exactly 0.0 below
    j = tl.floor(x)
    f = x - j
    p = 0.0770669624 * f + 0.2276438173
    p = p * f + 0.6951175071
    p = p * f + 1.0
    return (p.to(tl.int32, bitcast=True) + (j.to(tl.int32) << 23)).to(tl.float32, bitcast=True)


@triton.jit
def _exp2(x, POLY: tl.constexpr):
    if POLY:  # half the columns on the MUFU, half on the FMA units
        a, b = tl.split(tl.reshape(x, [x.shape[0], x.shape[1] // 2, 2]))
        return tl.reshape(tl.join(tl.math.exp2(a), _exp2_fma(b)), [x.shape[0], x.shape[1]])
    return tl.math.exp2(x)


@triton.jit
def _online_softmax(s, m_i, l_i, acc, qk_scale, LAZY: tl.constexpr, POLY: tl.constexpr):
    """One block of scores folded into the running statistics; returns (P, m, l, rescaled acc)."""
    # The new running maximum, in base-2 units. A row's max stays -inf only for query rows past
    # N, which are never stored: every real row sees key 0 in its first block.
    m_new = tl.maximum(m_i, tl.max(s, 1) * qk_scale)
    if LAZY:
        # Rescaling acc costs a multiply per accumulator element per block (two per score at
        # BLOCK_N = 64, d = 128), and after the first blocks the maximum rarely moves. So keep the
        # old reference maximum unless some row's grew by more than 8 (a factor 2^8): P then stays
        # <= 256, harmless in float32 and bf16, and the final acc / l is the same either way.
        grow = tl.where(m_new == m_i, 0.0, m_new - m_i)  # -inf == -inf: no growth, not NaN
        if tl.max(grow, 0) > 8.0:
            alpha = tl.math.exp2(m_i - m_new)
            acc = acc * alpha[:, None]
            l_i = l_i * alpha
            m_i = m_new
        p = _exp2(s * qk_scale - m_i[:, None], POLY)
        return p, m_i, l_i + tl.sum(p, 1), acc
    p = _exp2(s * qk_scale - m_new[:, None], POLY)  # one FMA + one MUFU.EX2 per score
    alpha = tl.math.exp2(m_i - m_new)  # how much what was accumulated under the old maximum shrinks
    l_i = l_i * alpha + tl.sum(p, 1)
    return p, m_new, l_i, acc * alpha[:, None]


@triton.jit
def _attn_fwd_inner(acc, l_i, m_i, q, desc_k, desc_v, k_base, v_base, stride_kn, stride_vn, kv_row, lo, hi,
                    n_ctx, offs_m, qk_scale, HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr, MASK: tl.constexpr,
                    CAUSAL: tl.constexpr, TMA: tl.constexpr, WARP_SPECIALIZE: tl.constexpr, UPCAST: tl.constexpr,
                    LAZY: tl.constexpr, POLY: tl.constexpr):
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    # tl.range rather than range: it takes the loop's compiler hints (warp specialization here;
    # the pipelining depth comes from the launch's num_stages).
    for start_n in tl.range(lo, hi, BLOCK_N, warp_specialize=WARP_SPECIALIZE):
        start_n = tl.multiple_of(start_n, BLOCK_N)  # lets the compiler prove the loads aligned
        # -- S = Q K^T for this key block (BLOCK_M x BLOCK_N, float32 on the tensor cores) --
        if TMA == 0:
            # Addresses recomputed from the loop index each time rather than carried from one
            # iteration to the next: a carried BLOCK_N x d tile of 64-bit pointers would pin two
            # registers per element across the whole loop.
            k_ptrs = k_base + (start_n + offs_n)[:, None] * stride_kn + offs_d[None, :]
            if MASK:  # the last block may hang over the end of the sequence: zero-fill it
                k = tl.load(k_ptrs, mask=(start_n + offs_n)[:, None] < n_ctx, other=0.0)
            else:
                k = tl.load(k_ptrs)
        else:
            # One tile of BLOCK_N rows of K, fetched by the copy engine. Rows past this head's
            # sequence belong to the next head (or are zero past the tensor's end); the mask
            # below gives them probability zero, so they never reach the output.
            k = desc_k.load([kv_row + start_n, 0])
        s = _dot(q, tl.trans(k), None, UPCAST)
        if MASK:
            cols = start_n + offs_n
            keep = cols[None, :] < n_ctx
            if CAUSAL:  # query i sees keys j <= i
                keep = keep & (offs_m[:, None] >= cols[None, :])
            s = tl.where(keep, s, float("-inf"))
        p, m_i, l_i, acc = _online_softmax(s, m_i, l_i, acc, qk_scale, LAZY, POLY)
        # -- acc += P V: P goes back to the input precision for the tensor cores (bf16/fp16),
        # the product accumulates in float32 --
        if TMA == 0:
            v_ptrs = v_base + (start_n + offs_n)[:, None] * stride_vn + offs_d[None, :]
            if MASK:
                v = tl.load(v_ptrs, mask=(start_n + offs_n)[:, None] < n_ctx, other=0.0)
            else:
                v = tl.load(v_ptrs)
        else:
            v = desc_v.load([kv_row + start_n, 0])
        acc = _dot(p.to(v.dtype), v, acc, UPCAST)
    return acc, l_i, m_i


# A variant of the unmasked loop for descriptors, software-pipelined by hand: the scores of key
# block j+1 are requested from the tensor cores before block j's softmax runs, so that (if the
# compiler leaves the matrix instruction asynchronous until its result is needed) the exponentials
# of one block overlap the Q K^T of the next, the overlap FlashAttention-3 builds on. It costs a
# second BLOCK_M x BLOCK_N float32 tile of registers. Needs hi - lo >= BLOCK_N.
# Measured: it does not pay. Triton (3.6 and 3.9) waits for every Q K^T right after issuing it
# (WARPGROUP.DEPBAR straight after the HGMMAs in the SASS); only the P V product it pipelines on
# its own is left in flight. So nothing overlaps, and the extra registers cost 5-10%.


@triton.jit
def _attn_fwd_inner_pipelined(acc, l_i, m_i, q, desc_k, desc_v, kv_row, lo, hi, qk_scale,
                              BLOCK_N: tl.constexpr, UPCAST: tl.constexpr, LAZY: tl.constexpr, POLY: tl.constexpr):
    k = desc_k.load([kv_row + lo, 0])
    s = _dot(q, tl.trans(k), None, UPCAST)
    for start_n in tl.range(lo + BLOCK_N, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        k = desc_k.load([kv_row + start_n, 0])
        s_next = _dot(q, tl.trans(k), None, UPCAST)  # block j+1's scores, independent of block j's softmax
        p, m_i, l_i, acc = _online_softmax(s, m_i, l_i, acc, qk_scale, LAZY, POLY)
        v = desc_v.load([kv_row + start_n - BLOCK_N, 0])
        acc = _dot(p.to(v.dtype), v, acc, UPCAST)
        s = s_next
    p, m_i, l_i, acc = _online_softmax(s, m_i, l_i, acc, qk_scale, LAZY, POLY)
    v = desc_v.load([kv_row + hi - BLOCK_N, 0])
    acc = _dot(p.to(v.dtype), v, acc, UPCAST)
    return acc, l_i, m_i


# %%
# The kernel: program (pid_m, pid_hz) owns query rows [start_m * BLOCK_M, +BLOCK_M) of one
# (batch, head). Programs of one head are numbered next to each other, so the GPU runs them at the
# same time and they share that head's K and V through the L2 cache (each head's K and V are read
# from device memory about once, not once per query block).
#
# Causal attention: query block start_m needs key blocks 0 .. start_m only, and those strictly
# below the diagonal need no mask. Blocks are handed out heaviest first (the last query block
# reads the most keys), so the light ones fill the gaps at the end of the launch instead of one
# heavy block running alone while the rest of the GPU idles.


@triton.jit
def _attn_fwd(Q, K, V, O, desc_q, desc_k, desc_v, sm_scale,  # noqa: E741 (Q, K, V, O as in the paper)
              stride_qz, stride_qh, stride_qm, stride_kz, stride_kh, stride_kn,
              stride_vz, stride_vh, stride_vn, stride_oz, stride_oh, stride_om,
              H, n_ctx,
              HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr,
              TMA: tl.constexpr, WARP_SPECIALIZE: tl.constexpr, PIPELINE: tl.constexpr = False,
              LAZY: tl.constexpr = False, POLY: tl.constexpr = False, UPCAST: tl.constexpr = False):
    if CAUSAL:
        tl.static_assert(BLOCK_M % BLOCK_N == 0, "the diagonal must fall on key-block boundaries")
    pid_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    if CAUSAL:
        start_m = tl.num_programs(0) - 1 - pid_m  # heaviest query block first
    else:
        start_m = pid_m
    off_z = off_hz // H
    off_h = off_hz % H

    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    # Running statistics per query row, float32: m in base-2 units, l the sum of exponentials.
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.4426950408889634  # sm_scale * log2(e), see exp2 above

    # Q, K, V as (rows, HEAD_DIM) tiles. With descriptors the tensors are seen as one 2D array of
    # batch*heads*N rows (the wrapper checks they are contiguous); this head starts at row
    # off_hz * n_ctx.
    kv_row = off_hz * n_ctx
    offs_d = tl.arange(0, HEAD_DIM)
    k_base = K + off_z.to(tl.int64) * stride_kz + off_h.to(tl.int64) * stride_kh
    v_base = V + off_z.to(tl.int64) * stride_vz + off_h.to(tl.int64) * stride_vh
    if TMA == 2:  # descriptors built on the device (the scratch for them comes from set_allocator)
        rows = tl.num_programs(1) * n_ctx
        desc_q = tl.make_tensor_descriptor(Q, [rows, HEAD_DIM], [HEAD_DIM, 1], [BLOCK_M, HEAD_DIM])
        desc_k = tl.make_tensor_descriptor(K, [rows, HEAD_DIM], [HEAD_DIM, 1], [BLOCK_N, HEAD_DIM])
        desc_v = tl.make_tensor_descriptor(V, [rows, HEAD_DIM], [HEAD_DIM, 1], [BLOCK_N, HEAD_DIM])
    if TMA == 0:
        # Plain pointer tiles, one head's rows each; loads past N are masked to zero. (Triton 3.6
        # also has block pointers, tl.make_block_ptr, but newer Tritons removed them in favour of
        # tensor descriptors, so this fallback path keeps to what every version has.)
        q_ptrs = (Q + off_z.to(tl.int64) * stride_qz + off_h.to(tl.int64) * stride_qh
                  + offs_m[:, None] * stride_qm + offs_d[None, :])
        # Q stays in on-chip memory for the whole loop: loaded once, used by every key block.
        q = tl.load(q_ptrs, mask=offs_m[:, None] < n_ctx, other=0.0)
    else:
        q = desc_q.load([kv_row + start_m * BLOCK_M, 0])

    # Key range, split by whether a mask is needed.
    if CAUSAL:
        full_hi = start_m * BLOCK_M  # blocks wholly below the diagonal
        masked_hi = tl.minimum((start_m + 1) * BLOCK_M, n_ctx)  # the diagonal block(s)
    else:
        full_hi = (n_ctx // BLOCK_N) * BLOCK_N  # every whole block
        masked_hi = n_ctx  # the ragged tail, if N % BLOCK_N != 0
    if PIPELINE and TMA != 0:
        if full_hi > 0:
            acc, l_i, m_i = _attn_fwd_inner_pipelined(acc, l_i, m_i, q, desc_k, desc_v, kv_row, 0, full_hi, qk_scale,
                                                      BLOCK_N, UPCAST, LAZY, POLY)
    else:
        acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, desc_k, desc_v, k_base, v_base, stride_kn, stride_vn,
                                        kv_row, 0, full_hi, n_ctx, offs_m, qk_scale, HEAD_DIM, BLOCK_N, False, CAUSAL,
                                        TMA, WARP_SPECIALIZE, UPCAST, LAZY, POLY)
    if full_hi < masked_hi:
        acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, desc_k, desc_v, k_base, v_base, stride_kn, stride_vn,
                                        kv_row, full_hi, masked_hi, n_ctx, offs_m, qk_scale, HEAD_DIM, BLOCK_N, True,
                                        CAUSAL, TMA, False, UPCAST, LAZY, POLY)

    # Epilogue: the division by the softmax sum, done once per row instead of once per block.
    out = acc / l_i[:, None]
    # The output goes through masked pointers with per-head bounds in every mode: a descriptor over
    # all heads' rows would let the last block of one head overwrite the first rows of the next.
    o_ptrs = (O + off_z.to(tl.int64) * stride_oz + off_h.to(tl.int64) * stride_oh
              + offs_m[:, None] * stride_om + offs_d[None, :])
    tl.store(o_ptrs, out.to(O.dtype.element_ty), mask=offs_m[:, None] < n_ctx)


# %%
# Launch configurations.
#
# BLOCK_M x BLOCK_N is the score tile a program holds in registers at a time, next to the
# BLOCK_M x d float32 accumulator. On an H100 one warpgroup (4 warps) issues the tensor-core
# instructions (wgmma) in slabs of 64 rows. num_stages is how many K/V tiles are in flight in shared
# memory: (BLOCK_N x d x 2 bytes) x 2 (K and V) per stage, next to Q's BLOCK_M x d.
#
# What the sweep on an H100 found (d = 128, bf16, 32 heads; `python -m labs.experiments.flash_attention
# --sweep`), and why:
#   * The winner is BLOCK_M = 128, BLOCK_N = 64 with only 4 warps and 2 stages: 255 registers per
#     thread and 96 KB of shared memory, so exactly two programs fit on an SM (2 x 128 threads x 256
#     registers = the whole 64K register file). Two independent warpgroups per SM is what lets one
#     run its softmax (exponentials on the special-function unit) while the other keeps the tensor
#     cores busy. The same 128 rows on 8 warps in one program came out 10-20% slower: Triton
#     synchronizes all of a program's warps around each TMA copy, so its two warpgroups move in
#     lockstep and reach their softmax at the same time.
#   * 64 x 64 on 4 warps, 3 stages: best for causal attention at N = 4096, where the work per
#     query block is short and uneven and smaller blocks balance it better.
# Autotuning benchmarks every candidate the first time it sees a shape, so the list stays short.

# (BLOCK_M, BLOCK_N, num_warps, num_stages[, maxnreg])
TUNED_CONFIGS = {
    128: [(128, 64, 4, 2), (64, 64, 4, 3), (128, 64, 8, 3)],
    64: [(128, 64, 4, 3), (64, 64, 4, 3), (128, 64, 8, 3)],
}
SMALL_CONFIGS = [(64, 32, 4, 2), (64, 64, 4, 3), (32, 32, 4, 2)]  # d < 64
INTERPRETER_CONFIG = (32, 16, 4, 1)  # small tiles keep NumPy quick; a ragged N exercises the masks


def _smem_bytes(block_m, block_n, head_dim, stages, itemsize=2):
    return itemsize * head_dim * (block_m + 2 * block_n * stages)


def _usable(cfg, head_dim, causal=True, smem_limit=227 * 1024):
    block_m, block_n, _, stages = cfg[:4]
    return (block_m % block_n == 0 or not causal) and _smem_bytes(block_m, block_n, head_dim, stages) <= smem_limit


def _set_descriptor_blocks(nargs):
    """Autotune pre-hook: a host descriptor carries its tile shape, so each config sets its own."""
    if TensorDescriptor is not None and isinstance(nargs.get("desc_q"), TensorDescriptor):
        d = nargs["HEAD_DIM"]
        nargs["desc_q"].block_shape = [nargs["BLOCK_M"], d]
        nargs["desc_k"].block_shape = [nargs["BLOCK_N"], d]
        nargs["desc_v"].block_shape = [nargs["BLOCK_N"], d]


def _configs(head_dim):
    return [triton.Config({"BLOCK_M": cfg[0], "BLOCK_N": cfg[1]}, num_warps=cfg[2], num_stages=cfg[3],
                          maxnreg=cfg[4] if len(cfg) > 4 else None, pre_hook=_set_descriptor_blocks)
            for cfg in TUNED_CONFIGS.get(head_dim, SMALL_CONFIGS) if _usable(cfg, head_dim)]


@functools.cache
def _autotuned(head_dim):
    # One autotuner per head dimension, so each tunes over its own short list. The key adds N,
    # causal and the mode; the autotuner adds the dtypes.
    return triton.autotune(configs=_configs(head_dim), key=["n_ctx", "HEAD_DIM", "CAUSAL", "TMA"])(_attn_fwd)


# %%
# The wrapper.


def tma_available(device: torch.device | str | None = None) -> dict:
    """Which tensor-descriptor paths this Triton and GPU offer (checked at run time, not assumed)."""
    if INTERPRETED:
        return {"tma": TensorDescriptor is not None, "tma_device": False}
    if triton is NO_TRITON or not torch.cuda.is_available():
        return {"tma": False, "tma_device": False}
    hopper = torch.cuda.get_device_capability(device)[0] >= 9
    return {"tma": hopper and TensorDescriptor is not None,
            "tma_device": hopper and hasattr(tl, "make_tensor_descriptor") and hasattr(triton, "set_allocator")}


@functools.cache
def _default_mode_for(device_index: int) -> str:
    have = tma_available(device_index)
    return "tma" if have["tma"] else "tma_device" if have["tma_device"] else "pointers"


def default_mode(device=None) -> str:
    if INTERPRETED:
        return "pointers"
    return _default_mode_for(torch.device(device or "cuda").index or 0)


def _scratch(size: int, alignment: int, stream):
    return torch.empty(size, dtype=torch.int8, device="cuda")


def _checked(q, k, v, mode):
    """Validate the inputs; return them in the layout the mode needs, and the mode."""
    if triton is NO_TRITON:
        raise RuntimeError("triton is not installed")
    if q.dim() != 4 or q.shape != k.shape or q.shape != v.shape:
        raise ValueError(f"q, k, v must share one (batch, heads, N, d) shape; got {tuple(q.shape)}, "
                         f"{tuple(k.shape)}, {tuple(v.shape)}")
    if not (q.dtype == k.dtype == v.dtype):
        raise ValueError("q, k and v must share a dtype")
    allowed = (torch.bfloat16, torch.float16) + ((torch.float32,) if INTERPRETED else ())
    if q.dtype not in allowed:
        raise ValueError(f"{q.dtype} not supported: bf16 or fp16 (the tensor cores' inputs)")
    if q.shape[-1] not in HEAD_DIMS:
        raise ValueError(f"head dim {q.shape[-1]} not supported; one of {HEAD_DIMS}")
    if INTERPRETED != (q.device.type == "cpu"):
        raise ValueError("compiled kernels take CUDA tensors; under TRITON_INTERPRET=1 they take CPU tensors")
    mode = mode or default_mode(q.device)
    if TMA_MODES[mode]:
        # Descriptors see all heads as one (batch * heads * N, d) array of rows: that needs
        # contiguous tensors. SDPA-layout tensors made by randn or a contiguous projection are.
        q, k, v = (t.contiguous() for t in (q, k, v))
    else:
        q, k, v = (t if t.stride(-1) == 1 else t.contiguous() for t in (q, k, v))
    return q, k, v, mode


def _launcher(q, k, v, causal, sm_scale, mode, config, flags):
    """Bind everything about a call except the output: descriptors, strides, grid, compile-time
    flags. The returned launch(o) only launches, which matters at small N, where Python's share of a
    call is comparable to the kernel's time."""
    b, h, n, d = q.shape
    sm_scale = d ** -0.5 if sm_scale is None else float(sm_scale)
    tma = TMA_MODES[mode]
    desc = (None, None, None)
    if tma == 1:
        block = [16, d]  # a placeholder tile shape: set per config (the pre-hook, or below)
        desc = tuple(TensorDescriptor(t, [b * h * n, d], [d, 1], list(block)) for t in (q, k, v))
    elif tma == 2:
        triton.set_allocator(_scratch)
    # The output is always a new contiguous (b, h, n, d) tensor (or a caller's, checked to be one).
    rest = (*desc, sm_scale, q.stride(0), q.stride(1), q.stride(2), k.stride(0), k.stride(1), k.stride(2),
            v.stride(0), v.stride(1), v.stride(2), h * n * d, n * d, d, h, n)
    kw = {"HEAD_DIM": d, "CAUSAL": bool(causal), "TMA": tma, **flags}
    if INTERPRETED and q.dtype == torch.bfloat16:
        kw["UPCAST"] = True
    if INTERPRETED and config is None:
        config = INTERPRETER_CONFIG
    if config is not None:
        block_m, block_n, warps, stages = config[:4]
        if len(config) > 4 and config[4]:  # a register cap per thread (maxnreg), to fit more programs per SM
            kw["maxnreg"] = config[4]
        if tma == 1:
            _set_descriptor_blocks({"desc_q": desc[0], "desc_k": desc[1], "desc_v": desc[2], "HEAD_DIM": d,
                                    "BLOCK_M": block_m, "BLOCK_N": block_n})
        kw.update(BLOCK_M=block_m, BLOCK_N=block_n, num_warps=warps, num_stages=stages)
        run = _attn_fwd[(triton.cdiv(n, block_m), b * h)]
    else:
        run = _autotuned(d)[lambda meta: (triton.cdiv(n, meta["BLOCK_M"]), b * h)]

    def launch(o):
        run(q, k, v, o, *rest, **kw)
        return o

    return launch


def _flags(warp_specialize=False, pipeline=False, lazy_rescale=False, poly_exp=False):
    return {"WARP_SPECIALIZE": bool(warp_specialize), "PIPELINE": bool(pipeline), "LAZY": bool(lazy_rescale),
            "POLY": bool(poly_exp)}


def flash_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False,
                    sm_scale: float | None = None, *, mode: str | None = None, config: tuple | None = None,
                    out: torch.Tensor | None = None, **experimental) -> torch.Tensor:
    """softmax(q k^T * sm_scale [+ causal mask]) v for (batch, heads, N, d) tensors, like SDPA.

    bf16 or fp16 on a GPU (float32 too under the interpreter, where it is exact NumPy arithmetic),
    d a power of two from 16 to 128 (64 and 128 are the tuned ones), any N. sm_scale defaults to
    1/sqrt(d). mode: "pointers", "tma" or "tma_device" (default: the best this GPU has).
    config = (BLOCK_M, BLOCK_N, num_warps, num_stages[, maxnreg]) skips autotuning (sweeps, tests).
    out: where to write (a contiguous tensor shaped like q), e.g. one poisoned with NaN by a test.
    experimental: warp_specialize, pipeline, lazy_rescale, poly_exp (see KERNEL_VARIANTS).
    """
    q, k, v, mode = _checked(q, k, v, mode)
    if out is not None and (out.shape != q.shape or out.dtype != q.dtype or not out.is_contiguous()):
        raise ValueError("out must be a contiguous tensor shaped and typed like q")
    o = torch.empty(q.shape, dtype=q.dtype, device=q.device) if out is None else out
    return _launcher(q, k, v, causal, sm_scale, mode, config, _flags(**experimental))(o)


def prepare(q, k, v, causal: bool = False, sm_scale: float | None = None, *, mode: str | None = None,
            config: tuple | None = None, **experimental):
    """flash_attention on these tensors as a zero-argument callable, for repeated calls (the lab's
    timing): checks, autotuning and descriptors happen here once; each call allocates the output and
    launches, nothing else."""
    q, k, v, mode = _checked(q, k, v, mode)
    flags = _flags(**experimental)
    if config is None and not INTERPRETED:
        _launcher(q, k, v, causal, sm_scale, mode, None, flags)(torch.empty(q.shape, dtype=q.dtype, device=q.device))
        best = _autotuned(q.shape[-1]).best_config  # the autotuner's pick for this shape
        config = (best.kwargs["BLOCK_M"], best.kwargs["BLOCK_N"], best.num_warps, best.num_stages,
                  getattr(best, "maxnreg", None))
    launch = _launcher(q, k, v, causal, sm_scale, mode, config, flags)
    return lambda: launch(torch.empty(q.shape, dtype=q.dtype, device=q.device))


# %%
# Correctness: against attention computed in float32 (highest matmul precision) on the same
# rounded inputs. The output starts as whatever torch.empty held; the kernel writes every element,
# and a NaN or an unwritten element fails the check.


def reference(q, k, v, causal: bool, sm_scale: float | None = None) -> torch.Tensor:
    previous = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("highest")
    try:
        n, d = q.shape[-2], q.shape[-1]
        s = (q.float() @ k.float().transpose(-2, -1)) * (d ** -0.5 if sm_scale is None else sm_scale)
        if causal:
            s.masked_fill_(torch.ones(n, n, dtype=torch.bool, device=q.device).triu_(1), float("-inf"))
        return torch.softmax(s, dim=-1) @ v.float()
    finally:
        torch.set_float32_matmul_precision(previous)


def check_shapes(device: str, dtype: str, shapes, seed: int = 0, **kwargs) -> list[dict]:
    """[(batch, heads, N, d, causal)] -> one check per shape (compare()'s fields plus the shape).

    Fresh random inputs per shape; the output starts as NaN, so an element the kernel never
    writes fails the check.
    """
    from .common import DTYPES, compare

    checks = []
    for i, (b, h, n, d, causal) in enumerate(shapes):
        g = torch.Generator(device=device).manual_seed(seed + i)
        q, k, v = (torch.randn(b, h, n, d, generator=g, device=device, dtype=DTYPES[dtype]) for _ in range(3))
        out = torch.full_like(q, float("nan"))
        flash_attention(q, k, v, causal=causal, out=out, **kwargs)
        checks.append({"name": f"triton_flash B={b} H={h} N={n} d={d} causal={causal} {dtype}",
                       "shape": [b, h, n, d], "causal": causal, **compare(out, reference(q, k, v, causal), dtype)})
    return checks


INTERPRETER_SHAPES = ((1, 2, 64, 64, False), (1, 2, 64, 64, True), (1, 1, 128, 64, False), (1, 1, 128, 64, True),
                      (2, 1, 50, 64, True), (1, 1, 50, 32, False))


def interpreter_check(dtype: str | list[str] = "float32", shapes=INTERPRETER_SHAPES,
                      variants=("pointers", "tma", "tma_pipe"), config=None) -> list[dict]:
    """Entry point for interpret.py's child process (TRITON_INTERPRET=1): the kernel on CPU tensors.

    The loading paths run: pointer tiles, and host tensor descriptors (the interpreter emulates
    TMA loads, so the descriptor arithmetic is checked even on a machine without a Hopper GPU).
    bf16 dots run on float32 copies of their (bf16-rounded) operands here: Triton's interpreter
    (3.9 at least) keeps bf16 as raw 16-bit integers and would multiply those.
    """
    if not INTERPRETED:
        raise RuntimeError("interpreter_check needs TRITON_INTERPRET=1 set before this module is imported")
    shapes = [tuple(s) for s in shapes]
    checks = []
    for dt in [dtype] if isinstance(dtype, str) else dtype:
        for name in variants:
            kwargs = KERNEL_VARIANTS[name]
            if kwargs["mode"] != "pointers" and TensorDescriptor is None:
                continue
            for c in check_shapes("cpu", dt, shapes, config=tuple(config) if config else None, **kwargs):
                checks.append({**c, "name": f"{c['name']} {name}", "variant": name})
    return checks


# %%
# As a variant of the attention lab (attention.py registers it): on a GPU it is timed like the
# others; on a CPU the kernel runs under the interpreter in a child process, for correctness only.


def unavailable(device, dtype: str) -> str | None:
    if triton is NO_TRITON:
        return "triton not installed"
    if not device.is_cuda:
        return ("needs a CUDA GPU (Triton compiles for GPUs); on a CPU it is checked for correctness under "
                "the Triton interpreter (TRITON_INTERPRET=1) instead, not timed")
    if dtype not in ("bfloat16", "float16"):
        return "runs bf16 and fp16 only (the tensor cores' input types)"
    return None


def build(q, k, v, causal):
    if q.shape[-1] not in HEAD_DIMS:
        raise ValueError(f"head dim {q.shape[-1]} not supported by the Triton kernel; one of {HEAD_DIMS}")
    # Autotune (and compile) now, outside the lab's first call: autotuning allocates do_bench's
    # cache-flush buffer, which would otherwise show up as this variant's peak memory. The callable
    # then skips the per-call checks and the autotuner's dispatch: at N = 1024 the kernel runs for
    # tens of microseconds, and Python's overhead would otherwise be timed along with it.
    return prepare(q, k, v, causal)


def cpu_check(params) -> list[dict]:
    """The lab on a CPU: the kernel on a small shape of the request, in the interpreter."""
    from .interpret import run_interpreter

    if triton is NO_TRITON:
        return []

    n = min(128, min(params.seq_lens))
    d = params.head_dim if params.head_dim in HEAD_DIMS else 64
    shapes = [(1, min(2, params.heads), n, d, params.causal)]
    if INTERPRETED:
        return interpreter_check(params.dtype, shapes)
    return run_interpreter("flash_attention", {"dtype": params.dtype, "shapes": shapes})


# %%
# Benchmark and tuning sweep (on a GPU): python -m labs.experiments.flash_attention [--sweep]
# Each variant next to SDPA's flash and cuDNN backends, timed in the same process with the labs'
# timer (do_bench, L2 flushed before every call, median). Compiling dozens of configurations one
# after another takes minutes, so --jobs compiles them first in parallel worker processes, which
# fill Triton's on-disk cache; the timing process then only loads them.

GLUON = "gluon"  # the Hopper kernel of flash_attention_gluon.py, benchmarked next to these variants

SWEEP_CONFIGS = {
    # (BLOCK_M, BLOCK_N, num_warps, num_stages[, maxnreg])
    128: [(128, 64, 8, 2), (128, 64, 8, 3), (128, 128, 8, 2), (128, 64, 4, 2), (128, 32, 4, 3), (64, 64, 4, 3),
          (64, 128, 4, 2), (128, 64, 8, 2, 128)],
    64: [(128, 64, 4, 3), (128, 64, 8, 3), (128, 128, 8, 3), (64, 64, 4, 3), (128, 128, 4, 2), (128, 64, 4, 2)],
}


def _raise(exc):
    raise exc


def _compile_one(job):
    """Worker: compile one (variant, config, d, causal) by running it once on a small input whose
    sizes and strides share the large ones' divisibility (Triton specializes on that)."""
    variant, cfg, d, causal, heads = job
    try:
        q = torch.randn(1, heads, 256, d, device="cuda", dtype=torch.bfloat16)
        if variant == GLUON:
            gluon_kernel.flash_attention(q, q, q, causal, config=cfg)
        else:
            flash_attention(q, q, q, causal, config=cfg, **KERNEL_VARIANTS[variant])
        torch.cuda.synchronize()
        return None
    except Exception as exc:  # reported again, with the timing, by the parent
        return f"{variant} {cfg}: {str(exc).splitlines()[0][:200]}"


def precompile(jobs, workers: int) -> list[str]:
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        return [e for e in pool.map(_compile_one, jobs, chunksize=1) if e]


def bench(shapes, variants, configs_for=SWEEP_CONFIGS, rep_ms=100.0, autotuned=True, out=sys.stdout) -> list[dict]:
    """shapes: [(b, h, n, d, causal)]; variants: KERNEL_VARIANTS names. One row per timing: each
    variant at each of configs_for[d], and (autotuned=True) autotuned as the lab calls it."""
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    from .attention import check_rows, reference_rows
    from .common import compare, get_device, measure

    device = get_device("cuda")
    rows = []

    def record(shape, name, fn, cfg, work, checked, ref):
        try:
            o = fn()
            check = compare(o[:, :, checked], ref, "bfloat16")
            t = measure(fn, device, rep_ms=rep_ms)
        except Exception as exc:  # a config that does not compile or fit: say so, go on
            rows.append({"shape": shape, "variant": name, "config": cfg, "error": str(exc).splitlines()[0][:200]})
            print(f"{shape:22s} {name:12s} {cfg!s:18s} FAILED {rows[-1]['error']}", file=out, flush=True)
            return
        tf = work / (t.median_ms * 1e-3) / 1e12
        rows.append({"shape": shape, "variant": name, "config": cfg, "median_ms": t.median_ms,
                     "spread_pct": t.spread_pct, "tflops": tf, "max_abs_error": check["max_abs_error"],
                     "passed": check["passed"]})
        print(f"{shape:22s} {name:12s} {cfg!s:18s} {t.median_ms:8.3f} ms {tf:6.1f} TFLOP/s "
              f"err {check['max_abs_error']:.1e} {'ok' if check['passed'] else 'FAIL'}", file=out, flush=True)

    for b, h, n, d, causal in shapes:
        g = torch.Generator(device="cuda").manual_seed(n)
        q, k, v = (torch.randn(b, h, n, d, generator=g, device="cuda", dtype=torch.bfloat16) for _ in range(3))
        checked = check_rows(n, 256)  # spread over the sequence, the last row included
        ref = reference_rows(q, k, v, causal, checked)
        checked = checked.to(q.device)
        shape = f"N={n} d={d} {'causal' if causal else 'full'}"
        work = 4.0 * b * h * n * n * d / (2 if causal else 1)
        for backend, name in ((SDPBackend.FLASH_ATTENTION, "sdpa_flash"), (SDPBackend.CUDNN_ATTENTION, "sdpa_cudnn")):
            def sdpa(backend=backend, q=q, k=k, v=v, causal=causal):
                with sdpa_kernel(backend):
                    return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            record(shape, name, sdpa, None, work, checked, ref)
        for name in variants:
            if name == GLUON:  # its own configurations; "default" is what the lab runs
                for cfg in gluon_kernel.SWEEP_CONFIGS if configs_for.get(d) else []:
                    record(shape, name, functools.partial(gluon_kernel.flash_attention, q, k, v, causal, config=cfg),
                           cfg, work, checked, ref)
                if autotuned:
                    record(shape, name, gluon_kernel.build(q, k, v, causal), "default", work, checked, ref)
                continue
            for cfg in configs_for.get(d, SMALL_CONFIGS):
                if _usable(cfg, d, causal):
                    fn = functools.partial(flash_attention, q, k, v, causal, config=cfg, **KERNEL_VARIANTS[name])
                    record(shape, name, fn, cfg, work, checked, ref)
            if autotuned:  # as the lab calls it: autotuned over TUNED_CONFIGS
                try:
                    fn = prepare(q, k, v, causal, **KERNEL_VARIANTS[name])
                except Exception as exc:  # a config of the tuned list that does not fit this variant
                    fn = functools.partial(_raise, exc)
                record(shape, name, fn, "autotuned", work, checked, ref)
        del q, k, v
        torch.cuda.empty_cache()
    return rows


def paired(shapes, variants, rounds: int = 5, rep_ms: float = 100.0, out=sys.stdout) -> list[dict]:
    """Each variant (as the lab calls it) against SDPA cuDNN, timed in alternation: cuDNN, then each
    variant, repeated `rounds` times. A GPU's clock drifts with its temperature over a long run, so
    a kernel timed a minute after another can look a few percent slower for no reason of its own;
    the ratio taken within each round compares neighbours in time. Returns one row per variant
    and shape with the median of the per-round ratios and their range."""
    import statistics

    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    from .common import get_device, measure

    device = get_device("cuda")
    rows = []
    for b, h, n, d, causal in shapes:
        q, k, v = (torch.randn(b, h, n, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
        work = 4.0 * b * h * n * n * d / (2 if causal else 1)

        def cudnn(q=q, k=k, v=v, causal=causal):
            with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

        fns = {"sdpa_cudnn": cudnn}
        for name in variants:
            fns[name] = gluon_kernel.build(q, k, v, causal) if name == GLUON else prepare(q, k, v, causal,
                                                                                             **KERNEL_VARIANTS[name])
        tflops = {name: [] for name in fns}
        for _ in range(rounds):
            for name, fn in fns.items():
                tflops[name].append(work / (measure(fn, device, rep_ms=rep_ms).median_ms * 1e-3) / 1e12)
        shape = f"N={n} d={d} {'causal' if causal else 'full'}"
        for name in variants:
            ratios = [a / c for a, c in zip(tflops[name], tflops["sdpa_cudnn"], strict=True)]
            row = {"shape": shape, "variant": name, "rounds": rounds, "tflops": statistics.median(tflops[name]),
                   "cudnn_tflops": statistics.median(tflops["sdpa_cudnn"]), "ratio": statistics.median(ratios),
                   "ratio_min": min(ratios), "ratio_max": max(ratios)}
            rows.append(row)
            print(f"{shape:22s} {name:8s} {row['tflops']:6.1f} TFLOP/s vs cuDNN {row['cudnn_tflops']:6.1f}: "
                  f"{row['ratio']:.3f}x (rounds {row['ratio_min']:.3f}-{row['ratio_max']:.3f}, n={rounds})",
                  file=out, flush=True)
        del q, k, v, fns
        torch.cuda.empty_cache()
    return rows


def summary(rows) -> str:
    lines = ["best per shape and variant: TFLOP/s, and the ratio to SDPA cuDNN and SDPA flash from the same run"]
    for shape in dict.fromkeys(r["shape"] for r in rows):
        here = [r for r in rows if r["shape"] == shape and "tflops" in r and r["passed"]]
        base = {r["variant"]: r["tflops"] for r in here if r["variant"].startswith("sdpa")}
        best = {}
        for r in here:
            if r["variant"] not in best or r["tflops"] > best[r["variant"]]["tflops"]:
                best[r["variant"]] = r
        for name, r in best.items():
            ratios = "  ".join(f"{r['tflops'] / base[s]:.2f}x {s}" for s in ("sdpa_cudnn", "sdpa_flash") if s in base)
            lines.append(f"{shape:22s} {name:12s} {r['config']!s:18s} {r['tflops']:6.1f} TFLOP/s  {ratios}")
    return "\n".join(lines)


def main(argv=None) -> int:
    import json

    from .common import get_device, library_versions, timing_method

    parser = argparse.ArgumentParser(prog="python -m labs.experiments.flash_attention", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sweep", action="store_true",
                        help="every variant x SWEEP_CONFIGS, and autotuned (default: autotuned only)")
    parser.add_argument("--seq-lens", default="4096,16384")
    parser.add_argument("--head-dims", default="128")
    parser.add_argument("--causal", default="false,true")
    parser.add_argument("--heads", type=int, default=32)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--variants", default="tma,gluon",
                        help=", ".join([*KERNEL_VARIANTS, GLUON]))
    parser.add_argument("--configs", help="BMxBNxWARPSxSTAGES,... instead of the sweep's lists")
    parser.add_argument("--jobs", type=int, default=min(12, os.cpu_count() or 1), help="parallel compiles first")
    parser.add_argument("--rep-ms", type=float, default=100.0)
    parser.add_argument("--rounds", type=int, default=5,
                        help="then each variant against cuDNN in this many alternating rounds (0: skip)")
    parser.add_argument("--json", help="write all rows here")
    args = parser.parse_args(argv)

    device = get_device("cuda")
    have = tma_available()
    print(f"# {device.describe()}\n# {library_versions()}\n# descriptors: {have}\n# {timing_method(device)}")
    variants = []
    for name in args.variants.split(","):
        if name == GLUON:
            why = gluon_kernel.available()
            if why:
                print(f"# {name}: not available here: {why}")
            else:
                variants.append(name)
            continue
        mode = KERNEL_VARIANTS[name]["mode"]
        if mode != "pointers" and not have.get(mode):
            print(f"# {name}: not available here")
        else:
            variants.append(name)
    head_dims = [int(x) for x in args.head_dims.split(",")]
    causals = [c.strip().lower() in ("1", "true", "yes") for c in args.causal.split(",")]
    shapes = [(args.batch, args.heads, n, d, c) for d in head_dims for n in map(int, args.seq_lens.split(","))
              for c in causals]
    if args.configs:
        cfgs = [tuple(int(x) for x in c.split("x")) for c in args.configs.split(",")]
        configs_for = {d: cfgs for d in head_dims}
    elif args.sweep:
        configs_for = SWEEP_CONFIGS
    else:  # autotuned only, as the lab calls it
        configs_for = {d: [] for d in head_dims}
    autotuned = args.sweep or not args.configs
    if args.jobs > 1:
        triton_variants = [name for name in variants if name != GLUON]
        jobs = [(name, cfg, d, c, args.heads) for name in triton_variants for d in head_dims for c in causals
                for cfg in configs_for.get(d, SMALL_CONFIGS) if _usable(cfg, d, c)]
        if autotuned:
            jobs += [(name, cfg, d, c, args.heads) for name in triton_variants for d in head_dims for c in causals
                     for cfg in TUNED_CONFIGS.get(d, SMALL_CONFIGS) if _usable(cfg, d, c)]
        if GLUON in variants:
            gluon_cfgs = (gluon_kernel.SWEEP_CONFIGS if configs_for.get(head_dims[0]) else []) + [None]
            jobs += [(GLUON, cfg, d, c, args.heads) for d in head_dims if d in gluon_kernel.HEAD_DIMS
                     for c in causals for cfg in gluon_cfgs]
        jobs = list(dict.fromkeys(jobs))
        import time

        t0 = time.perf_counter()
        errors = precompile(jobs, args.jobs)
        print(f"# compiled {len(jobs)} kernels on {args.jobs} processes in {time.perf_counter() - t0:.0f} s"
              f"{'; failed: ' + '; '.join(errors) if errors else ''}", flush=True)
    rows = bench(shapes, variants, configs_for, rep_ms=args.rep_ms, autotuned=autotuned)
    print("\n" + summary(rows))
    pairs = []
    if args.rounds > 0:
        print(f"\npaired with cuDNN, {args.rounds} alternating rounds (median of the per-round ratios; range)")
        pairs = paired(shapes, variants, args.rounds, args.rep_ms)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": device.describe(), "versions": library_versions(), "rows": rows, "paired": pairs},
                      f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
