"""The labs' two settings (CPU threads, calibration cache) come in as arguments, not from the environment."""

import pytest
import torch

from labs.experiments import roofline
from labs.experiments.__main__ import main as cli
from labs.experiments.config import DEFAULT_CPU_THREADS, configured, current, default_cache_dir
from labs.experiments.runner import run_experiment


def test_a_run_uses_the_threads_it_is_given_and_leaves_the_default_in_place():
    threads_before = torch.get_num_threads()
    result = run_experiment("launch_overhead", {"lengths": [2], "hidden": 32}, device="cpu", cpu_threads=2)
    assert result["device"]["torch_threads"] == 2 and "2 torch threads" in result["method"]
    assert current().cpu_threads == DEFAULT_CPU_THREADS and torch.get_num_threads() == threads_before


def test_the_environment_is_not_read(monkeypatch):
    monkeypatch.setenv("LABS_CPU_THREADS", "3")
    monkeypatch.setenv("LABS_CACHE_DIR", "/nowhere")
    assert current().cpu_threads == DEFAULT_CPU_THREADS and roofline.cache_dir() == default_cache_dir()


def test_the_cache_folder_holds_inside_the_block_only(tmp_path):
    with configured(cache_dir=tmp_path / "roofs"):
        assert roofline.cache_dir() == tmp_path / "roofs"
        with configured(cpu_threads=4):  # None keeps what the outer block set
            assert roofline.cache_dir() == tmp_path / "roofs" and current().cpu_threads == 4
    assert roofline.cache_dir() == default_cache_dir()


def test_fewer_than_one_thread_is_refused():
    with pytest.raises(ValueError, match="at least 1"), configured(cpu_threads=0):
        pass


def test_cli_runs_with_the_threads_it_is_given(capsys):
    assert (
        cli(
            [
                "run",
                "launch_overhead",
                "--device",
                "cpu",
                "--param",
                "lengths=2",
                "--param",
                "hidden=32",
                "--cpu-threads",
                "2",
            ]
        )
        == 0
    )
    assert "2 torch threads" in capsys.readouterr().out
