"""
FlashAttention forward for Hopper, in Gluon (Triton's lower-level language)
============================================================================

The same algorithm as `flash_attention.py` (tiles of keys and values, online softmax), written in
Gluon, which ships inside Triton (`triton.experimental.gluon`) and lets a kernel say what plain
Triton decides for itself: which warps do what, where tiles live in shared memory, when a copy or
a tensor-core instruction is waited for. That control is what the last 20% on an H100 needs; NOTES.md
("What was tried") says where plain Triton stops short, and what this kernel measured.

The plan of one program (a CTA) follows FlashAttention-3 (Shah et al., 2024):

  * Three groups of warps, each running its own code (warp specialization, `gl.warp_specialize`):
    one *load* warp and two *compute* warpgroups of 4 warps. The load warp only issues TMA copies:
    Q once, then K and V tiles into a ring of STAGES shared-memory slots. The compute warpgroups
    own BLOCK_M query rows each and share every K and V tile the load warp brings, so a tile read
    from memory serves 2 x BLOCK_M rows.
  * Hand-offs through mbarriers, never a block-wide barrier: `k_ready[s]`/`v_ready[s]` complete
    when slot s's copy lands (the TMA counts the bytes); `k_empty[s]`/`v_empty[s]` complete when
    both compute warpgroups are done reading it, and only then does the load warp refill the slot.
    The two compute warpgroups never wait for each other, so one can be in its softmax while the
    other keeps the tensor cores busy (the ping-pong that two CTAs per SM gave the Triton kernel).
  * Inside one compute warpgroup, the tensor-core work of one key block is meant to overlap the
    softmax of the next (FlashAttention-3's intra-warpgroup pipelining). Hopper's matrix instruction
    (wgmma) is asynchronous: issue S_j = Q K_j^T, then O += P_{j-1} V_{j-1}, wait only for S_j,
    run the softmax of block j, and wait for P_{j-1} V_{j-1} last. The online softmax's order
    changes accordingly: block j-1's rescale factor is applied to O just before P_{j-1} V_{j-1} is
    issued; every term still ends up scaled to the final row maximum. The PTX has this order, but
    ptxas moves the second wait earlier (NOTES.md), so the overlap the kernel actually gets comes
    from its two warpgroups.
  * P never touches shared memory: the softmax output is converted in registers to the layout
    wgmma takes its left operand in.
  * For non-causal attention the kernel is persistent (`_attn_fwd_persistent`): one CTA per SM
    walks its share of the tiles, and the load warp fetches the next tile's Q (double-buffered) and
    first K/V blocks while the compute warpgroups finish the current one, so the pipeline does not
    drain and refill at every tile. Causal attention keeps one CTA per tile (`_attn_fwd_ws`): its
    tiles differ in cost up to N / BLOCK_N-fold, and the GPU's block scheduler, which gives the next
    tile to whichever SM frees up first, balances them better than a fixed stride does.

Other schedules are selectable (`SCHEDULES`, `SWEEP_CONFIGS`) for comparison; NOTES.md has what
each measured against cuDNN.

Needs a Hopper GPU (sm_90) and a Triton whose Gluon has `warp_specialize(functions_and_args, ...)`,
`warpgroup_mma(..., is_async=True)` and TMA/mbarrier support (3.6 has); `available()` says whether
this one does (3.6 runs it; 3.9 compiles it, checked on a CPU by the tests). The module imports on
any machine: without Gluon it only reports why not.
"""

import functools

import torch

from .triton_shim import NO_TRITON, triton_or_none

triton = triton_or_none()
try:  # Gluon's API changes between Triton releases: anything missing means "not available"
    from triton.experimental import gluon
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon.language.nvidia.hopper import (
        mbarrier,
        tma,
        warpgroup_mma,
        warpgroup_mma_wait,
    )
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

    # The TMA load's name: async_copy_global_to_shared up to Triton 3.6, async_load after.
    tma_load = tma.async_load if hasattr(tma, "async_load") else tma.async_copy_global_to_shared
    GLUON_ERROR = None
except Exception as exc:  # noqa: BLE001 (ImportError, or an AttributeError inside a changed module)
    GLUON_ERROR = f"Gluon with Hopper support not found in this Triton ({type(exc).__name__}: {exc})"

HEAD_DIMS = (64, 128)
LOG2E = 1.4426950408889634

if GLUON_ERROR is None:

    @gluon.jit
    def _load_partition(
        desc_q,
        desc_k,
        desc_v,
        q_smem,
        k_smem,
        v_smem,
        q_ready,
        k_ready,
        v_ready,
        k_empty,
        v_empty,
        q_row,
        kv_row,
        n_blocks,
        BLOCK_M: gl.constexpr,
        BLOCK_N: gl.constexpr,
        STAGES: gl.constexpr,
    ):
        """The load warp: Q for both compute warpgroups, then K_j and V_j into slot j % STAGES."""
        for g in gl.static_range(2):
            mbarrier.expect(q_ready.index(g), desc_q.block_type.nbytes)
            tma_load(desc_q, [q_row + g * BLOCK_M, 0], q_ready.index(g), q_smem.index(g))
        for j in range(n_blocks):
            _load_kv(
                desc_k, desc_v, k_smem, v_smem, k_ready, v_ready, k_empty, v_empty, kv_row + j * BLOCK_N, j, STAGES
            )

    @gluon.jit
    def _load_kv(desc_k, desc_v, k_smem, v_smem, k_ready, v_ready, k_empty, v_empty, row, blk, STAGES: gl.constexpr):
        """K and V rows row .. row + BLOCK_N into slot blk % STAGES, the load warp's blk-th block."""
        s = blk % STAGES
        # The slot's previous tile (block blk - STAGES) must have been released by both
        # warpgroups: that is the completion of the empty barrier's phase blk // STAGES - 1.
        refill = blk >= STAGES
        phase = ((blk // STAGES) & 1) ^ 1
        mbarrier.wait(k_empty.index(s), phase, pred=refill)
        mbarrier.expect(k_ready.index(s), desc_k.block_type.nbytes)
        tma_load(desc_k, [row, 0], k_ready.index(s), k_smem.index(s))
        mbarrier.wait(v_empty.index(s), phase, pred=refill)
        mbarrier.expect(v_ready.index(s), desc_v.block_type.nbytes)
        tma_load(desc_v, [row, 0], v_ready.index(s), v_smem.index(s))

    @gluon.jit
    def _softmax_step(s, m_i, l_i, qk_scale):
        """Fold one block of scores into the running max and sum (base 2, see flash_attention.py)."""
        m_new = gl.maximum(m_i, gl.max(s, 1) * qk_scale)
        p = gl.exp2(s * qk_scale - gl.expand_dims(m_new, 1))
        alpha = gl.exp2(m_i - m_new)
        l_i = l_i * alpha + gl.sum(p, 1)
        return p, m_new, l_i, alpha

    @gluon.jit
    def _mask(s, j, rows, n_ctx, BLOCK_N: gl.constexpr, CAUSAL: gl.constexpr, s_layout: gl.constexpr):
        cols = j * BLOCK_N + gl.arange(0, BLOCK_N, layout=gl.SliceLayout(0, s_layout))
        keep = gl.expand_dims(cols < n_ctx, 0)
        if CAUSAL:
            keep = keep & (gl.expand_dims(rows, 1) >= gl.expand_dims(cols, 0))
        return gl.where(keep, s, float("-inf"))

    @gluon.jit
    def _take_turn(turn, t, G: gl.constexpr, PINGPONG: gl.constexpr):
        """Ping-pong: wait until the other warpgroup has issued its matrix work for this round."""
        if PINGPONG:
            mbarrier.wait(turn.index(G), t & 1)

    @gluon.jit
    def _pass_turn(turn, G: gl.constexpr, PINGPONG: gl.constexpr):
        if PINGPONG:
            mbarrier.arrive(turn.index(1 - G), count=1)

    @gluon.jit
    def _scores(
        q,
        k_smem,
        k_ready,
        turn,
        j,
        G: gl.constexpr,
        PINGPONG: gl.constexpr,
        STAGES: gl.constexpr,
        BLOCK_M: gl.constexpr,
        BLOCK_N: gl.constexpr,
        s_layout: gl.constexpr,
    ):
        """Issue S_j = Q K_j^T on the tensor cores (asynchronously) once K_j has landed."""
        s = j % STAGES
        mbarrier.wait(k_ready.index(s), (j // STAGES) & 1)
        _take_turn(turn, j, G, PINGPONG)
        zero = gl.zeros([BLOCK_M, BLOCK_N], gl.float32, s_layout)
        return warpgroup_mma(q, k_smem.index(s).permute((1, 0)), zero, use_acc=False, is_async=True)

    @gluon.jit
    def _pv(p, v_smem, v_ready, acc, alpha, j, STAGES: gl.constexpr, o_layout: gl.constexpr):
        """Rescale O to block j's maximum, then issue O += P_j V_j (asynchronously)."""
        acc = acc * gl.expand_dims(gl.convert_layout(alpha, gl.SliceLayout(1, o_layout)), 1)
        mbarrier.wait(v_ready.index(j % STAGES), (j // STAGES) & 1)
        return warpgroup_mma(p, v_smem.index(j % STAGES), acc, is_async=True)

    @gluon.jit
    def _step(
        q,
        k_smem,
        v_smem,
        k_ready,
        v_ready,
        k_empty,
        v_empty,
        turn,
        acc,
        p,
        m_i,
        l_i,
        alpha,
        j,
        base,
        rows,
        n_ctx,
        qk_scale,
        G: gl.constexpr,
        PINGPONG: gl.constexpr,
        STAGES: gl.constexpr,
        BLOCK_M: gl.constexpr,
        BLOCK_N: gl.constexpr,
        MASK: gl.constexpr,
        CAUSAL: gl.constexpr,
        s_layout: gl.constexpr,
        o_layout: gl.constexpr,
        p_layout: gl.constexpr,
    ):
        """Key block j: S_j and P_{j-1} V_{j-1} in flight together, softmax of S_j under the latter.
        Shared-memory slots and barrier phases count blocks from `base` (the blocks of earlier tiles,
        for the persistent kernel); the mask counts from this tile's first block."""
        s_tok = _scores(q, k_smem, k_ready, turn, base + j, G, PINGPONG, STAGES, BLOCK_M, BLOCK_N, s_layout)
        # O picks up block j-1's rescale factor while S_j runs, then P_{j-1} V_{j-1} is issued.
        acc_tok = _pv(p, v_smem, v_ready, acc, alpha, base + j - 1, STAGES, o_layout)
        _pass_turn(turn, G, PINGPONG)
        s = warpgroup_mma_wait(1, deps=[s_tok])  # S_j is done; P_{j-1} V_{j-1} may still run
        mbarrier.arrive(k_empty.index((base + j) % STAGES), count=1)
        if MASK:
            s = _mask(s, j, rows, n_ctx, BLOCK_N, CAUSAL, s_layout)
        p_new, m_i, l_i, alpha = _softmax_step(s, m_i, l_i, qk_scale)
        acc, p = warpgroup_mma_wait(0, deps=[acc_tok, p])  # P_{j-1} must live until its product is done
        mbarrier.arrive(v_empty.index((base + j - 1) % STAGES), count=1)
        p = gl.convert_layout(p_new.to(v_smem.dtype), p_layout)
        return acc, p, m_i, l_i, alpha

    @gluon.jit
    def _step_prefetch(
        q,
        k_smem,
        v_smem,
        k_ready,
        v_ready,
        k_empty,
        v_empty,
        turn,
        acc,
        s,
        m_i,
        l_i,
        j,
        rows,
        n_ctx,
        qk_scale,
        STAGES: gl.constexpr,
        BLOCK_M: gl.constexpr,
        BLOCK_N: gl.constexpr,
        MASK: gl.constexpr,
        CAUSAL: gl.constexpr,
        s_layout: gl.constexpr,
        o_layout: gl.constexpr,
        p_layout: gl.constexpr,
    ):
        """Key block j, "prefetch" schedule: S_{j+1} is issued first and runs under block j's softmax;
        then O is rescaled and P_j V_j issued, and both are waited for before the next block. Nothing
        stays in flight across iterations, so ptxas has nothing to reorder around."""
        s_next_tok = _scores(q, k_smem, k_ready, turn, j + 1, 0, False, STAGES, BLOCK_M, BLOCK_N, s_layout)
        if MASK:
            s = _mask(s, j, rows, n_ctx, BLOCK_N, CAUSAL, s_layout)
        p, m_i, l_i, alpha = _softmax_step(s, m_i, l_i, qk_scale)
        p = gl.convert_layout(p.to(v_smem.dtype), p_layout)
        acc_tok = _pv(p, v_smem, v_ready, acc, alpha, j, STAGES, o_layout)
        s, acc, p = warpgroup_mma_wait(0, deps=[s_next_tok, acc_tok, p])
        mbarrier.arrive(k_empty.index((j + 1) % STAGES), count=1)
        mbarrier.arrive(v_empty.index(j % STAGES), count=1)
        return acc, s, m_i, l_i

    @gluon.jit
    def _attend(
        q,
        k_smem,
        v_smem,
        k_ready,
        v_ready,
        k_empty,
        v_empty,
        turn,
        rows,
        n_ctx,
        n_full,
        n_blocks,
        base,
        qk_scale,
        G: gl.constexpr,
        HEAD_DIM: gl.constexpr,
        BLOCK_M: gl.constexpr,
        BLOCK_N: gl.constexpr,
        STAGES: gl.constexpr,
        CAUSAL: gl.constexpr,
        PINGPONG: gl.constexpr,
        s_layout: gl.constexpr,
        o_layout: gl.constexpr,
        p_layout: gl.constexpr,
    ):
        """One warpgroup's rows against key blocks 0 .. n_blocks - 1 of one head ("overlap" schedule).
        Returns the unnormalized output and the softmax sums. Round t of the ping-pong is S_t (with
        P_{t-1} V_{t-1} for t >= 1); round n_blocks is the last P V alone."""
        row_layout: gl.constexpr = gl.SliceLayout(1, s_layout)
        # Block 0 alone: its softmax has nothing to overlap with.
        s_tok = _scores(q, k_smem, k_ready, turn, base, G, PINGPONG, STAGES, BLOCK_M, BLOCK_N, s_layout)
        _pass_turn(turn, G, PINGPONG)
        s = warpgroup_mma_wait(0, deps=[s_tok])
        mbarrier.arrive(k_empty.index(base % STAGES), count=1)
        if n_full == 0:
            s = _mask(s, 0, rows, n_ctx, BLOCK_N, CAUSAL, s_layout)
        m_i = gl.full([BLOCK_M], float("-inf"), gl.float32, row_layout)
        l_i = gl.zeros([BLOCK_M], gl.float32, row_layout)
        p, m_i, l_i, alpha = _softmax_step(s, m_i, l_i, qk_scale)
        p = gl.convert_layout(p.to(v_smem.dtype), p_layout)
        acc = gl.zeros([BLOCK_M, HEAD_DIM], gl.float32, o_layout)

        for j in range(1, n_full):  # blocks that need no mask
            acc, p, m_i, l_i, alpha = _step(
                q,
                k_smem,
                v_smem,
                k_ready,
                v_ready,
                k_empty,
                v_empty,
                turn,
                acc,
                p,
                m_i,
                l_i,
                alpha,
                j,
                base,
                rows,
                n_ctx,
                qk_scale,
                G,
                PINGPONG,
                STAGES,
                BLOCK_M,
                BLOCK_N,
                False,
                CAUSAL,
                s_layout,
                o_layout,
                p_layout,
            )
        for j in range(gl.maximum(n_full, 1), n_blocks):  # the diagonal (causal) and a ragged last block
            acc, p, m_i, l_i, alpha = _step(
                q,
                k_smem,
                v_smem,
                k_ready,
                v_ready,
                k_empty,
                v_empty,
                turn,
                acc,
                p,
                m_i,
                l_i,
                alpha,
                j,
                base,
                rows,
                n_ctx,
                qk_scale,
                G,
                PINGPONG,
                STAGES,
                BLOCK_M,
                BLOCK_N,
                True,
                CAUSAL,
                s_layout,
                o_layout,
                p_layout,
            )

        # The last block's product (its turn is round n_blocks).
        _take_turn(turn, n_blocks, G, PINGPONG)
        acc_tok = _pv(p, v_smem, v_ready, acc, alpha, base + n_blocks - 1, STAGES, o_layout)
        _pass_turn(turn, G, PINGPONG)
        acc = warpgroup_mma_wait(0, deps=[acc_tok])
        mbarrier.arrive(v_empty.index((base + n_blocks - 1) % STAGES), count=1)
        return acc, l_i

    @gluon.jit
    def _compute_partition(
        q_smem,
        k_smem,
        v_smem,
        q_ready,
        k_ready,
        v_ready,
        k_empty,
        v_empty,
        turn,
        o_ptr,
        stride_om,
        o_row0,
        q_start,
        n_ctx,
        n_full,
        n_blocks,
        qk_scale,
        G: gl.constexpr,
        HEAD_DIM: gl.constexpr,
        BLOCK_M: gl.constexpr,
        BLOCK_N: gl.constexpr,
        STAGES: gl.constexpr,
        CAUSAL: gl.constexpr,
        PINGPONG: gl.constexpr,
        PREFETCH: gl.constexpr,
    ):
        """One compute warpgroup: query rows q_start + G * BLOCK_M .. + BLOCK_M of one head."""
        s_layout: gl.constexpr = gl.NVMMADistributedLayout(
            version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, BLOCK_N, 16]
        )
        o_layout: gl.constexpr = gl.NVMMADistributedLayout(
            version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, HEAD_DIM, 16]
        )
        p_layout: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=o_layout, k_width=2)
        row_layout: gl.constexpr = gl.SliceLayout(1, s_layout)

        q = q_smem.index(G)
        rows = q_start + G * BLOCK_M + gl.arange(0, BLOCK_M, layout=row_layout)
        if PINGPONG and G == 1:
            _pass_turn(turn, G, PINGPONG)  # warpgroup 0 issues first
        mbarrier.wait(q_ready.index(G), 0)

        if PREFETCH:
            _prefetch_blocks(
                q,
                k_smem,
                v_smem,
                k_ready,
                v_ready,
                k_empty,
                v_empty,
                turn,
                o_ptr,
                stride_om,
                o_row0,
                rows,
                q_start,
                n_ctx,
                n_full,
                n_blocks,
                qk_scale,
                G,
                HEAD_DIM,
                BLOCK_M,
                BLOCK_N,
                STAGES,
                CAUSAL,
                s_layout,
                o_layout,
                p_layout,
            )
            return

        acc, l_i = _attend(
            q,
            k_smem,
            v_smem,
            k_ready,
            v_ready,
            k_empty,
            v_empty,
            turn,
            rows,
            n_ctx,
            n_full,
            n_blocks,
            0,
            qk_scale,
            G,
            HEAD_DIM,
            BLOCK_M,
            BLOCK_N,
            STAGES,
            CAUSAL,
            PINGPONG,
            s_layout,
            o_layout,
            p_layout,
        )
        _store(acc, l_i, o_ptr, o_row0, stride_om, q_start, n_ctx, G, HEAD_DIM, BLOCK_M, o_layout)

    @gluon.jit
    def _store(
        acc,
        l_i,
        o_ptr,
        o_row0,
        stride_om,
        q_start,
        n_ctx,
        G: gl.constexpr,
        HEAD_DIM: gl.constexpr,
        BLOCK_M: gl.constexpr,
        o_layout: gl.constexpr,
    ):
        """O = acc / l for this warpgroup's rows (those inside the sequence)."""
        out = acc / gl.expand_dims(gl.convert_layout(l_i, gl.SliceLayout(1, o_layout)), 1)
        offs_m = q_start + G * BLOCK_M + gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, o_layout))
        offs_d = gl.arange(0, HEAD_DIM, layout=gl.SliceLayout(0, o_layout))
        ptrs = o_ptr + o_row0 + gl.expand_dims(offs_m.to(gl.int64) * stride_om, 1) + gl.expand_dims(offs_d, 0)
        gl.store(ptrs, out.to(o_ptr.dtype.element_ty), mask=gl.expand_dims(offs_m < n_ctx, 1))

    @gluon.jit
    def _prefetch_blocks(
        q,
        k_smem,
        v_smem,
        k_ready,
        v_ready,
        k_empty,
        v_empty,
        turn,
        o_ptr,
        stride_om,
        o_row0,
        rows,
        q_start,
        n_ctx,
        n_full,
        n_blocks,
        qk_scale,
        G: gl.constexpr,
        HEAD_DIM: gl.constexpr,
        BLOCK_M: gl.constexpr,
        BLOCK_N: gl.constexpr,
        STAGES: gl.constexpr,
        CAUSAL: gl.constexpr,
        s_layout: gl.constexpr,
        o_layout: gl.constexpr,
        p_layout: gl.constexpr,
    ):
        """The whole key range under the prefetch schedule (_step_prefetch), then the output."""
        s = warpgroup_mma_wait(
            0, deps=[_scores(q, k_smem, k_ready, turn, 0, 0, False, STAGES, BLOCK_M, BLOCK_N, s_layout)]
        )
        mbarrier.arrive(k_empty.index(0), count=1)
        m_i = gl.full([BLOCK_M], float("-inf"), gl.float32, gl.SliceLayout(1, s_layout))
        l_i = gl.zeros([BLOCK_M], gl.float32, gl.SliceLayout(1, s_layout))
        acc = gl.zeros([BLOCK_M, HEAD_DIM], gl.float32, o_layout)
        last = n_blocks - 1
        for j in range(0, gl.minimum(n_full, last)):  # blocks that need no mask
            acc, s, m_i, l_i = _step_prefetch(
                q,
                k_smem,
                v_smem,
                k_ready,
                v_ready,
                k_empty,
                v_empty,
                turn,
                acc,
                s,
                m_i,
                l_i,
                j,
                rows,
                n_ctx,
                qk_scale,
                STAGES,
                BLOCK_M,
                BLOCK_N,
                False,
                CAUSAL,
                s_layout,
                o_layout,
                p_layout,
            )
        for j in range(gl.minimum(n_full, last), last):  # the diagonal (causal) and a ragged block
            acc, s, m_i, l_i = _step_prefetch(
                q,
                k_smem,
                v_smem,
                k_ready,
                v_ready,
                k_empty,
                v_empty,
                turn,
                acc,
                s,
                m_i,
                l_i,
                j,
                rows,
                n_ctx,
                qk_scale,
                STAGES,
                BLOCK_M,
                BLOCK_N,
                True,
                CAUSAL,
                s_layout,
                o_layout,
                p_layout,
            )
        # The last block: nothing left to prefetch.
        if last >= n_full:
            s = _mask(s, last, rows, n_ctx, BLOCK_N, CAUSAL, s_layout)
        p, m_i, l_i, alpha = _softmax_step(s, m_i, l_i, qk_scale)
        p = gl.convert_layout(p.to(v_smem.dtype), p_layout)
        acc = warpgroup_mma_wait(0, deps=[_pv(p, v_smem, v_ready, acc, alpha, last, STAGES, o_layout)])
        mbarrier.arrive(v_empty.index(last % STAGES), count=1)
        _store(acc, l_i, o_ptr, o_row0, stride_om, q_start, n_ctx, G, HEAD_DIM, BLOCK_M, o_layout)

    @gluon.jit
    def _attn_fwd_ws(
        desc_q,
        desc_k,
        desc_v,
        o_ptr,
        qk_scale,
        n_ctx,
        stride_oz_h,
        stride_om,
        HEAD_DIM: gl.constexpr,
        BLOCK_M: gl.constexpr,
        BLOCK_N: gl.constexpr,
        STAGES: gl.constexpr,
        CAUSAL: gl.constexpr,
        PINGPONG: gl.constexpr,
        PREFETCH: gl.constexpr,
        LOAD_REGS: gl.constexpr,
        COMPUTE_REGS: gl.constexpr,
    ):
        dtype: gl.constexpr = desc_k.dtype
        # One CTA per tile: program (pid_m, head) is tile head * n_tiles_m + pid_m (see _tile; causal
        # tiles heaviest first, so the light ones fill the gaps at the end of the launch).
        n_tiles_m = gl.num_programs(0)
        q_start, kv_row, off_hz, n_full, n_blocks = _tile(
            gl.program_id(1) * n_tiles_m + gl.program_id(0), n_tiles_m, n_ctx, BLOCK_M, BLOCK_N, CAUSAL
        )

        q_smem = gl.allocate_shared_memory(dtype, [2, BLOCK_M, HEAD_DIM], desc_q.layout)
        k_smem = gl.allocate_shared_memory(dtype, [STAGES, BLOCK_N, HEAD_DIM], desc_k.layout)
        v_smem = gl.allocate_shared_memory(dtype, [STAGES, BLOCK_N, HEAD_DIM], desc_v.layout)
        q_ready = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())
        k_ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
        v_ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
        k_empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
        v_empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
        turn = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())
        for g in gl.static_range(2):
            mbarrier.init(q_ready.index(g), count=1)
            mbarrier.init(turn.index(g), count=1)
        for s in gl.static_range(STAGES):
            mbarrier.init(k_ready.index(s), count=1)
            mbarrier.init(v_ready.index(s), count=1)
            mbarrier.init(k_empty.index(s), count=2)  # one arrival per compute warpgroup
            mbarrier.init(v_empty.index(s), count=2)

        o_row0 = off_hz.to(gl.int64) * stride_oz_h
        # (Each partition's arguments as one literal tuple: concatenating tuples would unwrap the
        # compile-time constants into plain Python values, which a partition cannot receive.)
        gl.warp_specialize(
            [
                (
                    _compute_partition,
                    (
                        q_smem,
                        k_smem,
                        v_smem,
                        q_ready,
                        k_ready,
                        v_ready,
                        k_empty,
                        v_empty,
                        turn,
                        o_ptr,
                        stride_om,
                        o_row0,
                        q_start,
                        n_ctx,
                        n_full,
                        n_blocks,
                        qk_scale,
                        gl.constexpr(0),
                        HEAD_DIM,
                        BLOCK_M,
                        BLOCK_N,
                        STAGES,
                        CAUSAL,
                        PINGPONG,
                        PREFETCH,
                    ),
                ),
                (
                    _compute_partition,
                    (
                        q_smem,
                        k_smem,
                        v_smem,
                        q_ready,
                        k_ready,
                        v_ready,
                        k_empty,
                        v_empty,
                        turn,
                        o_ptr,
                        stride_om,
                        o_row0,
                        q_start,
                        n_ctx,
                        n_full,
                        n_blocks,
                        qk_scale,
                        gl.constexpr(1),
                        HEAD_DIM,
                        BLOCK_M,
                        BLOCK_N,
                        STAGES,
                        CAUSAL,
                        PINGPONG,
                        PREFETCH,
                    ),
                ),
                (
                    _load_partition,
                    (
                        desc_q,
                        desc_k,
                        desc_v,
                        q_smem,
                        k_smem,
                        v_smem,
                        q_ready,
                        k_ready,
                        v_ready,
                        k_empty,
                        v_empty,
                        kv_row + q_start,
                        kv_row,
                        n_blocks,
                        BLOCK_M,
                        BLOCK_N,
                        STAGES,
                    ),
                ),
            ],
            [4, 1],
            [COMPUTE_REGS, LOAD_REGS],
        )

    # %%
    # The persistent kernel: one CTA per SM, each walking the tiles (pairs of 64-row query blocks
    # of one head) t = program_id, + number of programs, ... The load warp runs ahead across tile
    # boundaries: the next tile's Q (double-buffered) and first K/V tiles are in shared memory
    # while the compute warpgroups still finish the current one, so the pipeline never drains
    # between tiles. Slots and barrier phases count K/V blocks over all of a CTA's tiles.

    @gluon.jit
    def _tile(t, n_tiles_m, n_ctx, BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, CAUSAL: gl.constexpr):
        """Tile t -> (first query row, the head's first row in the (batch * heads * N, d) view, head
        index, blocks that need no mask, blocks).

        A head's tiles next to each other, so that the CTAs working on it at the same time share its
        K and V through L2; causal tiles heaviest first within a head."""
        off_hz = t // n_tiles_m
        if CAUSAL:
            start_m = n_tiles_m - 1 - t % n_tiles_m
        else:
            start_m = t % n_tiles_m
        q_start = start_m * (2 * BLOCK_M)
        if CAUSAL:
            n_full = q_start // BLOCK_N
            n_blocks = gl.cdiv(gl.minimum(q_start + 2 * BLOCK_M, n_ctx), BLOCK_N)
        else:
            n_full = n_ctx // BLOCK_N
            n_blocks = gl.cdiv(n_ctx, BLOCK_N)
        return q_start, off_hz * n_ctx, off_hz, n_full, n_blocks

    @gluon.jit
    def _load_persistent(
        desc_q,
        desc_k,
        desc_v,
        q_smem,
        k_smem,
        v_smem,
        q_ready,
        q_empty,
        k_ready,
        v_ready,
        k_empty,
        v_empty,
        n_ctx,
        n_tiles_m,
        n_tiles,
        BLOCK_M: gl.constexpr,
        BLOCK_N: gl.constexpr,
        STAGES: gl.constexpr,
        CAUSAL: gl.constexpr,
    ):
        blk = 0
        it = 0
        for t in range(gl.program_id(0), n_tiles, gl.num_programs(0)):
            q_start, kv_row, off_hz, n_full, n_blocks = _tile(t, n_tiles_m, n_ctx, BLOCK_M, BLOCK_N, CAUSAL)
            buf = it % 2  # Q buffer: free once both warpgroups finished the tile before last
            mbarrier.wait(q_empty.index(buf), ((it // 2) & 1) ^ 1, pred=it >= 2)
            for g in gl.static_range(2):
                mbarrier.expect(q_ready.index(2 * buf + g), desc_q.block_type.nbytes)
                tma_load(
                    desc_q, [kv_row + q_start + g * BLOCK_M, 0], q_ready.index(2 * buf + g), q_smem.index(2 * buf + g)
                )
            for j in range(n_blocks):
                _load_kv(
                    desc_k,
                    desc_v,
                    k_smem,
                    v_smem,
                    k_ready,
                    v_ready,
                    k_empty,
                    v_empty,
                    kv_row + j * BLOCK_N,
                    blk,
                    STAGES,
                )
                blk += 1
            it += 1

    @gluon.jit
    def _compute_persistent(
        q_smem,
        k_smem,
        v_smem,
        q_ready,
        q_empty,
        k_ready,
        v_ready,
        k_empty,
        v_empty,
        turn,
        o_ptr,
        stride_oz_h,
        stride_om,
        n_ctx,
        n_tiles_m,
        n_tiles,
        qk_scale,
        G: gl.constexpr,
        HEAD_DIM: gl.constexpr,
        BLOCK_M: gl.constexpr,
        BLOCK_N: gl.constexpr,
        STAGES: gl.constexpr,
        CAUSAL: gl.constexpr,
    ):
        s_layout: gl.constexpr = gl.NVMMADistributedLayout(
            version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, BLOCK_N, 16]
        )
        o_layout: gl.constexpr = gl.NVMMADistributedLayout(
            version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, HEAD_DIM, 16]
        )
        p_layout: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=o_layout, k_width=2)
        blk = 0
        it = 0
        for t in range(gl.program_id(0), n_tiles, gl.num_programs(0)):
            q_start, kv_row, off_hz, n_full, n_blocks = _tile(t, n_tiles_m, n_ctx, BLOCK_M, BLOCK_N, CAUSAL)
            buf = it % 2
            mbarrier.wait(q_ready.index(2 * buf + G), (it // 2) & 1)
            rows = q_start + G * BLOCK_M + gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, s_layout))
            acc, l_i = _attend(
                q_smem.index(2 * buf + G),
                k_smem,
                v_smem,
                k_ready,
                v_ready,
                k_empty,
                v_empty,
                turn,
                rows,
                n_ctx,
                n_full,
                n_blocks,
                blk,
                qk_scale,
                G,
                HEAD_DIM,
                BLOCK_M,
                BLOCK_N,
                STAGES,
                CAUSAL,
                False,
                s_layout,
                o_layout,
                p_layout,
            )
            mbarrier.arrive(q_empty.index(buf), count=1)
            _store(
                acc,
                l_i,
                o_ptr,
                off_hz.to(gl.int64) * stride_oz_h,
                stride_om,
                q_start,
                n_ctx,
                G,
                HEAD_DIM,
                BLOCK_M,
                o_layout,
            )
            blk += n_blocks
            it += 1

    @gluon.jit
    def _attn_fwd_persistent(
        desc_q,
        desc_k,
        desc_v,
        o_ptr,
        qk_scale,
        n_ctx,
        stride_oz_h,
        stride_om,
        n_tiles_m,
        n_tiles,
        HEAD_DIM: gl.constexpr,
        BLOCK_M: gl.constexpr,
        BLOCK_N: gl.constexpr,
        STAGES: gl.constexpr,
        CAUSAL: gl.constexpr,
        LOAD_REGS: gl.constexpr,
        COMPUTE_REGS: gl.constexpr,
    ):
        dtype: gl.constexpr = desc_k.dtype
        q_smem = gl.allocate_shared_memory(dtype, [4, BLOCK_M, HEAD_DIM], desc_q.layout)  # 2 tiles x 2 halves
        k_smem = gl.allocate_shared_memory(dtype, [STAGES, BLOCK_N, HEAD_DIM], desc_k.layout)
        v_smem = gl.allocate_shared_memory(dtype, [STAGES, BLOCK_N, HEAD_DIM], desc_v.layout)
        q_ready = gl.allocate_shared_memory(gl.int64, [4, 1], mbarrier.MBarrierLayout())
        q_empty = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())
        k_ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
        v_ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
        k_empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
        v_empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
        turn = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())  # unused: no ping-pong here
        for i in gl.static_range(4):
            mbarrier.init(q_ready.index(i), count=1)
        for i in gl.static_range(2):
            mbarrier.init(q_empty.index(i), count=2)
            mbarrier.init(turn.index(i), count=1)
        for i in gl.static_range(STAGES):
            mbarrier.init(k_ready.index(i), count=1)
            mbarrier.init(v_ready.index(i), count=1)
            mbarrier.init(k_empty.index(i), count=2)
            mbarrier.init(v_empty.index(i), count=2)
        gl.warp_specialize(
            [
                (
                    _compute_persistent,
                    (
                        q_smem,
                        k_smem,
                        v_smem,
                        q_ready,
                        q_empty,
                        k_ready,
                        v_ready,
                        k_empty,
                        v_empty,
                        turn,
                        o_ptr,
                        stride_oz_h,
                        stride_om,
                        n_ctx,
                        n_tiles_m,
                        n_tiles,
                        qk_scale,
                        gl.constexpr(0),
                        HEAD_DIM,
                        BLOCK_M,
                        BLOCK_N,
                        STAGES,
                        CAUSAL,
                    ),
                ),
                (
                    _compute_persistent,
                    (
                        q_smem,
                        k_smem,
                        v_smem,
                        q_ready,
                        q_empty,
                        k_ready,
                        v_ready,
                        k_empty,
                        v_empty,
                        turn,
                        o_ptr,
                        stride_oz_h,
                        stride_om,
                        n_ctx,
                        n_tiles_m,
                        n_tiles,
                        qk_scale,
                        gl.constexpr(1),
                        HEAD_DIM,
                        BLOCK_M,
                        BLOCK_N,
                        STAGES,
                        CAUSAL,
                    ),
                ),
                (
                    _load_persistent,
                    (
                        desc_q,
                        desc_k,
                        desc_v,
                        q_smem,
                        k_smem,
                        v_smem,
                        q_ready,
                        q_empty,
                        k_ready,
                        v_ready,
                        k_empty,
                        v_empty,
                        n_ctx,
                        n_tiles_m,
                        n_tiles,
                        BLOCK_M,
                        BLOCK_N,
                        STAGES,
                        CAUSAL,
                    ),
                ),
            ],
            [4, 1],
            [COMPUTE_REGS, LOAD_REGS],
        )


# (BLOCK_M per compute warpgroup, BLOCK_N, STAGES, schedule, compute registers, load registers); the
# schedule is "overlap" (S_j and P_{j-1} V_{j-1} in flight together), "pingpong" (the same, the two
# warpgroups taking turns to issue) or "prefetch" (S_{j+1} issued before block j's softmax).
# Registers: 65536 per SM over 12 warps; the two compute warpgroups take 240 each, the load warp's
# warpgroup 24 (setmaxnreg moves them at the fork). Shared memory at d = 128: Q 2 x 16 KB, and K and
# V 32 KB each per stage, so 2 stages (160 KB) leave room for nothing else: one CTA per SM.
# Non-causal tiles all cost the same, and the persistent kernel wins (no pipeline drain between
# tiles); causal tiles range from 1 to N / BLOCK_N key blocks, and the GPU's own block scheduler,
# handing the next CTA to whichever SM frees up, balances them far better than a fixed stride.
DEFAULT_CONFIG = {
    (128, False): (64, 128, 2, "persistent", 240, 24),
    (128, True): (64, 128, 2, "overlap", 240, 24),
    (64, False): (64, 128, 3, "persistent", 240, 24),
    (64, True): (64, 128, 3, "overlap", 240, 24),
}
# What `python -m labs.experiments.flash_attention_bench --sweep --variants gluon` compares.
SWEEP_CONFIGS = [
    (64, 128, 2, "overlap", 240, 24),
    (64, 128, 2, "pingpong", 240, 24),
    (64, 128, 2, "prefetch", 240, 24),
    (64, 128, 2, "persistent", 240, 24),
    (64, 128, 3, "overlap", 240, 24),
    (64, 64, 4, "overlap", 240, 24),
]
SCHEDULES = ("overlap", "pingpong", "prefetch", "persistent")


def _schedule_flags(schedule: str) -> dict:
    """The compile-time flags of _attn_fwd_ws for a schedule ("persistent" is its own kernel)."""
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule {schedule!r}: one of {SCHEDULES}")
    if schedule == "persistent":
        return {}
    return {"PINGPONG": schedule == "pingpong", "PREFETCH": schedule == "prefetch"}


@functools.cache
def _sm_count(device_index: int) -> int:
    return torch.cuda.get_device_properties(device_index).multi_processor_count


def available(device=None) -> str | None:
    """None if the kernel can run here, else why not (one line)."""
    if triton is NO_TRITON:
        return "triton not installed"
    if GLUON_ERROR is not None:
        return GLUON_ERROR
    if not torch.cuda.is_available():
        return "needs a CUDA GPU"
    if torch.cuda.get_device_capability(device)[0] != 9:
        return "written for Hopper (sm_90: H100, H200): wgmma and TMA as used here"
    return None


def unavailable(device, dtype: str) -> str | None:
    """The attention lab's question: can this variant run on `device` (a device.Device) in `dtype`?"""
    if not device.is_cuda:
        return (
            "needs a Hopper GPU (H100/H200); Gluon kernels do not run under the Triton interpreter, so "
            "on a CPU there is nothing to check"
        )
    why = available(device.index)
    if why:
        return why
    if dtype not in ("bfloat16", "float16"):
        return "runs bf16 and fp16 only (the tensor cores' input types)"
    return None


@functools.cache
def _shared_layout(rows: int, head_dim: int, torch_dtype):
    return gl.NVMMASharedLayout.get_default_for(
        [rows, head_dim], {torch.bfloat16: gl.bfloat16, torch.float16: gl.float16}[torch_dtype]
    )


def prepare(q, k, v, causal: bool = False, sm_scale: float | None = None, config: tuple | None = None):
    """The kernel on these (batch, heads, N, d) tensors as a callable: launch(out=None) -> O.

    Checks, descriptors and the grid are made here once; each call allocates the output (unless
    given one: contiguous, shaped and typed like q) and launches."""
    why = available(q.device)
    if why:
        raise RuntimeError(why)
    if q.dim() != 4 or q.shape != k.shape or q.shape != v.shape or not (q.dtype == k.dtype == v.dtype):
        raise ValueError("q, k, v must share one (batch, heads, N, d) shape and dtype")
    if q.dtype not in (torch.bfloat16, torch.float16):
        raise ValueError(f"{q.dtype} not supported: bf16 or fp16")
    b, h, n, d = q.shape
    if d not in HEAD_DIMS:
        raise ValueError(f"head dim {d} not supported by the Gluon kernel; one of {HEAD_DIMS}")
    block_m, block_n, stages, schedule, compute_regs, load_regs = config or DEFAULT_CONFIG[d, bool(causal)]
    flags = _schedule_flags(schedule)
    # The descriptors see all heads as one (batch * heads * N, d) array of rows.
    q, k, v = (t.contiguous() for t in (q, k, v))
    rows = b * h * n
    desc_q, desc_k, desc_v = (
        TensorDescriptor(t.view(rows, d), [rows, d], [d, 1], [tile, d], _shared_layout(tile, d, q.dtype))
        for t, tile in ((q, block_m), (k, block_n), (v, block_n))
    )
    qk_scale = (d**-0.5 if sm_scale is None else float(sm_scale)) * LOG2E
    n_tiles_m = triton.cdiv(n, 2 * block_m)
    meta = dict(
        HEAD_DIM=d,
        BLOCK_M=block_m,
        BLOCK_N=block_n,
        STAGES=stages,
        CAUSAL=bool(causal),
        LOAD_REGS=load_regs,
        COMPUTE_REGS=compute_regs,
        num_warps=4,
        **flags,
    )
    if schedule == "persistent":
        n_tiles = n_tiles_m * b * h
        kernel, grid, extra = (
            _attn_fwd_persistent,
            (min(n_tiles, _sm_count(q.device.index or 0)),),
            (n_tiles_m, n_tiles),
        )
    else:
        kernel, grid, extra = _attn_fwd_ws, (n_tiles_m, b * h), ()

    def launch(out: torch.Tensor | None = None) -> torch.Tensor:
        o = torch.empty(q.shape, dtype=q.dtype, device=q.device) if out is None else out
        kernel[grid](desc_q, desc_k, desc_v, o, qk_scale, n, n * d, d, *extra, **meta)
        return o

    return launch


def flash_attention(
    q,
    k,
    v,
    causal: bool = False,
    sm_scale: float | None = None,
    config: tuple | None = None,
    out: torch.Tensor | None = None,
) -> torch.Tensor:
    """softmax(q k^T * sm_scale [+ causal mask]) v, like SDPA, on a Hopper GPU (see available())."""
    if out is not None and (out.shape != q.shape or out.dtype != q.dtype or not out.is_contiguous()):
        raise ValueError("out must be a contiguous tensor shaped and typed like q")
    return prepare(q, k, v, causal, sm_scale, config)(out)


def _raise(exc: Exception):
    raise exc


def build(q, k, v, causal):
    """The attention lab's variant: a callable; a shape it cannot run raises on the first call, which
    the lab reports as the reason instead of stopping the run."""
    try:
        return prepare(q, k, v, causal)
    except (ValueError, RuntimeError) as exc:
        return functools.partial(_raise, exc)


def compile_for_hopper(
    head_dim: int = 128, causal: bool = False, dtype: str = "bf16", config: tuple | None = None
) -> dict:
    """Compile the kernel for sm_90 without a GPU (Triton's ahead-of-time path) and read the result.

    Returns registers per thread, spilled bytes (local memory), shared memory, and the number of
    tensor-core instructions (HGMMA) and of the waits for them (WARPGROUP.DEPBAR) in the SASS: when
    ptxas cannot keep wgmma asynchronous it "serializes" it, a wait after every instruction, and the
    kernel loses the overlap it was written for. Used by the CPU tests; also a way to read the SASS.
    """
    import os
    import re
    import subprocess
    import tempfile

    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource

    if GLUON_ERROR is not None:
        raise RuntimeError(GLUON_ERROR)
    block_m, block_n, stages, schedule, compute_regs, load_regs = config or DEFAULT_CONFIG[head_dim, causal]
    gl_dtype = {"bf16": gl.bfloat16, "fp16": gl.float16}[dtype]
    layout_q = gl.NVMMASharedLayout.get_default_for([block_m, head_dim], gl_dtype)
    layout_kv = gl.NVMMASharedLayout.get_default_for([block_n, head_dim], gl_dtype)
    signature = {
        "desc_q": f"tensordesc<{dtype}[{block_m}, {head_dim}],{layout_q!r}>",
        "desc_k": f"tensordesc<{dtype}[{block_n}, {head_dim}],{layout_kv!r}>",
        "desc_v": f"tensordesc<{dtype}[{block_n}, {head_dim}],{layout_kv!r}>",
        "o_ptr": f"*{dtype}",
        "qk_scale": "fp32",
        "n_ctx": "i32",
        "stride_oz_h": "i32",
        "stride_om": "i32",
    }
    constants = {
        "HEAD_DIM": head_dim,
        "BLOCK_M": block_m,
        "BLOCK_N": block_n,
        "STAGES": stages,
        "CAUSAL": causal,
        **_schedule_flags(schedule),
        "LOAD_REGS": load_regs,
        "COMPUTE_REGS": compute_regs,
    }
    kernel_fn = _attn_fwd_ws
    if schedule == "persistent":
        kernel_fn = _attn_fwd_persistent
        signature.update({"n_tiles_m": "i32", "n_tiles": "i32"})
    signature.update(dict.fromkeys(constants, "constexpr"))
    kernel = triton.compile(
        GluonASTSource(kernel_fn, signature, constants), target=GPUTarget("cuda", 90, 32), options={"num_warps": 4}
    )
    tools = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin")
    with tempfile.TemporaryDirectory() as tmp:
        cubin = os.path.join(tmp, "kernel.cubin")
        with open(cubin, "wb") as f:
            f.write(kernel.asm["cubin"])
        usage = subprocess.run(
            [os.path.join(tools, "cuobjdump"), "--dump-resource-usage", cubin],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        sass = subprocess.run(
            [os.path.join(tools, "nvdisasm"), "-c", cubin], capture_output=True, text=True, check=True
        ).stdout
    return {
        "registers": int(re.search(r"REG:(\d+)", usage).group(1)),
        "spilled_bytes": int(re.search(r"LOCAL:(\d+)", usage).group(1)),
        "shared_bytes": kernel.metadata.shared,
        "warps": kernel.metadata.num_warps,
        "hgmma": sass.count("HGMMA."),
        "wgmma_waits": sass.count("WARPGROUP.DEPBAR"),
        "setmaxnreg": sass.count("USETMAXREG"),
    }
