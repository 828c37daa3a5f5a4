"""Where a worker keeps Inductor's and Triton's compiled kernels."""

from workers.compile_cache import configure_compile_caches


def test_the_caches_go_under_the_configured_folder_unless_the_operator_set_their_own(tmp_path, monkeypatch):
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "mine"))
    chosen = configure_compile_caches(tmp_path / "cache")
    assert chosen == {
        "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "cache" / "inductor"),
        "TRITON_CACHE_DIR": str(tmp_path / "mine"),
    }
    assert (tmp_path / "cache" / "inductor").is_dir() and (tmp_path / "mine").is_dir()


def test_an_empty_variable_counts_as_unset(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", "")
    monkeypatch.setenv("TRITON_CACHE_DIR", "")
    chosen = configure_compile_caches(tmp_path)
    assert chosen["TORCHINDUCTOR_CACHE_DIR"] == str(tmp_path / "inductor")
