"""Read settings from environment variables, failing with one line that names the variable.

Settings import this module before Django is configured, so it must not import Django.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any

import dj_database_url


class EnvError(Exception):
    """A setting in the environment is missing or invalid. str() is the line shown to people."""

    def __init__(self, variable: str, problem: str):
        super().__init__(f"{variable}: {problem}")
        self.variable = variable


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str) -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise EnvError(name, f"expected true/false (1/0, yes/no), got {raw!r}")


def env_int(name: str, default: int, *, minimum: int | None = None, maximum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise EnvError(name, f"expected an integer, got {raw!r}") from None
    if minimum is not None and value < minimum:
        raise EnvError(name, f"must be at least {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise EnvError(name, f"must be at most {maximum}, got {value}")
    return value


def env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        return float(raw)
    except ValueError:
        raise EnvError(name, f"expected a number, got {raw!r}") from None


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_dir(name: str, default: Path | None) -> Path | None:
    """A folder (`~` expanded; it need not exist yet); unset or empty means `default`. A file is refused."""
    raw = os.environ.get(name)
    if not raw:
        return default
    path = Path(raw).expanduser()
    if path.exists() and not path.is_dir():
        raise EnvError(name, f"expected a folder, but {raw!r} is a file")
    return path


def env_database(name: str, default: str) -> dict[str, Any]:
    """Parse a database URL (postgres://..., sqlite:///...) into a Django DATABASES entry."""
    raw = os.environ.get(name) or default
    scheme = raw.split("://", 1)[0] if "://" in raw else ""
    if scheme not in {"sqlite", "postgres", "postgresql", "pgsql"}:
        raise EnvError(name, f"expected a sqlite:/// or postgres:// URL, got {raw!r}")
    try:
        config = dict(dj_database_url.parse(raw, conn_max_age=60, conn_health_checks=True))
    except Exception as exc:  # the library raises several types for bad URLs
        raise EnvError(name, f"cannot parse {raw!r} ({exc})") from None
    if config["ENGINE"] == "django.db.backends.sqlite3":
        config["CONN_MAX_AGE"] = 0
        # Wait for the writer lock instead of failing at once when web and worker write together.
        config["OPTIONS"] = {"timeout": 20, "transaction_mode": "IMMEDIATE"}
    return config


def env_redis_url(name: str, default: str) -> str:
    raw = os.environ.get(name) or default
    if not raw.startswith(("redis://", "rediss://", "unix://")):
        raise EnvError(name, f"expected a redis:// URL, got {raw!r}")
    return raw


def env_secret_key(name: str, *, debug: bool, key_file: Path) -> str:
    """The secret key: from the environment, or generated once and kept under var/ when DEBUG is on."""
    raw = os.environ.get(name)
    if raw:
        if len(raw) < 32:
            raise EnvError(name, "must be at least 32 characters")
        return raw
    if not debug:
        raise EnvError(name, "is required when DEBUG is off (set a long random string)")
    if key_file.exists():
        return key_file.read_text().strip()
    key_file.parent.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(50)
    key_file.write_text(key)
    key_file.chmod(0o600)
    return key
