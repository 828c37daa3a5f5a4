import pytest
import torch

from labs.experiments.timing import Timing, measure, timing_method


def test_timing_quantiles_from_samples():
    t = Timing.from_samples([5, 1, 2, 3, 4])
    assert (t.median_ms, t.q25_ms, t.q75_ms, t.min_ms, t.reps) == (3, 2, 4, 1, 5)
    assert t.spread_pct == pytest.approx(100 * 2 / 3)


def test_cpu_timer_reports_median_and_spread_over_enough_reps(cpu):
    x = torch.randn(1000)
    t = measure(lambda: x.sum(), cpu, warmup_ms=1, rep_ms=5)
    assert t.reps >= 10 and 0 < t.q25_ms <= t.median_ms <= t.q75_ms
    assert "perf_counter" in timing_method(cpu) and "median" in timing_method(cpu)
