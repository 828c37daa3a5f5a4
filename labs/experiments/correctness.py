"""Correctness: an output against a float32 reference, to the tolerance its dtype allows."""

from __future__ import annotations

import math

import torch

# (atol, rtol) against a float32 reference: float32 math lands far inside; half-precision outputs
# are off by their own rounding (bf16 keeps 8 bits of mantissa: 2**-8 = 0.4%).
TOLERANCES = {"float32": (1e-4, 1e-4), "bfloat16": (2e-2, 1.6e-2), "float16": (5e-3, 5e-3)}


def compare(out: torch.Tensor, ref: torch.Tensor, dtype: str, *, scale: float = 1.0) -> dict:
    """Max abs error, relative L2 error and a pass/fail against the dtype's tolerance. NaN never passes."""
    atol, rtol = (t * scale for t in TOLERANCES[dtype])
    out32, ref32 = out.float(), ref.float()
    diff = (out32 - ref32).abs()
    finite = bool(torch.isfinite(out32).all())
    max_abs = float(diff.max()) if finite else math.inf
    rel = (
        float(torch.linalg.vector_norm(out32 - ref32) / torch.linalg.vector_norm(ref32).clamp_min(1e-30))
        if finite
        else math.inf
    )
    passed = finite and bool((diff <= atol + rtol * ref32.abs()).all())
    return {"max_abs_error": max_abs, "rel_l2_error": rel, "atol": atol, "rtol": rtol, "passed": passed}
