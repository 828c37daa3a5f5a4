import json

import pytest
import torch

from labs.experiments import launch_overhead as lo
from labs.experiments.params import ParamError


def test_cpu_form_times_eager_per_op_and_says_graphs_need_a_gpu(cpu):
    result = lo.run(lo.LaunchParams.from_dict({"lengths": "3,30", "hidden": 64}, "cpu"), device=cpu).to_dict()
    json.dumps(result, allow_nan=False)
    assert [(r["length"], r["variant"]) for r in result["rows"]] == [(3, "eager"), (30, "eager")]
    row = result["rows"][1]
    assert row["us_per_kernel"] == pytest.approx(1e3 * row["median_ms"] / 30)
    assert result["checks"]["passed"] and any("CUDA Graphs need a GPU" in n for n in result["notes"])


def test_chain_matches_its_float64_reference():
    chain, reference, x = lo.make_chain(400, 64, torch.float32, "cpu")
    assert torch.allclose(chain(x).double(), reference(x.double()), atol=1e-5)


def test_chain_lengths_are_bounded():
    with pytest.raises(ParamError) as e:
        lo.LaunchParams.from_dict({"lengths": "10,5000"}).validate()
    assert e.value.field == "lengths"


@pytest.mark.gpu
def test_graph_replay_matches_eager_and_costs_less_per_kernel(cuda):
    result = lo.run(lo.LaunchParams.from_dict({"lengths": "200"}), device=cuda).to_dict()
    assert result["checks"]["passed"]
    rows = {r["variant"]: r for r in result["rows"]}
    assert rows["eager"]["kernels"] == 200
    assert rows["graph"]["us_per_kernel"] < rows["eager"]["us_per_kernel"]
