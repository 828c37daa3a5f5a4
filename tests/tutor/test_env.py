import re
import subprocess
import sys

import pytest

from tests.conftest import REPO
from tutor.env import EnvError, env_bool, env_database, env_dir, env_int, env_redis_url, env_secret_key


def test_env_bool_accepts_common_spellings(monkeypatch):
    monkeypatch.setenv("X_FLAG", "Yes")
    assert env_bool("X_FLAG", False) is True
    monkeypatch.setenv("X_FLAG", "0")
    assert env_bool("X_FLAG", True) is False


def test_env_bool_rejects_garbage_naming_the_variable(monkeypatch):
    monkeypatch.setenv("X_FLAG", "maybe")
    with pytest.raises(EnvError, match="^X_FLAG: expected true/false"):
        env_bool("X_FLAG", False)


def test_env_int_enforces_bounds(monkeypatch):
    monkeypatch.setenv("X_PORT", "70000")
    with pytest.raises(EnvError, match="X_PORT: must be at most 65535"):
        env_int("X_PORT", 1, minimum=1, maximum=65535)
    monkeypatch.setenv("X_PORT", "abc")
    with pytest.raises(EnvError, match="X_PORT: expected an integer"):
        env_int("X_PORT", 1)


def test_database_url_defaults_to_sqlite_and_parses_postgres(monkeypatch):
    monkeypatch.delenv("DATABASE_URL", raising=False)
    assert env_database("DATABASE_URL", "sqlite:////tmp/x.sqlite3")["ENGINE"].endswith("sqlite3")
    monkeypatch.setenv("DATABASE_URL", "postgres://u:p@db:5433/tw")
    cfg = env_database("DATABASE_URL", "sqlite:////tmp/x.sqlite3")
    assert (cfg["ENGINE"], cfg["HOST"], cfg["PORT"], cfg["NAME"]) == ("django.db.backends.postgresql", "db", 5433, "tw")


def test_database_url_with_unknown_scheme_is_refused(monkeypatch):
    monkeypatch.setenv("DATABASE_URL", "mysql://root@localhost/x")
    with pytest.raises(EnvError, match="DATABASE_URL"):
        env_database("DATABASE_URL", "sqlite:////tmp/x.sqlite3")


def test_redis_url_must_be_a_redis_url(monkeypatch):
    monkeypatch.setenv("REDIS_URL", "http://localhost:6379")
    with pytest.raises(EnvError, match="REDIS_URL: expected a redis:// URL"):
        env_redis_url("REDIS_URL", "redis://127.0.0.1:6390/0")


def test_secret_key_is_generated_once_and_kept(tmp_path, monkeypatch):
    monkeypatch.delenv("SECRET_KEY", raising=False)
    key_file = tmp_path / "var" / "secret_key"
    first = env_secret_key("SECRET_KEY", debug=True, key_file=key_file)
    assert len(first) >= 50
    assert env_secret_key("SECRET_KEY", debug=True, key_file=key_file) == first


def test_secret_key_is_required_when_debug_is_off(tmp_path, monkeypatch):
    monkeypatch.delenv("SECRET_KEY", raising=False)
    with pytest.raises(EnvError, match="SECRET_KEY: is required when DEBUG is off"):
        env_secret_key("SECRET_KEY", debug=False, key_file=tmp_path / "k")


def _manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    import os

    full_env = {k: v for k, v in os.environ.items() if k not in {"SECRET_KEY", "DEBUG"}}
    full_env.update(env)
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=REPO, env=full_env, capture_output=True, text=True, timeout=60
    )


def test_bad_setting_stops_startup_with_one_line_naming_it():
    result = _manage("check", DEBUG="false")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert lines == [
        "tilewise: configuration error: SECRET_KEY: is required when DEBUG is off (set a long random string)"
    ]


def test_invalid_boolean_stops_startup_naming_the_variable():
    result = _manage("check", DEBUG="perhaps")
    assert result.returncode == 2
    assert "DEBUG: expected true/false" in result.stderr
    assert "Traceback" not in result.stderr


def test_env_dir_expands_home_and_falls_back_when_unset_or_empty(tmp_path, monkeypatch):
    monkeypatch.delenv("X_DIR", raising=False)
    assert env_dir("X_DIR", None) is None
    monkeypatch.setenv("X_DIR", "")
    assert env_dir("X_DIR", tmp_path) == tmp_path
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("X_DIR", "~/not-yet-made")
    assert env_dir("X_DIR", None) == tmp_path / "not-yet-made"


def test_env_dir_refuses_a_file_naming_the_variable(tmp_path, monkeypatch):
    (tmp_path / "f").write_text("x")
    monkeypatch.setenv("X_DIR", str(tmp_path / "f"))
    with pytest.raises(EnvError, match="^X_DIR: expected a folder"):
        env_dir("X_DIR", None)


@pytest.mark.parametrize(
    "value, problem", [("0", "must be at least 1, got 0"), ("two", "expected an integer, got 'two'")]
)
def test_bad_labs_cpu_threads_stops_startup_with_one_line_naming_it(value, problem):
    result = _manage("check", LABS_CPU_THREADS=value)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [f"tilewise: configuration error: LABS_CPU_THREADS: {problem}"]


def test_labs_cache_dir_that_is_a_file_stops_startup_naming_it(tmp_path):
    (tmp_path / "cache").write_text("not a folder")
    result = _manage("check", LABS_CACHE_DIR=str(tmp_path / "cache"))
    assert result.returncode == 2
    assert "LABS_CACHE_DIR: expected a folder" in result.stderr and "Traceback" not in result.stderr


STRONG_KEY = "k3y-" + "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMN"


@pytest.mark.parametrize(
    "key, problem",
    [
        ("a" * 32, "has 32 characters, needs at least 50"),
        ("a" * 60, "has 1 distinct characters, needs at least 5"),
        ("abcd" * 20, "has 4 distinct characters, needs at least 5"),
        ("django-insecure-" + STRONG_KEY, "starts with 'django-insecure-'"),
    ],
)
def test_weak_secret_keys_are_refused_whatever_debug_says(tmp_path, monkeypatch, key, problem):
    monkeypatch.setenv("SECRET_KEY", key)
    for debug in (True, False):
        with pytest.raises(EnvError, match=f"^SECRET_KEY: too weak: it {re.escape(problem)}"):
            env_secret_key("SECRET_KEY", debug=debug, key_file=tmp_path / "k")


def test_a_strong_secret_key_is_taken(tmp_path, monkeypatch):
    monkeypatch.setenv("SECRET_KEY", STRONG_KEY)
    assert env_secret_key("SECRET_KEY", debug=False, key_file=tmp_path / "k") == STRONG_KEY


def test_a_weak_key_left_in_the_key_file_is_refused_naming_the_file(tmp_path, monkeypatch):
    monkeypatch.delenv("SECRET_KEY", raising=False)
    (tmp_path / "secret_key").write_text("x" * 32)
    with pytest.raises(EnvError, match="SECRET_KEY: the key in .*secret_key is too weak"):
        env_secret_key("SECRET_KEY", debug=True, key_file=tmp_path / "secret_key")


def test_a_key_of_32_identical_characters_stops_startup_with_one_line():
    result = _manage("check", SECRET_KEY="x" * 32)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(
        "tilewise: configuration error: SECRET_KEY: too weak: it has 32 characters, needs at least 50"
    )
    assert "x" * 32 not in result.stderr  # the refused key is not echoed


@pytest.mark.parametrize("value", ["0", "soon"])
def test_bad_api_token_ttl_stops_startup_naming_it(value):
    result = _manage("check", API_TOKEN_TTL_DAYS=value)
    assert result.returncode == 2
    assert result.stderr.startswith("tilewise: configuration error: API_TOKEN_TTL_DAYS:")
