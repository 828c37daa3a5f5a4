import json

import torch

from labs.experiments.correctness import compare
from labs.experiments.device import library_versions
from labs.experiments.result import Progress, Result


def test_result_is_strict_json_with_nan_and_tuples_made_plain(cpu):
    r = Result(
        "x", {"sizes": ((1, 2),)}, cpu.to_dict(), library_versions(), "method", rows=[{"a": float("nan"), "b": (1, 2)}]
    )
    r.add_check("c", compare(torch.ones(3), torch.ones(3), "float32"))
    d = r.to_dict()
    text = json.dumps(d, allow_nan=False)
    assert json.loads(text)["rows"][0] == {"a": None, "b": [1, 2]}
    assert d["checks"]["passed"] and set(d) >= {
        "experiment",
        "params",
        "device",
        "versions",
        "method",
        "rows",
        "notes",
        "checks",
        "artifacts",
    }


def test_progress_is_clamped_and_never_goes_back():
    seen = []
    p = Progress(lambda pct, phase: seen.append(pct))
    for pct in (10, 5, 250, -3):
        p(pct, "x")
    assert seen == [10, 10, 100, 100]
