"""The web process lists the labs, shows their parameters and validates requests without torch or triton.

Checked in a fresh interpreter: in this one, other tests have long since imported torch.
"""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# Experiment id -> (field, value outside its bounds).
OUT_OF_BOUNDS = {
    "fused_vs_unfused": ("sizes", "0x1024"),
    "launch_overhead": ("hidden", 8),
    "attention": ("heads", 0),
    "flash_tiling_trace": ("seq_len", 4096),
    "roofline": ("matmul_size", 1),
}

WEB_PROCESS = textwrap.dedent("""
    import json
    import sys

    from labs.experiments.catalog import CATALOG, catalog, get_experiment, validate_params
    from labs.experiments.params import ParamError

    out_of_bounds = json.loads(sys.argv[1])
    report = {"catalog": {kind: catalog(kind) for kind in ("cuda", "cpu")}, "describe": {}, "defaults": {},
              "errors": {}}
    for exp_id in CATALOG:
        report["describe"][exp_id] = get_experiment(exp_id).describe("cpu")
        for kind in ("cuda", "cpu"):
            parsed = validate_params(exp_id, {}, device_kind=kind, device_memory_bytes=80 * 2**30)
            report["defaults"][f"{exp_id} {kind}"] = parsed.to_dict()
        field, value = out_of_bounds[exp_id]
        try:
            validate_params(exp_id, {field: value}, device_kind="cuda")
        except ParamError as exc:
            report["errors"][exp_id] = {"field": exc.field, "message": exc.message}
    report["heavy_modules"] = sorted(m for m in sys.modules if m in ("torch", "triton")
                                     or m.startswith(("torch.", "triton.")))
    print(json.dumps(report, allow_nan=False))
""")


@pytest.fixture(scope="module")
def web_report() -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", WEB_PROCESS, json.dumps(OUT_OF_BOUNDS)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_catalog_and_validation_import_neither_torch_nor_triton(web_report):
    assert web_report["heavy_modules"] == []


def test_defaults_validate_and_out_of_bounds_values_are_refused_naming_the_field(web_report):
    assert set(web_report["defaults"]) == {f"{e} {k}" for e in OUT_OF_BOUNDS for k in ("cuda", "cpu")}
    assert web_report["defaults"]["fused_vs_unfused cpu"]["dtype"] == "float32"
    assert {e: error["field"] for e, error in web_report["errors"].items()} == {
        e: field for e, (field, _) in OUT_OF_BOUNDS.items()
    }
    assert "below the minimum" in web_report["errors"]["launch_overhead"]["message"]


def test_the_web_process_shows_the_same_schemas_as_a_worker(web_report):
    """A worker has imported the experiment modules (attention's variant registry among them)."""
    pytest.importorskip("torch")
    from labs.experiments.catalog import BUILTIN_ATTENTION_VARIANTS, CATALOG, catalog

    for experiment in CATALOG.values():
        assert experiment.columns  # imports the experiment module
    from labs.experiments import attention

    assert tuple(attention.VARIANTS) == BUILTIN_ATTENTION_VARIANTS
    assert {kind: catalog(kind) for kind in ("cuda", "cpu")} == web_report["catalog"]
