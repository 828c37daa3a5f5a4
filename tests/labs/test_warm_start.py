"""The torch-only warm-start measurement: fresh processes with cold, then warm, compile caches."""

import json
import subprocess
import sys

from tests.conftest import REPO


def test_it_times_each_experiment_cold_from_cache_and_warmed_and_says_against_the_target(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "labs.experiments.warm_start", "--experiments", "flash_tiling_trace"]
        + ["--cache-root", str(tmp_path / "caches"), "--json", str(tmp_path / "report.json")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "device: CPU" in out.stdout and "versions: python" in out.stdout
    (row,) = json.loads((tmp_path / "report.json").read_text())["rows"]
    assert row["experiment"] == "flash_tiling_trace"
    assert all(row[k] > 0 for k in ("cold_s", "cache_s", "warm_up_s", "warmed_s", "cold_process_ready_s"))
    line = next(line for line in out.stdout.splitlines() if line.startswith("flash_tiling_trace"))
    assert line.rstrip().endswith(("yes", "NO"))
    # Each experiment's fresh processes had cache folders of their own; the warmed process all of them together.
    assert (tmp_path / "caches" / "flash_tiling_trace" / "inductor").is_dir()
    assert (tmp_path / "caches" / "shared" / "triton").is_dir()


def test_an_unknown_experiment_is_refused():
    out = subprocess.run(
        [sys.executable, "-m", "labs.experiments.warm_start", "--experiments", "nope"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 2 and "unknown experiments: nope" in out.stderr
