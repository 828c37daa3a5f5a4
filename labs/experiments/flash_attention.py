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
  4. Checks against a float32 reference (on the GPU, or on the CPU under TRITON_INTERPRET=1).
The benchmark that times each variant next to PyTorch's SDPA flash and cuDNN backends is
`python -m labs.experiments.flash_attention_bench`; what it measured, and every variant tried, is
in NOTES.md.

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

What plain Triton cannot express is the overlap of softmax and matrix work inside one warpgroup
(FlashAttention-3's ping-pong and intra-warpgroup pipelining); `flash_attention_gluon.py` says it
explicitly in Gluon, for Hopper, and is the attention lab's `gluon_flash` variant.
"""

import functools
import os

import torch

from .triton_shim import NO_TRITON, triton_or_none

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
# The kernel's variants, as flash_attention() keyword arguments (compared by flash_attention_bench.py).
# Only the loading path differs among the first four; the last four are experiments that keep
# the tma path and change the loop (NOTES.md, "What was tried"): all exact, none faster.
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
def _attn_fwd_inner(
    acc,
    l_i,
    m_i,
    q,
    desc_k,
    desc_v,
    k_base,
    v_base,
    stride_kn,
    stride_vn,
    kv_row,
    lo,
    hi,
    n_ctx,
    offs_m,
    qk_scale,
    HEAD_DIM: tl.constexpr,
    BLOCK_N: tl.constexpr,
    MASK: tl.constexpr,
    CAUSAL: tl.constexpr,
    TMA: tl.constexpr,
    WARP_SPECIALIZE: tl.constexpr,
    UPCAST: tl.constexpr,
    LAZY: tl.constexpr,
    POLY: tl.constexpr,
):
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
# second BLOCK_M x BLOCK_N float32 tile of registers. Needs hi - lo >= BLOCK_N. It does not pay
# with the Tritons tried (NOTES.md says why): kept as the `tma_pipe` variant, for comparison.


@triton.jit
def _attn_fwd_inner_pipelined(
    acc,
    l_i,
    m_i,
    q,
    desc_k,
    desc_v,
    kv_row,
    lo,
    hi,
    qk_scale,
    BLOCK_N: tl.constexpr,
    UPCAST: tl.constexpr,
    LAZY: tl.constexpr,
    POLY: tl.constexpr,
):
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
def _attn_fwd(
    Q,
    K,
    V,
    O,  # noqa: E741 - the output, named as in the paper
    desc_q,
    desc_k,
    desc_v,
    sm_scale,
    stride_qz,
    stride_qh,
    stride_qm,
    stride_kz,
    stride_kh,
    stride_kn,
    stride_vz,
    stride_vh,
    stride_vn,
    stride_oz,
    stride_oh,
    stride_om,
    H,
    n_ctx,
    HEAD_DIM: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    CAUSAL: tl.constexpr,
    TMA: tl.constexpr,
    WARP_SPECIALIZE: tl.constexpr,
    PIPELINE: tl.constexpr = False,
    LAZY: tl.constexpr = False,
    POLY: tl.constexpr = False,
    UPCAST: tl.constexpr = False,
):
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
        q_ptrs = (
            Q
            + off_z.to(tl.int64) * stride_qz
            + off_h.to(tl.int64) * stride_qh
            + offs_m[:, None] * stride_qm
            + offs_d[None, :]
        )
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
            acc, l_i, m_i = _attn_fwd_inner_pipelined(
                acc, l_i, m_i, q, desc_k, desc_v, kv_row, 0, full_hi, qk_scale, BLOCK_N, UPCAST, LAZY, POLY
            )
    else:
        acc, l_i, m_i = _attn_fwd_inner(
            acc,
            l_i,
            m_i,
            q,
            desc_k,
            desc_v,
            k_base,
            v_base,
            stride_kn,
            stride_vn,
            kv_row,
            0,
            full_hi,
            n_ctx,
            offs_m,
            qk_scale,
            HEAD_DIM,
            BLOCK_N,
            False,
            CAUSAL,
            TMA,
            WARP_SPECIALIZE,
            UPCAST,
            LAZY,
            POLY,
        )
    if full_hi < masked_hi:
        acc, l_i, m_i = _attn_fwd_inner(
            acc,
            l_i,
            m_i,
            q,
            desc_k,
            desc_v,
            k_base,
            v_base,
            stride_kn,
            stride_vn,
            kv_row,
            full_hi,
            masked_hi,
            n_ctx,
            offs_m,
            qk_scale,
            HEAD_DIM,
            BLOCK_N,
            True,
            CAUSAL,
            TMA,
            False,
            UPCAST,
            LAZY,
            POLY,
        )

    # Epilogue: the division by the softmax sum, done once per row instead of once per block.
    out = acc / l_i[:, None]
    # The output goes through masked pointers with per-head bounds in every mode: a descriptor over
    # all heads' rows would let the last block of one head overwrite the first rows of the next.
    o_ptrs = (
        O
        + off_z.to(tl.int64) * stride_oz
        + off_h.to(tl.int64) * stride_oh
        + offs_m[:, None] * stride_om
        + offs_d[None, :]
    )
    tl.store(o_ptrs, out.to(O.dtype.element_ty), mask=offs_m[:, None] < n_ctx)


# %%
# Launch configurations.
#
# BLOCK_M x BLOCK_N is the score tile a program holds in registers at a time, next to the
# BLOCK_M x d float32 accumulator. On an H100 one warpgroup (4 warps) issues the tensor-core
# instructions (wgmma) in slabs of 64 rows. num_stages is how many K/V tiles are in flight in shared
# memory: (BLOCK_N x d x 2 bytes) x 2 (K and V) per stage, next to Q's BLOCK_M x d.
#
# Why these candidates (d = 128; the sweep that chose them is in NOTES.md):
#   * BLOCK_M = 128, BLOCK_N = 64 on only 4 warps and 2 stages: 255 registers per thread and 96 KB
#     of shared memory, so exactly two programs fit on an SM (2 x 128 threads x 256 registers = the
#     whole 64K register file). Two independent warpgroups per SM let one run its softmax
#     (exponentials on the special-function unit) while the other keeps the tensor cores busy; the
#     same rows on 8 warps in one program move in lockstep, because Triton synchronizes all of a
#     program's warps around each TMA copy.
#   * 64 x 64 on 4 warps, 3 stages: for causal attention at moderate N, where the work per query
#     block is short and uneven and smaller blocks balance it better.
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


def usable_config(cfg, head_dim, causal=True, smem_limit=227 * 1024):
    """Whether a (BLOCK_M, BLOCK_N, warps, stages, ...) config fits this head dim: causal tiles on key-block
    boundaries, and the Q tile plus `stages` K/V tiles within an SM's shared memory."""
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
    return [
        triton.Config(
            {"BLOCK_M": cfg[0], "BLOCK_N": cfg[1]},
            num_warps=cfg[2],
            num_stages=cfg[3],
            maxnreg=cfg[4] if len(cfg) > 4 else None,
            pre_hook=_set_descriptor_blocks,
        )
        for cfg in TUNED_CONFIGS.get(head_dim, SMALL_CONFIGS)
        if usable_config(cfg, head_dim)
    ]


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
    return {
        "tma": hopper and TensorDescriptor is not None,
        "tma_device": hopper and hasattr(tl, "make_tensor_descriptor") and hasattr(triton, "set_allocator"),
    }


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
        raise ValueError(
            f"q, k, v must share one (batch, heads, N, d) shape; got {tuple(q.shape)}, "
            f"{tuple(k.shape)}, {tuple(v.shape)}"
        )
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
    sm_scale = d**-0.5 if sm_scale is None else float(sm_scale)
    tma = TMA_MODES[mode]
    desc = (None, None, None)
    if tma == 1:
        block = [16, d]  # a placeholder tile shape: set per config (the pre-hook, or below)
        desc = tuple(TensorDescriptor(t, [b * h * n, d], [d, 1], list(block)) for t in (q, k, v))
    elif tma == 2:
        triton.set_allocator(_scratch)
    # The output is always a new contiguous (b, h, n, d) tensor (or a caller's, checked to be one).
    rest = (
        *desc,
        sm_scale,
        q.stride(0),
        q.stride(1),
        q.stride(2),
        k.stride(0),
        k.stride(1),
        k.stride(2),
        v.stride(0),
        v.stride(1),
        v.stride(2),
        h * n * d,
        n * d,
        d,
        h,
        n,
    )
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
            _set_descriptor_blocks(
                {
                    "desc_q": desc[0],
                    "desc_k": desc[1],
                    "desc_v": desc[2],
                    "HEAD_DIM": d,
                    "BLOCK_M": block_m,
                    "BLOCK_N": block_n,
                }
            )
        kw.update(BLOCK_M=block_m, BLOCK_N=block_n, num_warps=warps, num_stages=stages)
        run = _attn_fwd[(triton.cdiv(n, block_m), b * h)]
    else:
        run = _autotuned(d)[lambda meta: (triton.cdiv(n, meta["BLOCK_M"]), b * h)]

    def launch(o):
        run(q, k, v, o, *rest, **kw)
        return o

    return launch


def _flags(warp_specialize=False, pipeline=False, lazy_rescale=False, poly_exp=False):
    return {
        "WARP_SPECIALIZE": bool(warp_specialize),
        "PIPELINE": bool(pipeline),
        "LAZY": bool(lazy_rescale),
        "POLY": bool(poly_exp),
    }


def flash_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    causal: bool = False,
    sm_scale: float | None = None,
    *,
    mode: str | None = None,
    config: tuple | None = None,
    out: torch.Tensor | None = None,
    **experimental,
) -> torch.Tensor:
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


def prepare(
    q,
    k,
    v,
    causal: bool = False,
    sm_scale: float | None = None,
    *,
    mode: str | None = None,
    config: tuple | None = None,
    **experimental,
):
    """flash_attention on these tensors as a zero-argument callable, for repeated calls (the lab's
    timing): checks, autotuning and descriptors happen here once; each call allocates the output and
    launches, nothing else."""
    q, k, v, mode = _checked(q, k, v, mode)
    flags = _flags(**experimental)
    if config is None and not INTERPRETED:
        _launcher(q, k, v, causal, sm_scale, mode, None, flags)(torch.empty(q.shape, dtype=q.dtype, device=q.device))
        best = _autotuned(q.shape[-1]).best_config  # the autotuner's pick for this shape
        config = (
            best.kwargs["BLOCK_M"],
            best.kwargs["BLOCK_N"],
            best.num_warps,
            best.num_stages,
            getattr(best, "maxnreg", None),
        )
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
        s = (q.float() @ k.float().transpose(-2, -1)) * (d**-0.5 if sm_scale is None else sm_scale)
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
    from .correctness import compare
    from .device import DTYPES

    checks = []
    for i, (b, h, n, d, causal) in enumerate(shapes):
        g = torch.Generator(device=device).manual_seed(seed + i)
        q, k, v = (torch.randn(b, h, n, d, generator=g, device=device, dtype=DTYPES[dtype]) for _ in range(3))
        out = torch.full_like(q, float("nan"))
        flash_attention(q, k, v, causal=causal, out=out, **kwargs)
        checks.append(
            {
                "name": f"triton_flash B={b} H={h} N={n} d={d} causal={causal} {dtype}",
                "shape": [b, h, n, d],
                "causal": causal,
                **compare(out, reference(q, k, v, causal), dtype),
            }
        )
    return checks


INTERPRETER_SHAPES = (
    (1, 2, 64, 64, False),
    (1, 2, 64, 64, True),
    (1, 1, 128, 64, False),
    (1, 1, 128, 64, True),
    (2, 1, 50, 64, True),
    (1, 1, 50, 32, False),
)


def interpreter_check(
    dtype: str | list[str] = "float32", shapes=INTERPRETER_SHAPES, variants=("pointers", "tma", "tma_pipe"), config=None
) -> list[dict]:
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
        return (
            "needs a CUDA GPU (Triton compiles for GPUs); on a CPU it is checked for correctness under "
            "the Triton interpreter (TRITON_INTERPRET=1) instead, not timed"
        )
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
