import math

import torch

from labs.experiments.correctness import compare


def test_compare_passes_within_tolerance_and_never_passes_nan():
    ref = torch.randn(100)
    assert compare(ref.to(torch.bfloat16), ref, "bfloat16")["passed"]
    assert not compare(ref + 1, ref, "float32")["passed"]
    poisoned = ref.clone()
    poisoned[7] = float("nan")
    bad = compare(poisoned, ref, "float32")
    assert not bad["passed"] and math.isinf(bad["max_abs_error"])
