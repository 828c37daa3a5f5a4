"""The lab queue simulation against the M/M/c (Erlang C) closed form, and its table."""

import pytest

from labs.queue_sim import MIX, RUN_TIMES, erlang_c_wait, main, mean_service_s, simulate


def exponential(mean_s):
    return lambda rng: rng.expovariate(1 / mean_s)


@pytest.mark.parametrize(("gpus", "rate_per_min", "mean_s"), [(1, 3, 12), (4, 12, 15), (16, 80, 10)])
def test_with_exponential_run_times_it_matches_erlang_c(gpus, rate_per_min, mean_s):
    p_wait, wait = erlang_c_wait(gpus, rate_per_min / 60, mean_s)
    result = simulate(gpus, rate_per_min, hours=300, seed=7, service=exponential(mean_s))
    assert result.share_waiting == pytest.approx(p_wait, rel=0.05)
    assert result.mean_wait_s == pytest.approx(wait, rel=0.1)
    assert result.utilisation == pytest.approx(rate_per_min / 60 * mean_s / gpus, rel=0.03)
    assert result.mean_queue == pytest.approx(rate_per_min / 60 * result.mean_wait_s)  # Little's law


def test_erlang_c_knows_the_textbook_case_and_an_overloaded_fleet():
    # One server at 50% load: M/M/1 waits rho/(1-rho) service times, with probability rho.
    assert erlang_c_wait(1, 0.05, 10) == pytest.approx((0.5, 10.0))
    assert erlang_c_wait(2, 1.0, 2.0) == (1.0, float("inf"))


def test_more_gpus_at_the_same_rate_never_wait_longer():
    waits = [simulate(g, 40, hours=20, seed=3).mean_wait_s for g in (8, 10, 16)]
    assert waits[0] > waits[1] > waits[2] >= 0


def test_the_default_mix_uses_measured_times_only():
    assert set(MIX) <= set(RUN_TIMES)
    assert 5 < mean_service_s() < 15


def test_the_command_prints_a_table_for_each_rate(capsys):
    assert main(["--gpus", "4", "--rate", "10", "--rate", "20", "--hours", "2"]) == 0
    out = capsys.readouterr().out
    assert "4 GPUs serve at most" in out
    rows = [line for line in out.splitlines() if line.strip().startswith("4 ")]
    assert len(rows) == 2 and "10.0" in rows[0] and "20.0" in rows[1]
