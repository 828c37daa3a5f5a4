"""Parameters: parsing, bounds and the working set, refused naming the field (FusedParams as the example)."""

import pytest

from labs.experiments.catalog import FusedParams
from labs.experiments.params import ParamError, parse_sizes


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
