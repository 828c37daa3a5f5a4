import json
import math

import pytest
import torch

from labs.experiments.common import (
    ParamError,
    Progress,
    Result,
    Timing,
    compare,
    copy_roof,
    library_versions,
    measure,
    parse_sizes,
    timing_method,
)
from labs.experiments.fused_vs_unfused import FusedParams


def test_param_error_names_the_field():
    err = ParamError("sizes", "too big")
    assert err.field == "sizes" and "sizes" in str(err) and isinstance(err, ValueError)


def test_sizes_parse_from_cli_text_and_from_json_lists():
    assert parse_sizes("sizes", "64x8192, 4096x8192") == ((64, 8192), (4096, 8192))
    assert parse_sizes("sizes", [[64, 8192], "8X16"]) == ((64, 8192), (8, 16))
    with pytest.raises(ParamError) as e:
        parse_sizes("sizes", "64by8192")
    assert e.value.field == "sizes"


@pytest.mark.parametrize("sizes", ["0x1024", "64x8", "64x20000", "131072x16384", ",".join(["8x64"] * 7)])
def test_out_of_range_sizes_are_rejected_naming_sizes(sizes):
    with pytest.raises(ParamError) as e:
        FusedParams.from_dict({"sizes": sizes}).validate()
    assert e.value.field == "sizes"


def test_unknown_dtype_is_rejected_naming_dtype():
    with pytest.raises(ParamError) as e:
        FusedParams.from_dict({"dtype": "int8"}).validate()
    assert e.value.field == "dtype" and "bfloat16" in e.value.message


def test_dtype_aliases_are_accepted():
    assert FusedParams.from_dict({"dtype": "bf16"}).dtype == "bfloat16"
    assert FusedParams.from_dict({"dtype": "torch.float16"}).dtype == "float16"


def test_unknown_parameter_is_rejected_naming_it():
    with pytest.raises(ParamError) as e:
        FusedParams.from_dict({"sizez": "64x64"})
    assert e.value.field == "sizez"


def test_working_set_larger_than_the_device_memory_is_rejected():
    params = FusedParams.from_dict({"sizes": "16384x8192"})
    params.validate(device_memory_bytes=80 * 2**30)
    with pytest.raises(ParamError) as e:
        params.validate(device_memory_bytes=2 * 2**30)
    assert e.value.field == "sizes" and "does not fit" in e.value.message


def test_defaults_are_smaller_on_a_cpu():
    gpu, cpu = FusedParams.defaults_for("cuda"), FusedParams.defaults_for("cpu")
    assert max(r * c for r, c in cpu.sizes) < max(r * c for r, c in gpu.sizes)
    assert FusedParams.from_dict({}, "cpu") == cpu


def test_timing_quantiles_from_samples():
    t = Timing.from_samples([5, 1, 2, 3, 4])
    assert (t.median_ms, t.q25_ms, t.q75_ms, t.min_ms, t.reps) == (3, 2, 4, 1, 5)
    assert t.spread_pct == pytest.approx(100 * 2 / 3)


def test_cpu_timer_reports_median_and_spread_over_enough_reps(cpu):
    x = torch.randn(1000)
    t = measure(lambda: x.sum(), cpu, warmup_ms=1, rep_ms=5)
    assert t.reps >= 10 and 0 < t.q25_ms <= t.median_ms <= t.q75_ms
    assert "perf_counter" in timing_method(cpu) and "median" in timing_method(cpu)


def test_copy_roof_is_measured_once_per_process(cpu):
    roof = copy_roof(cpu)
    assert roof is copy_roof(cpu) and roof.gbps > 0 and "read + written" in roof.method


def test_compare_passes_within_tolerance_and_never_passes_nan():
    ref = torch.randn(100)
    assert compare(ref.to(torch.bfloat16), ref, "bfloat16")["passed"]
    assert not compare(ref + 1, ref, "float32")["passed"]
    poisoned = ref.clone()
    poisoned[7] = float("nan")
    bad = compare(poisoned, ref, "float32")
    assert not bad["passed"] and math.isinf(bad["max_abs_error"])


def test_result_is_strict_json_with_nan_and_tuples_made_plain(cpu):
    r = Result("x", {"sizes": ((1, 2),)}, cpu.to_dict(), library_versions(), "method",
               rows=[{"a": float("nan"), "b": (1, 2)}])
    r.add_check("c", compare(torch.ones(3), torch.ones(3), "float32"))
    d = r.to_dict()
    text = json.dumps(d, allow_nan=False)
    assert json.loads(text)["rows"][0] == {"a": None, "b": [1, 2]}
    assert d["checks"]["passed"] and set(d) >= {"experiment", "params", "device", "versions", "method", "rows",
                                                "notes", "checks", "artifacts"}


def test_versions_name_python_and_torch():
    v = library_versions()
    assert v["torch"] == torch.__version__ and v["python"]


def test_progress_is_clamped_and_never_goes_back():
    seen = []
    p = Progress(lambda pct, phase: seen.append(pct))
    for pct in (10, 5, 250, -3):
        p(pct, "x")
    assert seen == [10, 10, 100, 100]
